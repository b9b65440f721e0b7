"""Where the real KiCad fixtures live: tests/fixtures/kicad."""
from __future__ import annotations

from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
FIXTURES = REPO_ROOT / "tests" / "fixtures"
KICAD = FIXTURES / "kicad"


def fixture_project(relative: str) -> Path:
    path = KICAD / relative
    assert path.exists(), f"missing fixture {path}"
    return path

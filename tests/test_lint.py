"""Lint and types: ruff and mypy on the service and the checker (app, workers,
checker, tools), configured in pyproject.toml, with no finding. bin/test runs
this file with the rest, so .ci/run does. The tools come with the dev extras;
where they are not installed the test says so and fails."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ["app", "workers", "checker", "tools"]
#: ruff also reads the code host stand-in and the contracts loader; mypy does not yet.
LINTED = [*PACKAGES, "emulator", "contracts"]


def run(module: str, *args: str) -> subprocess.CompletedProcess:
    done = subprocess.run([sys.executable, "-m", module, *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=900)
    if "No module named" in done.stderr:
        pytest.fail(f"{module} is not installed: pip install -e .[dev]")
    return done


def test_ruff_finds_nothing():
    done = run("ruff", "check", "--no-cache", *LINTED)
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-2000:]


def test_mypy_finds_nothing():
    done = run("mypy", *PACKAGES)
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-2000:]

"""Fixtures for the checker tests."""
from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from checker_fixtures import fixture_project

# bin/check validates its result against the run-result contract only when the result
# leaves the machine; under test, every result it writes is validated.
os.environ.setdefault("BOARDREADY_CHECK_CONTRACT", "1")


@pytest.fixture
def copy_project(tmp_path):
    """Copy a fixture project into tmp_path so a test can break it."""

    def copy(relative: str, name: str | None = None) -> Path:
        target = tmp_path / (name or Path(relative).name)
        shutil.copytree(fixture_project(relative), target,
                        ignore=shutil.ignore_patterns("*.step", "*.wrl", "*.STEP", "3d*"))
        return target

    return copy

"""Fixtures every test suite shares."""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import FIXTURES


@pytest.fixture(scope="session")
def fixtures_dir() -> Path:
    assert FIXTURES.is_dir(), f"fixtures not found at {FIXTURES}"
    return FIXTURES

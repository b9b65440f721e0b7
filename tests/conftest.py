"""Fixtures every test layer shares, and the database fixtures
(tests/helpers/database_fixtures.py) wherever the service's dependencies are
installed: the checker's tests also run in a virtual environment holding the
checker alone (tests/checker/test_distribution.py), where they are not."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from tests.helpers.paths import FIXTURES


def pytest_configure(config):
    if importlib.util.find_spec("psycopg") is not None:
        config.pluginmanager.import_plugin("tests.helpers.database_fixtures")


@pytest.fixture(scope="session")
def fixtures_dir() -> Path:
    assert FIXTURES.is_dir(), f"fixtures not found at {FIXTURES}"
    return FIXTURES

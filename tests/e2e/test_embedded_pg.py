"""The embedded PostgreSQL refuses an unusable data directory with a clear message."""
from __future__ import annotations

import os
import subprocess

import pytest

from app import embedded_pg
from tests.helpers.paths import REPO_ROOT


def test_a_file_is_not_a_data_directory(tmp_path):
    path = tmp_path / "not-a-dir"
    path.write_text("x")
    with pytest.raises(embedded_pg.DataDirectoryUnusable, match="exists and is not a directory"):
        embedded_pg.start(path)


def test_an_uncreatable_data_directory(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(embedded_pg.DataDirectoryUnusable, match="cannot be created"):
        embedded_pg.start(blocker / "below-a-file")


def test_bin_migrate_exits_with_the_message(tmp_path):
    path = tmp_path / "data"
    path.write_text("x")
    env = {k: v for k, v in os.environ.items() if k != "SERVICE_DATABASE_URL"}
    env["SERVICE_DATA_DIR"] = str(path)
    done = subprocess.run([str(REPO_ROOT / "bin" / "migrate")], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert f"error: SERVICE_DATA_DIR {str(path)!r} exists and is not a directory" in done.stderr

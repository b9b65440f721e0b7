"""The operator tools leave a production install alone: bin/psql, bin/token,
bin/migrate, bin/serve, bin/worker and bin/register-app install nothing into
the service's venv (only bin/test and the development tools bring the dev
extras), and bin/psql and bin/token neither create a database nor migrate
one (docs/deploy.md, "Operator tools")."""
from __future__ import annotations

import os
import shutil
import subprocess
import uuid
from pathlib import Path

import psycopg
import pytest

ROOT = Path(__file__).resolve().parents[2]
OPERATOR_TOOLS = ["psql", "token", "migrate", "serve", "worker", "register-app"]


def _install_copy(tmp_path: Path) -> Path:
    """bin/ and pyproject.toml of this checkout in a folder of its own, whose
    .venv/bin/python records how it was called and installs nothing."""
    root = tmp_path / "boardready"
    shutil.copytree(ROOT / "bin", root / "bin")
    shutil.copy(ROOT / "pyproject.toml", root / "pyproject.toml")
    (root / ".venv" / "bin").mkdir(parents=True)
    python = root / ".venv" / "bin" / "python"
    python.write_text(f'#!/bin/sh\necho "$*" >> {tmp_path}/calls\n')
    python.chmod(0o755)
    return root


@pytest.mark.parametrize("tool", OPERATOR_TOOLS)
def test_an_operator_tool_runs_the_installed_venv_as_it_is(tmp_path, tool):
    root = _install_copy(tmp_path)
    done = subprocess.run([str(root / "bin" / tool)], capture_output=True, text=True, timeout=60,
                          env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)})
    assert done.returncode == 0, done.stderr
    calls = (tmp_path / "calls").read_text().splitlines()
    assert len(calls) == 1 and calls[0].startswith("-m ") and "pip" not in calls[0]
    assert not (root / ".venv" / ".boardready-stamp").exists() and "bootstrapping" not in done.stderr


def test_an_install_without_a_venv_uses_the_installed_package_or_says_how_to_install(tmp_path):
    root = _install_copy(tmp_path)
    shutil.rmtree(root / ".venv")
    done = subprocess.run([str(root / "bin" / "psql")], capture_output=True, text=True, timeout=60,
                          env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "PYTHON_BIN": "/usr/bin/python3"})
    assert done.returncode == 2 and "boardready is not installed" in done.stderr
    assert not (root / ".venv").exists()


@pytest.mark.parametrize("tool", ["psql", "token"])
def test_psql_and_token_refuse_without_a_configured_database(tmp_path, tool):
    argv = [str(ROOT / "bin" / tool)] + (["list", "--repository-id", "1"] if tool == "token" else ["-c", "SELECT 1"])
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SERVICE_", "PG"))}
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120,
                          env={**env, "SERVICE_DATA_DIR": str(tmp_path / "data")})
    assert done.returncode == 2 and "needs SERVICE_DATABASE_URL" in done.stderr, done.stderr
    assert not (tmp_path / "data" / "pg").exists()          # no cluster was started under the install


def test_token_never_migrates(pg_server):
    name = f"boardready_unmigrated_{uuid.uuid4().hex[:8]}"
    janitor = pg_server.janitor(name)
    janitor.init()
    try:
        url = pg_server.url(name)
        done = subprocess.run([str(ROOT / "bin" / "token"), "list", "--repository-id", "1"],
                              capture_output=True, text=True, timeout=120,
                              env={**os.environ, "SERVICE_DATABASE_URL": url})
        assert done.returncode == 1 and "not migrated" in done.stderr, done.stderr
        with psycopg.connect(url) as conn:
            tables = conn.execute("SELECT count(*) FROM pg_tables WHERE schemaname NOT IN "
                                  "('pg_catalog', 'information_schema')").fetchone()[0]
        assert tables == 0
    finally:
        janitor.drop()

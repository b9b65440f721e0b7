"""bin/load for real: a short `representative` run on its own PostgreSQL 16
(the CI's load test: small counts, limits set out of reach so that only
correctness decides, never the machine's speed), and its refusals of a server
that is not PostgreSQL 16 and of a database that already holds service data."""
from __future__ import annotations

import json
import os
import stat
import subprocess

import psycopg
import pytest
from psycopg.types.json import Jsonb

from app import migrations, sql_api
from tests.helpers.paths import REPO_ROOT
from tools.disposable_pg import DisposableCluster, embedded_bindir, server_major

LOAD = str(REPO_ROOT / "bin" / "load")
CONFIRMED = {"SERVICE_LOAD_CONFIRMATION": "isolated-disposable-database"}
#: No timing decides the test: every limit out of reach.
UNBOUNDED = ["--intake-p95-ms", "600000", "--lifecycle-p95-ms", "600000", "--dashboard-p95-ms", "600000",
             "--min-throughput", "0.1", "--recovery-convergence-ms", "600000"]


def load_env(**extra) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SERVICE_LOAD_", "SERVICE_DATABASE_URL"))}
    return {**env, **CONFIRMED, **extra}


def test_a_short_representative_run_passes_and_reports_aggregates_only(tmp_path):
    report = tmp_path / "load.json"
    report.write_text("{}")
    report.chmod(0o644)  # an older, wider file of that name: the report must not stay readable by others
    done = subprocess.run([LOAD, "--unique-deliveries", "20", "--duplicate-deliveries", "5", "--repositories", "2",
                           "--runs-per-repository", "3", "--concurrency", "4", "--report", str(report), *UNBOUNDED],
                          env=load_env(), capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert stat.S_IMODE(report.stat().st_mode) == 0o600
    document = json.loads(report.read_text())
    assert {"profile", "passed", "phases", "audit"} <= set(document)
    assert document["profile"] == "representative" and document["passed"] is True
    assert [p["name"] for p in document["phases"]] == ["intake", "lifecycle", "release_runs", "dashboard"]
    assert document["audit"]["passed"] and document["audit"]["audits"] == 4
    intake, lifecycle, runs, dashboard = document["phases"]
    assert intake["operations"] == 25 and intake["counts"]["statuses"] == {"200": 5, "202": 20}
    assert lifecycle["operations"] == 20
    assert runs["operations"] == 6 and runs["counts"]["runs_by_status"] == {"completed": 6}
    checks = runs["audit"]["checks"]
    assert checks["one_check_run_per_head"]["check_runs"] == 6
    assert checks["at_most_one_comment_per_pull_request"]["comments"] == 6
    assert dashboard["operations"] == 20 and dashboard["counts"]["runs_listed"] > 0
    assert document["postgresql"].startswith("16.")
    # Aggregates only: no repository or account names, no addresses, no secrets.
    text = report.read_text()
    for word in ("load-org", "board-0", "127.0.0.1", "http://", "secret", "BEGIN", "sha256="):
        assert word not in text
    assert "PASSED" in done.stdout and f"report: {report}" in done.stdout


def test_a_server_that_is_not_postgresql_16_is_refused(db_url):
    if server_major(db_url) == 16:
        pytest.skip("the suite's own server is PostgreSQL 16")
    done = subprocess.run([LOAD], env=load_env(SERVICE_DATABASE_URL=db_url), capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 3, done.stderr[-2000:]
    assert "validates the service on PostgreSQL 16; this server is PostgreSQL" in done.stderr
    assert db_url not in done.stderr + done.stdout


def test_a_database_that_holds_service_data_is_refused():
    bindir = embedded_bindir(16)
    if bindir is None:
        pytest.skip("no PostgreSQL 16 in the embedded server wheel")
    with DisposableCluster(bindir) as cluster:
        url = cluster.create_database("used")
        migrations.migrate(url)
        with psycopg.connect(url, autocommit=True) as conn:
            sql_api.intake_accept_delivery(conn, provider="host", delivery_id="earlier", event="ping", action=None,
                                           installation_id=None, actions=Jsonb({"kind": "ping"}),
                                           payload_sha256="0" * 64, payload_bytes=2)
        done = subprocess.run([LOAD], env=load_env(SERVICE_DATABASE_URL=url), capture_output=True, text=True,
                              timeout=120)
    assert done.returncode == 3, done.stderr[-2000:]
    assert "already holds service data" in done.stderr

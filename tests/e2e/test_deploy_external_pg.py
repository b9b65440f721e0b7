"""docs/deploy.md, followed against the PostgreSQL on 127.0.0.1:5432 as an
external database: deploy/roles.sql makes a fresh database with a migration
role and an API role; the migration unit's command line migrates with the
first; the API and worker units' command lines serve with the second (which
may execute functions and write no table); the app is registered with
bin/register-app's flow; the demo repository's pull request goes through the
whole loop; the nightly backup's pg_dump restores into a database the API
role can read. Skipped when nothing answers on 127.0.0.1:5432.

The image is not built here (no container engine runs on the test machine),
but its entry point is checked to be the units' command lines, which are
bin/serve's and bin/worker's."""
from __future__ import annotations

import contextlib
import json
import os
import re
import shlex
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
import uuid
from pathlib import Path
from urllib.parse import urlencode

import httpx
import psycopg
import pytest

import emulator
from tools import demo_board, register_app

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
SUPERUSER_URL = os.environ.get("SERVICE_DEPLOY_TEST_SUPERUSER_URL", "postgresql://postgres@127.0.0.1:5432/postgres")
UNIT_PYTHON = "/opt/boardready/.venv/bin/python"
AUDIENCE = "boardready-deploy-test"
CONNECTION_LIMIT = 60


def _external_postgres() -> str | None:
    """Why the test cannot run, or None."""
    try:
        socket.create_connection(("127.0.0.1", 5432), timeout=1).close()
    except OSError:
        return "no PostgreSQL answers on 127.0.0.1:5432"
    if not shutil.which("psql") or not shutil.which("pg_dump") or not shutil.which("pg_restore"):
        return "psql, pg_dump and pg_restore are needed"
    try:
        with psycopg.connect(SUPERUSER_URL, connect_timeout=3) as conn:
            if not conn.execute("SELECT rolsuper FROM pg_roles WHERE rolname = current_user").fetchone()[0]:
                return "the PostgreSQL on 127.0.0.1:5432 does not let us in as a superuser"
    except psycopg.Error as exc:
        return f"cannot connect to {SUPERUSER_URL}: {type(exc).__name__}"
    return None


needs_external_postgres = pytest.mark.skipif(_external_postgres() is not None, reason=_external_postgres() or "")


def unit(name: str) -> dict[str, list[str]]:
    """The [Service] settings of a unit file: key -> values in order."""
    settings: dict[str, list[str]] = {}
    for line in (DEPLOY / name).read_text().splitlines():
        if "=" in line and not line.startswith(("#", "[")):
            key, _, value = line.partition("=")
            settings.setdefault(key.strip(), []).append(value.strip())
    return settings


def command_line(name: str) -> list[str]:
    """A unit's ExecStart, run with this checkout's interpreter instead of /opt/boardready's."""
    argv = shlex.split(unit(name)["ExecStart"][0])
    assert argv[0] == UNIT_PYTHON
    return [sys.executable, *argv[1:]]


def unit_environment(name: str, data_dir: Path) -> dict[str, str]:
    env = dict(value.split("=", 1) for value in unit(name).get("Environment", []))
    env["PYTHONPATH"] = str(ROOT)             # /opt/boardready there
    if "SERVICE_DATA_DIR" in env:
        env["SERVICE_DATA_DIR"] = str(data_dir)   # /var/lib/boardready there
    if "PROMETHEUS_MULTIPROC_DIR" in env:
        # The unit's RuntimeDirectory= (/run/boardready/metrics), shared by the API and the workers.
        metrics = data_dir / "run-metrics"
        metrics.mkdir(mode=0o700, exist_ok=True)
        env["PROMETHEUS_MULTIPROC_DIR"] = str(metrics)
    return env


def _url(role: str, password: str, database: str) -> str:
    return f"postgresql://{role}:{password}@127.0.0.1:5432/{database}"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait(predicate, seconds: float, what: str, log: Path | None = None):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.25)
    tail = log.read_text()[-3000:] if log and log.exists() else ""
    pytest.fail(f"waited {seconds:.0f} s for {what}\n{tail}")


def test_the_image_runs_the_units_command_lines_which_are_bin_serves_and_bin_workers():
    text = (ROOT / "Containerfile").read_text()
    entry = json.loads(re.search(r"^ENTRYPOINT (\[.*\])$", text, re.MULTILINE).group(1))
    default = json.loads(re.search(r"^CMD (\[.*\])$", text, re.MULTILINE).group(1))
    assert entry + default == shlex.split(unit("boardready-api.service")["ExecStart"][0])
    assert entry + ["workers"] == shlex.split(unit("boardready-worker.service")["ExecStart"][0])
    assert entry + ["app.migrate_cli"] == shlex.split(unit("boardready-migrate.service")["ExecStart"][0])
    assert re.search(r"^USER 10001", text, re.MULTILINE) and "HEALTHCHECK" in text
    # bin/serve, bin/worker and bin/migrate run the same modules.
    assert "-m app.serve" in (ROOT / "bin" / "serve").read_text()
    assert "-m workers" in (ROOT / "bin" / "worker").read_text()
    assert "-m app.migrate_cli" in (ROOT / "bin" / "migrate").read_text()


@pytest.mark.skipif(not shutil.which("systemd-analyze"), reason="systemd-analyze is not installed")
def test_the_units_are_valid_systemd_units(tmp_path):
    # verify checks ExecStart's binary exists: point the units at this interpreter.
    for name in ("boardready-migrate.service", "boardready-api.service", "boardready-worker.service",
                 "boardready-backup.service", "boardready-backup.timer"):
        text = (DEPLOY / name).read_text().replace(UNIT_PYTHON, sys.executable)
        (tmp_path / name).write_text(re.sub(r"^EnvironmentFile=", "EnvironmentFile=-", text, flags=re.MULTILINE))
    result = subprocess.run(["systemd-analyze", "verify", "--man=no", *sorted(map(str, tmp_path.iterdir()))],
                            capture_output=True, text=True)
    problems = [line for line in result.stderr.splitlines()
                if "boardready" in line and "User=" not in line and "Failed to" not in line]
    assert problems == [], result.stderr


@pytest.fixture
def deployment(tmp_path):
    """deploy/roles.sql run as the superuser with fresh names; dropped afterwards."""
    suffix = uuid.uuid4().hex[:8]
    names = {"database": f"br_deploy_{suffix}", "migrate_role": f"br_migrate_{suffix}",
             "app_role": f"br_app_{suffix}"}
    passwords = {"migrate_password": uuid.uuid4().hex, "app_password": uuid.uuid4().hex}
    variables = [f"-v{key}={value}" for key, value in names.items()] + \
                [f"-v{key}='{value}'" for key, value in passwords.items()] + \
                [f"-vapp_connection_limit={CONNECTION_LIMIT}", "-vON_ERROR_STOP=1"]
    created = subprocess.run(["psql", SUPERUSER_URL, "-q", *variables, "-f", str(DEPLOY / "roles.sql")],
                             capture_output=True, text=True)
    restored = f"{names['database']}_restored"
    try:
        assert created.returncode == 0, created.stderr
        yield {**names, **passwords, "restored": restored,
               "migrate_url": _url(names["migrate_role"], passwords["migrate_password"], names["database"]),
               "app_url": _url(names["app_role"], passwords["app_password"], names["database"])}
    finally:
        with psycopg.connect(SUPERUSER_URL, autocommit=True) as conn:
            for database in (restored, names["database"]):
                conn.execute(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)')
            for role in (names["app_role"], names["migrate_role"]):
                conn.execute(f'DROP ROLE IF EXISTS "{role}"')


def _register(host, public_url: str, env_file: Path) -> dict[str, str]:
    """bin/register-app's flow, the browser's part done by hand."""
    flow = register_app.ManifestFlow(public_url, env_file, web_url=host.url, api_url=host.url,
                                     org="acme-hw", name="boardready").start()
    try:
        page = urllib.request.urlopen(flow.url + "/").read().decode()
        from html import unescape
        action = unescape(re.search(r'<form method=post action="([^"]+)"', page).group(1))
        fields = {k: unescape(v) for k, v in re.findall(r'name=(\w+) value="([^"]*)"', page)}
        urllib.request.urlopen(urllib.request.Request(action, data=urlencode(fields).encode())).read()
        assert flow.done.wait(10) and flow.error is None, flow.error
    finally:
        flow.stop()
    return dict(line.split("=", 1) for line in env_file.read_text().splitlines() if line and line[0] != "#")


@needs_external_postgres
def test_a_deployment_on_an_external_postgresql(deployment, tmp_path):
    data_dir = tmp_path / "state"
    data_dir.mkdir(mode=0o700)

    # Migrate with the migration role, with the migration unit's command line.
    migrate_env = {**os.environ, **unit_environment("boardready-migrate.service", data_dir),
                   "SERVICE_DATABASE_URL": deployment["migrate_url"]}
    migrated = subprocess.run(command_line("boardready-migrate.service"), env=migrate_env, cwd=ROOT,
                              capture_output=True, text=True, timeout=300)
    assert migrated.returncode == 0, migrated.stderr
    assert "functions applied" in migrated.stdout

    # The API role: its connection limit, and no table it may write.
    with psycopg.connect(deployment["app_url"], autocommit=True) as conn:
        assert conn.execute("SELECT rolconnlimit FROM pg_roles WHERE rolname = current_user").fetchone()[0] \
            == CONNECTION_LIMIT
        writable = conn.execute(
            "SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE n.nspname IN ('boardready', 'ops', 'public') AND c.relkind IN ('r', 'p', 'v') "
            "AND (has_table_privilege(c.oid, 'INSERT') OR has_table_privilege(c.oid, 'UPDATE') "
            "OR has_table_privilege(c.oid, 'DELETE') OR has_table_privilege(c.oid, 'TRUNCATE'))").fetchall()
        assert writable == []
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("INSERT INTO boardready.accounts (id, login, type) VALUES (1, 'x', 'User')")
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("CREATE TABLE boardready.intruder (id int)")

    port = _free_port()
    base_url = f"http://127.0.0.1:{port}"
    api_log, worker_log = tmp_path / "api.log", tmp_path / "worker.log"
    with contextlib.ExitStack() as stack:
        host = stack.enter_context(emulator.start(
            runner_command=[str(ROOT / "bin" / "check"), "--runner"],
            runner_env={"SERVICE_URL": base_url, "SERVICE_OIDC_AUDIENCE": AUDIENCE}))
        # Register the app (bin/register-app): the code host now sends webhooks to the service.
        app_env = _register(host, base_url, tmp_path / "app.env")
        service_env = {
            **os.environ, **unit_environment("boardready-api.service", data_dir), **app_env,
            "SERVICE_DATABASE_URL": deployment["app_url"], "SERVICE_BIND": f"127.0.0.1:{port}",
            "SERVICE_OIDC_ISSUER": host.oidc_issuer, "SERVICE_OIDC_AUDIENCE": AUDIENCE,
            "SERVICE_WEB_CONCURRENCY": "2", "SERVICE_WEB_THREADS": "4",
        }
        processes = []

        def start(name: str, log: Path) -> subprocess.Popen:
            process = subprocess.Popen(command_line(name), env=service_env, cwd=ROOT,
                                       stdout=log.open("a"), stderr=subprocess.STDOUT)
            processes.append(process)
            return process

        def stop_all():
            for process in processes:
                if process.poll() is None:
                    process.terminate()
            for process in processes:
                try:
                    process.wait(timeout=45)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()

        stack.callback(stop_all)
        api = start("boardready-api.service", api_log)
        start("boardready-worker.service", worker_log)

        def ready():
            assert api.poll() is None, api_log.read_text()[-3000:]
            try:
                return httpx.get(base_url + "/api/health/ready", timeout=2).status_code == 200
            except httpx.HTTPError:
                return False

        _wait(ready, 90, "readiness of the API", api_log)

        # A second API on the same address: the port is in use, and it says so and exits.
        second_log = tmp_path / "second-api.log"
        second = subprocess.Popen(command_line("boardready-api.service"), env=service_env, cwd=ROOT,
                                  stdout=second_log.open("w"), stderr=subprocess.STDOUT)
        assert second.wait(timeout=120) != 0
        assert '"event":"serve.address_in_use"' in second_log.read_text().replace(" ", "")

        # A forged delivery: 401, logged as api.access_refused with the reason code.
        forged = httpx.post(base_url + "/api/host/webhook", content=b'{"zen": "x"}', headers={
            "Content-Type": "application/json", "X-GitHub-Event": "ping", "X-GitHub-Delivery": str(uuid.uuid4()),
            "X-Hub-Signature-256": "sha256=" + "0" * 64})
        assert (forged.status_code, forged.json()["code"]) == (401, "invalid_signature")

        # The demo repository, installed; its pull request goes through the whole loop.
        installation = host.create_installation("acme-hw", deliver=True)
        content = demo_board.write(tmp_path / "blinky-board")
        (content / ".github" / "workflows").mkdir(parents=True)
        shutil.copy(ROOT / "workflow" / "readiness-runner.yml", content / ".github" / "workflows")
        host.create_repository("acme-hw/blinky-board", installation_id=installation["id"],
                               content_dir=str(content), deliver=True)
        pull = host.open_pull_request("acme-hw/blinky-board", title="Rev B", deliver=True)
        completed = _wait(lambda: [c for c in host.check_runs("acme-hw/blinky-board")
                                   if c["head_sha"] == pull["head"]["sha"] and c["status"] == "completed"],
                          240, "the demo pull request's check run to complete", worker_log)
        assert completed[0]["conclusion"] in ("success", "neutral", "failure")
        with psycopg.connect(deployment["migrate_url"]) as conn:
            decided = conn.execute(
                "SELECT count(*) FROM boardready.release_runs r JOIN boardready.run_results s "
                "ON s.release_run_id = r.id WHERE r.head_sha = %s", (pull["head"]["sha"],)).fetchone()[0]
        assert decided >= 1
        used = _connections(deployment["app_role"])
        print(f"connections of the API role with one API (2 processes x 4 threads) and one worker: {used}")
        assert 0 < used <= CONNECTION_LIMIT

        # Troubleshooting (docs/deploy.md): a repository without the workflow file...
        host.create_repository("acme-hw/no-workflow", installation_id=installation["id"], workflows=[],
                               deliver=True)
        lacking = host.open_pull_request("acme-hw/no-workflow", title="Rev C", deliver=True)
        failed = _wait(lambda: [c for c in host.check_runs("acme-hw/no-workflow")
                                if c["head_sha"] == lacking["head"]["sha"] and c["status"] == "completed"],
                       120, "the check run of a repository without the workflow", worker_log)
        assert failed[0]["conclusion"] == "failure" and "readiness-runner.yml" in failed[0]["summary"]
        assert '"outcome":"workflow_missing"' in worker_log.read_text()
        # ...and a runner asking for an ID token of another audience.
        shutil.copytree(content, tmp_path / "other-audience")
        host.create_repository("acme-hw/other-audience", installation_id=installation["id"],
                               content_dir=str(tmp_path / "other-audience"), deliver=True)
        host.set_run_mode("acme-hw/other-audience", mode="execute",
                          runner_command=[str(ROOT / "bin" / "check"), "--runner"],
                          runner_env={"SERVICE_URL": base_url, "SERVICE_OIDC_AUDIENCE": "someone-else"})
        host.open_pull_request("acme-hw/other-audience", title="Rev D", deliver=True)
        _wait(lambda: '"code":"oidc_wrong_audience"' in api_log.read_text(), 120,
              "the refusal of an ID token for another audience", api_log)

    # Backup (the backup unit's pg_dump) and a restore into a new database.
    dump = tmp_path / "boardready.dump"
    backup = unit("boardready-backup.service")["ExecStart"][0]
    assert "pg_dump --format=custom --no-owner" in backup
    subprocess.run(["pg_dump", "--format=custom", "--no-owner", f"--dbname={deployment['migrate_url']}",
                    f"--file={dump}"], check=True, capture_output=True)
    with psycopg.connect(SUPERUSER_URL, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{deployment["restored"]}" OWNER "{deployment["migrate_role"]}" '
                     "TEMPLATE template0")
        conn.execute(f'REVOKE ALL ON DATABASE "{deployment["restored"]}" FROM PUBLIC')
        conn.execute(f'GRANT CONNECT ON DATABASE "{deployment["restored"]}" TO "{deployment["app_role"]}"')
    restored_migrate = _url(deployment["migrate_role"], deployment["migrate_password"], deployment["restored"])
    restore = subprocess.run(["pg_restore", "--no-owner", "--exit-on-error", f"--dbname={restored_migrate}",
                              str(dump)], capture_output=True, text=True)
    assert restore.returncode == 0, restore.stderr
    counts = ("SELECT (SELECT count(*) FROM boardready.release_runs), (SELECT count(*) FROM boardready.run_results),"
              " (SELECT count(*) FROM boardready.webhook_inbox)")
    with psycopg.connect(deployment["migrate_url"]) as original, psycopg.connect(restored_migrate) as copy:
        assert copy.execute(counts).fetchone() == original.execute(counts).fetchone()
    # The restored database needs no migration, and the API role reads it as before.
    again = subprocess.run(command_line("boardready-migrate.service"),
                           env={**migrate_env, "SERVICE_DATABASE_URL": restored_migrate}, cwd=ROOT,
                           capture_output=True, text=True, timeout=300)
    assert again.returncode == 0 and "migrations applied: none pending" in again.stdout, again.stderr
    restored_app = _url(deployment["app_role"], deployment["app_password"], deployment["restored"])
    with psycopg.connect(restored_app) as conn:
        conn.execute("SET ROLE boardready_api")
        assert conn.execute("SELECT count(*) FROM ops.release_runs").fetchone()[0] >= 1


def _connections(role: str) -> int:
    with psycopg.connect(SUPERUSER_URL) as conn:
        return conn.execute("SELECT count(*) FROM pg_stat_activity WHERE usename = %s", (role,)).fetchone()[0]

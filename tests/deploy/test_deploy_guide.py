"""docs/deploy.md as a test: its `sh` command blocks, extracted in order and
fed to one root shell (as an operator would paste them), on a scratch root
($PREFIX standing for /opt, /etc, /var/lib and /run) of this machine, with a
real unprivileged service user made by the guide's useradd, the PostgreSQL
on 127.0.0.1:5432 as the external database (the roles get the passwords the
guide generates and log in with them), the emulator as the code host, and
Debian's nginx in front (deploy/nginx.conf on a test certificate and high
ports: the guide's nginx block installs into /etc/nginx, which a test may not
touch). `systemctl` is tests/deploy/systemd_stand_in.py, which runs the units
the guide copied as systemd would; `apt-get` checks that the packages the
guide names are installed. Between the blocks the test does what the guide
leaves to a person: the browser's part of the registration, installing the
app and opening a pull request; it ends with that pull request's check run
completed through the proxy, the workers' code host counters on /metrics, the
backup restored, and the upgrade with --contract. A block that fails fails
the test: the guide must work as written."""
from __future__ import annotations

import os
import re
import shutil
import socket
import ssl
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid
from html import unescape
from pathlib import Path
from urllib.parse import urlencode

import httpx
import psycopg
import pytest

import emulator
from tests.deploy.test_proxy_configs import NGINX, nginx_site
from tools import demo_board

ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "docs" / "deploy.md"
SUPERUSER_URL = "postgresql://postgres@127.0.0.1:5432/postgres"
AUDIENCE = "boardready-guide-test"
SYSTEM_PYTHON = "/usr/bin/python3"


def _why_not() -> str | None:
    if os.geteuid() != 0:
        return "the guide runs as root (useradd, runuser, install -o)"
    for tool in ("useradd", "userdel", "runuser", "git", "openssl", "psql", "pg_dump", "pg_restore", "createdb"):
        if not shutil.which(tool):
            return f"{tool} is not installed"
    if not Path(NGINX).exists():
        return "nginx is not installed (apt-get install nginx-light)"
    if subprocess.run([SYSTEM_PYTHON, "-c", "import venv, ensurepip"], capture_output=True).returncode:
        return "python3-venv is not installed"
    try:
        with psycopg.connect(SUPERUSER_URL, connect_timeout=3) as conn:
            if not conn.execute("SELECT rolsuper FROM pg_roles WHERE rolname = current_user").fetchone()[0]:
                return "the PostgreSQL on 127.0.0.1:5432 does not let postgres in as a superuser"
    except psycopg.Error as exc:
        return f"no PostgreSQL to use on 127.0.0.1:5432 ({type(exc).__name__})"
    return None


def guide_blocks() -> list[str]:
    """The guide's `sh` blocks, in order (`text` blocks are shown, not run)."""
    return re.findall(r"^```sh\n(.*?)^```$", GUIDE.read_text(), flags=re.MULTILINE | re.DOTALL)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Shell:
    """One root bash fed the guide's blocks one at a time, as a person pastes them."""

    def __init__(self, env: dict[str, str], transcript: Path):
        self.transcript = transcript.open("a")
        self.process = subprocess.Popen(["bash", "--norc", "--noprofile"], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=self.transcript, text=True, env=env,
                                        cwd="/")
        self.run("set -euo pipefail")

    def run(self, block: str, on_line=None) -> list[str]:
        marker = f"__block_done_{uuid.uuid4().hex}"
        self.transcript.write(f"\n$ {block}\n")
        self.transcript.flush()
        self.process.stdin.write(block + f"\necho {marker}\n")
        self.process.stdin.flush()
        lines = []
        while True:
            line = self.process.stdout.readline()
            if not line:
                self.transcript.flush()
                raise AssertionError(f"the shell exited in this block (status {self.process.wait()}):\n{block}\n"
                                     + Path(self.transcript.name).read_text()[-4000:])
            if line.strip() == marker:
                return lines
            lines.append(line.rstrip("\n"))
            self.transcript.write(line)
            if on_line:
                on_line(line)

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.stdin.close()
            self.process.wait(timeout=60)
        self.transcript.close()


def _browser_registers(line: str) -> None:
    """The person's part of bin/register-app: open the page, press the button (the code host confirms)."""
    found = re.search(r"Open (http://127\.0\.0\.1:\d+)/", line)
    if not found:
        return
    page = urllib.request.urlopen(found.group(1) + "/", timeout=30).read().decode()
    action = unescape(re.search(r'<form method=post action="([^"]+)"', page).group(1))
    fields = {k: unescape(v) for k, v in re.findall(r'name=(\w+) value="([^"]*)"', page)}
    urllib.request.urlopen(urllib.request.Request(action, data=urlencode(fields).encode()), timeout=60).read()


def _wait(predicate, seconds: float, what: str, logs: list[Path]):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.5)
    tails = "\n".join(f"--- {log}\n{log.read_text()[-3000:]}" for log in logs if log.exists())
    raise AssertionError(f"timed out waiting for {what}\n{tails}")


@pytest.mark.skipif(_why_not() is not None, reason=_why_not() or "")
def test_the_deploy_guide_followed_to_the_letter(monkeypatch):
    suffix = uuid.uuid4().hex[:8]
    prefix = Path(tempfile.mkdtemp(prefix="boardready-guide-", dir="/var/tmp"))
    prefix.chmod(0o755)                       # the service user walks into $PREFIX/opt
    stand_in_state = prefix / "systemd-state"
    logs = [stand_in_state / f"boardready-{n}.service.log" for n in ("migrate", "api", "worker", "backup")]
    transcript = prefix / "transcript.log"
    https_port, http_port, api_port = _free_port(), _free_port(), _free_port()
    public_url = f"https://127.0.0.1:{https_port}"
    names = {"DB_NAME": f"brg_{suffix}", "MIGRATE_ROLE": f"brg_migrate_{suffix}", "APP_ROLE": f"brg_app_{suffix}",
             "SERVICE_USER": f"brg{suffix}"}
    nginx_dir = prefix / "nginx"
    nginx_dir.mkdir()
    proxy = None
    shell = None
    try:
        # The proxy in front, from deploy/nginx.conf; its test certificate is what the code host trusts.
        main = nginx_site(nginx_dir, https_port, http_port, api_port, ip_address="127.0.0.1")
        proxy = subprocess.Popen([NGINX, "-c", str(main), "-p", str(nginx_dir)], stderr=subprocess.DEVNULL)
        monkeypatch.setenv("SSL_CERT_FILE", str(nginx_dir / "fullchain.pem"))
        host = emulator.start(runner_command=[str(ROOT / "bin" / "check"), "--runner"],
                              runner_env={"SERVICE_URL": public_url, "SERVICE_OIDC_AUDIENCE": AUDIENCE,
                                          "SSL_CERT_FILE": str(nginx_dir / "fullchain.pem")})
        try:
            shim = prefix / "shim"
            shim.mkdir()
            (shim / "systemctl").write_text(f"#!/bin/sh\nexec {sys.executable} {Path(__file__).parent / 'systemd_stand_in.py'} \"$@\"\n")
            (shim / "apt-get").write_text('#!/bin/sh\n# the guide\'s packages must be there already\n'
                                          'shift; shift; exec dpkg -s "$@" >/dev/null\n')
            for tool in shim.iterdir():
                tool.chmod(0o755)
            units = prefix / "etc" / "systemd" / "system"
            for unit in ("boardready-api.service", "boardready-worker.service"):
                (units / f"{unit}.d").mkdir(parents=True)
                # What an operator's `systemctl edit` would add for this code host (the emulator).
                (units / f"{unit}.d" / "code-host.conf").write_text(
                    f"[Service]\nEnvironment=SERVICE_OIDC_ISSUER={host.oidc_issuer}\n"
                    "Environment=SERVICE_WEB_CONCURRENCY=2\nEnvironment=SERVICE_WEB_THREADS=4\n")
            env = {"PATH": f"{shim}:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
                   "HOME": "/root", "LANG": "C.UTF-8", "PREFIX": str(prefix), "PUBLIC_URL": public_url,
                   "ORG": "acme-hw", "DB_HOST": "127.0.0.1:5432", "DB_SSLMODE": "disable",
                   "PG_SUPERUSER_URL": SUPERUSER_URL, "REPO_URL": str(ROOT),
                   "RELEASE": subprocess.check_output(["git", "-C", str(ROOT), "rev-parse", "HEAD"], text=True).strip(),
                   "HOST_WEB_URL": host.url, "HOST_API_URL": host.url, "OIDC_AUDIENCE": AUDIENCE,
                   "API_PORT": str(api_port), "SYSTEMD_STAND_IN_STATE": str(stand_in_state),
                   "UNITS": str(units), **names}
            blocks = guide_blocks()
            assert len(blocks) >= 8, "the guide's sh blocks were not found"
            shell = Shell(env, transcript)
            ran = 0
            # Up to and including the units' start (section 4).
            while ran < len(blocks):
                block = blocks[ran]
                shell.run(block, on_line=_browser_registers if "register-app" in block else None)
                ran += 1
                if "systemctl enable --now" in block:
                    break
            etc = prefix / "etc" / "boardready"
            assert oct((etc / "app.env.private-key.pem").stat().st_mode & 0o777) == "0o640"
            assert oct((etc / "migrate.env").stat().st_mode & 0o777) == "0o600"

            trusted = ssl.create_default_context(cafile=str(nginx_dir / "fullchain.pem"))

            def ready():
                try:
                    return httpx.get(public_url + "/api/health/ready", timeout=3,
                                     verify=trusted).status_code == 200
                except httpx.HTTPError:
                    return False

            _wait(ready, 180, "readiness through the proxy", logs)

            # What the guide leaves to a person: install the app, add the workflow, open a pull request.
            installation = host.create_installation("acme-hw", deliver=True)
            content = demo_board.write(prefix / "blinky-board")
            (content / ".github" / "workflows").mkdir(parents=True)
            shutil.copy(ROOT / "workflow" / "readiness-runner.yml", content / ".github" / "workflows")
            host.create_repository("acme-hw/blinky-board", installation_id=installation["id"],
                                   content_dir=str(content), deliver=True)
            pull = host.open_pull_request("acme-hw/blinky-board", title="Rev B", deliver=True)
            completed = _wait(lambda: [c for c in host.check_runs("acme-hw/blinky-board")
                                       if c["head_sha"] == pull["head"]["sha"] and c["status"] == "completed"],
                              300, "the pull request's check run to complete", logs)
            assert completed[0]["conclusion"] in ("success", "neutral", "failure")

            # The workers' code host calls reach /metrics (the API and worker units share the folder).
            settings = dict(line.split("=", 1) for line in (etc / "boardready.env").read_text().splitlines()
                            if "=" in line and not line.startswith("#"))
            metrics = httpx.get(public_url + "/metrics", verify=trusted, timeout=10,
                                headers={"Authorization": f"Bearer {settings['SERVICE_OPERATOR_API_TOKEN']}"})
            assert metrics.status_code == 200, metrics.text[:500]
            assert re.search(r"^boardready_host_requests_total\{", metrics.text, re.MULTILINE), metrics.text[:2000]

            # The rest: the operator tool, backup and restore, the upgrade and its contract.
            outputs = []
            while ran < len(blocks):
                outputs.extend(shell.run(blocks[ran]))
                ran += 1
            assert any("migrations applied: none pending" in line for line in outputs), outputs
            assert any(line.startswith("contract migrations applied:") for line in outputs), outputs
            with psycopg.connect(SUPERUSER_URL) as conn:
                counts = []
                for database in (names["DB_NAME"], names["DB_NAME"] + "_restored"):
                    with psycopg.connect(f"postgresql://postgres@127.0.0.1:5432/{database}") as db:
                        counts.append(db.execute("SELECT count(*) FROM boardready.release_runs").fetchone()[0])
            assert counts[0] >= 1 and counts[1] >= 1
            _wait(ready, 180, "readiness after the upgrade", logs)
        finally:
            if shell:
                shell.close()
            for pid_file in stand_in_state.glob("*.pid") if stand_in_state.exists() else []:
                try:
                    os.killpg(int(pid_file.read_text()), 15)
                except OSError:
                    pass
            host.stop()
    finally:
        if proxy and proxy.poll() is None:
            proxy.terminate()
            proxy.wait(timeout=30)
        time.sleep(1)
        with psycopg.connect(SUPERUSER_URL, autocommit=True) as conn:
            for database in (names["DB_NAME"] + "_restored", names["DB_NAME"]):
                conn.execute(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)')
            for role in (names["APP_ROLE"], names["MIGRATE_ROLE"]):
                conn.execute(f'DROP ROLE IF EXISTS "{role}"')
        subprocess.run(["userdel", names["SERVICE_USER"]], capture_output=True)
        if os.environ.get("BOARDREADY_KEEP_GUIDE_ROOT"):
            print(f"scratch root kept: {prefix}")
        else:
            shutil.rmtree(prefix, ignore_errors=True)

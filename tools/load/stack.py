"""What bin/load runs against: PostgreSQL 16, the code host emulator, the API and the workers.

The database is a PostgreSQL 16 cluster of our own from the embedded server
wheel (it ships 16 beside 18; removed afterwards), or the one
SERVICE_DATABASE_URL names, which must be PostgreSQL 16 and hold no service
data yet: the audit reads the whole database. The service runs as `bin/serve`
runs it (`app.serve.Service`: gunicorn processes behind the event-loop front),
its workers as separate `python -m workers` processes that the profiles kill
and restart. The emulator is the code host, set up as `bin/demo` sets it up
(`tools.demo.host_environment`), with one installation and its repositories;
it runs in a process of its own (tools/load/host.py).

The timing knobs of the service are shortened for the run, unless the
environment sets them: a lease of 2 s (a killed worker's items come back
within the 5 s convergence limit, not after the default minute: a lease is
all that frees them), code host calls time out after 600 ms (an item makes at
most three calls, so it ends well inside its lease and a slow host never has
two workers hold one item) and workers poll every 100 ms (an expired lease is
claimed within that).
"""
from __future__ import annotations

import os
import secrets
import signal
import socket
import subprocess
import sys
import time
import warnings
from pathlib import Path

import httpx
import psycopg

from app import config as config_module
from app import migrations
from app.serve import Service, stop_processes
from app.web.session_auth import SESSION_COOKIE
from tools.demo import host_environment, point_webhooks
from tools.disposable_pg import DisposableCluster, embedded_bindir
from tools.load.host import EmulatorProcess
from tools.load.settings import ENVELOPE_POOL_MAX, LoadSettings, Refusal
from tools.workflow_file import run_name_template

REQUIRED_MAJOR = 16
OIDC_AUDIENCE = "boardready-load"
ORGANIZATION = "load-org"
VIEWER = "load-viewer"
#: The service settings bin/load shortens (see the module's docstring); the environment wins.
TIMING = {"SERVICE_JOB_LEASE_SECONDS": "2", "SERVICE_HOST_TIMEOUT_MS": "600", "SERVICE_WORKER_POLL_MS": "100"}
#: Our own cluster: durable commits as in production (the disposable cluster's default is fsync=off,
#: which would flatter intake), and connections enough for a fleet of 20 worker processes.
CLUSTER_SETTINGS = {"fsync": "on", "max_connections": "600"}


def _free_bind() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"127.0.0.1:{s.getsockname()[1]}"


def server_version(url: str) -> tuple[int, str]:
    """(server_version_num, server_version); Refusal when it cannot connect (the URL is never echoed)."""
    try:
        with psycopg.connect(url, connect_timeout=5) as conn:
            number = int(conn.execute("SHOW server_version_num").fetchone()[0])
            text = conn.execute("SHOW server_version").fetchone()[0]
    except psycopg.Error as exc:
        raise Refusal(f"cannot connect to SERVICE_DATABASE_URL ({type(exc).__name__})") from None
    return number, text


def require_postgresql_16(url: str) -> str:
    number, text = server_version(url)
    if number // 10000 != REQUIRED_MAJOR:
        raise Refusal(f"bin/load validates the service on PostgreSQL {REQUIRED_MAJOR}; this server is "
                      f"PostgreSQL {text} (server_version_num {number}). Point SERVICE_DATABASE_URL at an "
                      f"isolated, disposable PostgreSQL {REQUIRED_MAJOR}, or unset it to let bin/load start one.")
    return text


def require_empty(url: str) -> None:
    """The audit reads every row: a database that already holds deliveries is not ours to judge."""
    with psycopg.connect(url, connect_timeout=5) as conn:
        table = conn.execute("SELECT to_regclass('boardready.webhook_inbox')").fetchone()[0]
        if table is not None and conn.execute("SELECT EXISTS (SELECT 1 FROM boardready.webhook_inbox)").fetchone()[0]:
            raise Refusal("the database already holds service data (boardready.webhook_inbox has rows); "
                          "bin/load needs a fresh, disposable database, since its audit reads every row")


class Database:
    """PostgreSQL 16: our own cluster (restartable) or the one SERVICE_DATABASE_URL names."""

    def __init__(self, settings: LoadSettings):
        self.cluster: DisposableCluster | None = None
        self.url = settings.database_url
        self.version = ""

    def open(self) -> Database:
        if self.url is None:
            warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR.*")  # as app/embedded_pg.py
            bindir = embedded_bindir(REQUIRED_MAJOR)
            if bindir is None:
                raise Refusal(f"the embedded server wheel has no PostgreSQL {REQUIRED_MAJOR} binaries; "
                              f"set SERVICE_DATABASE_URL to an isolated, disposable PostgreSQL {REQUIRED_MAJOR}")
            self.cluster = DisposableCluster(bindir, settings=CLUSTER_SETTINGS).start()
            self.url = self.cluster.create_database("boardready")
        self.version = require_postgresql_16(self.url)
        require_empty(self.url)
        migrations.migrate(self.url)
        return self

    @property
    def restartable(self) -> bool:
        return self.cluster is not None

    def restart(self, mode: str, down_seconds: float) -> tuple[float, float]:
        """Stop (`fast`: a clean restart; `immediate`: a crash), wait, start. Returns (stopped, accepting) wall times."""
        assert self.cluster is not None
        self.cluster.stop(mode)
        stopped = time.time()
        time.sleep(down_seconds)
        self.cluster.start()
        deadline = time.monotonic() + 30
        while True:
            try:
                with psycopg.connect(self.url, connect_timeout=2):
                    return stopped, time.time()
            except psycopg.OperationalError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)

    def close(self) -> None:
        if self.cluster is not None:
            self.cluster.destroy()


class WorkerFleet:
    """`python -m workers` processes, each a worker as bin/worker runs it."""

    def __init__(self, env: dict, log_file, size: int):
        self.env, self.log_file, self.size = env, log_file, size
        self.processes: list[subprocess.Popen] = []

    def start(self) -> None:
        while len(self.processes) < self.size:
            self.processes.append(subprocess.Popen([sys.executable, "-m", "workers"], env=self.env,
                                                   stderr=self.log_file))

    @property
    def pids(self) -> list[int]:
        return [p.pid for p in self.processes if p.poll() is None]

    def kill(self, pids: list[int]) -> None:
        """SIGKILL: no lease is released, nothing is reported; the dead processes are dropped from the fleet."""
        for process in self.processes:
            if process.pid in pids:
                process.send_signal(signal.SIGKILL)
        for process in self.processes:
            if process.pid in pids:
                process.wait()
        self.processes = [p for p in self.processes if p.pid not in pids]

    def stop(self, timeout: float = 30) -> None:
        stop_processes(self.processes, timeout)
        self.processes = []


class Stack:
    """The whole system under load; `start()` then `stop()`."""

    def __init__(self, settings: LoadSettings, workdir: Path):
        self.settings = settings
        self.workdir = workdir
        self.database = Database(settings)
        self.host = None
        self.service: Service | None = None
        self.fleet: WorkerFleet | None = None
        self.env: dict = {}
        self.repositories: list[dict] = []  # {"full_name", "id"}
        self.installation_id = 0
        self.session_cookie = ""
        self.log_path = workdir / "service.log"
        self.acknowledged: set[str] = set()  # ids of the code host's deliveries the service answered 2xx

    def delivered(self, delivery: dict) -> int | None:
        """Note a delivery the code host made (its result), and return the service's answer."""
        if delivery["status"] in (200, 202):
            self.acknowledged.add(delivery["delivery_id"])
        return delivery["status"]

    # -- start and stop ---------------------------------------------------------
    def start(self) -> Stack:
        self.database.open()
        bind = _free_bind()
        base_url = f"http://{bind}"
        self.log_file = open(self.log_path, "a", encoding="utf-8")
        self.host = EmulatorProcess(self.log_file)
        app = self.host.register_app(callback_urls=[f"{base_url}/auth/callback"])
        env = {"HOST_WEBHOOK_SECRET": secrets.token_urlsafe(24),
               "HOST_MARKETPLACE_WEBHOOK_SECRET": secrets.token_urlsafe(24),
               "SERVICE_BIND": bind, "SERVICE_DATA_DIR": str(self.workdir)}
        env.update(host_environment(self.host, app, base_url, OIDC_AUDIENCE))
        for name, value in TIMING.items():
            env[name] = os.environ.get(name) or value
        if self.settings.envelope:
            # The whole 50-connection cap in use: 16 for each of the two web processes (bin/serve's split),
            # 18 for the worker at concurrency 8 (2 x 8 + 2). At the default 4 the worker holds 10 of
            # them and the envelope's burst of 1000 deliveries queues its jobs past the lifecycle limit.
            env["SERVICE_DATABASE_POOL_MAX"] = str(ENVELOPE_POOL_MAX)
            env["SERVICE_WORKER_CONCURRENCY"] = os.environ.get("SERVICE_WORKER_CONCURRENCY") or "8"
        self.env = env
        config = config_module.load({**os.environ, **env})
        self.config = config
        self.service = Service(config, self.database.url, with_workers=False, extra_env=env,
                               log_path=str(self.log_path)).start()
        self.fleet = WorkerFleet(self.service.env, self.log_file, self.settings.worker_processes)
        self.fleet.start()
        point_webhooks(self.host, base_url, env)
        self._install()
        self._sign_in()
        return self

    def _install(self) -> None:
        installation = self.host.create_installation(ORGANIZATION, account_type="Organization", deliver=True)
        self.installation_id = installation["id"]
        answers = [self.delivered(installation["delivery"])]
        for index in range(self.settings.repositories):
            repo = self.host.create_repository(f"{ORGANIZATION}/board-{index + 1:03d}",
                                               installation_id=installation["id"], deliver=True)
            # Named as readiness-runner.yml names its runs, so a run whose id was
            # lost is found by name (by the outbox and the workflow reconciler).
            self.host.set_run_name(repo["full_name"], run_name_template())
            self.repositories.append({"full_name": repo["full_name"], "id": repo["id"]})
            answers.append(self.delivered(repo["delivery"]))
        if any(status not in (200, 202) for status in answers):
            raise RuntimeError(f"the service refused the installation's deliveries: {answers}")

    def _sign_in(self) -> None:
        """A viewer of the installation's repositories signs in with the code host, as a person would."""
        self.host.create_user(VIEWER, organizations=[ORGANIZATION])
        with httpx.Client(base_url=self.base_url, follow_redirects=True, timeout=30) as browser:
            browser.get("/auth/sign-in", params={"returnTo": "/runs"})
            session = browser.get("/api/v1/session")
            if session.status_code != 200:
                raise RuntimeError(f"the viewer's sign-in failed: GET /api/v1/session answered {session.status_code}")
            self.session_cookie = browser.cookies.get(SESSION_COOKIE)

    def stop(self) -> None:
        if self.fleet is not None:
            self.fleet.stop()
        if self.service is not None:
            self.service.stop()
        if self.host is not None:
            self.host.stop()
        if hasattr(self, "log_file"):
            self.log_file.close()
        self.database.close()

    # -- what the phases use ------------------------------------------------------
    @property
    def base_url(self) -> str:
        return self.service.base_url

    @property
    def webhook_secret(self) -> str:
        return self.env["HOST_WEBHOOK_SECRET"]

    @property
    def url(self) -> str:
        return self.database.url

    def service_settings(self) -> dict:
        """The service's settings the figures depend on (no secrets, no addresses)."""
        c = self.config
        return {"web_processes": c.web_concurrency, "web_threads": c.web_threads, "pool_max": c.pool_max,
                "worker_processes": self.settings.worker_processes, "worker_concurrency": c.worker_concurrency,
                "job_lease_seconds": c.job_lease_seconds, "job_max_attempts": c.job_max_attempts,
                "worker_poll_ms": c.worker_poll_ms, "host_timeout_ms": c.host_timeout_ms,
                "database_acquire_timeout_ms": c.db_acquire_timeout_ms}

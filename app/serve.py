"""`bin/serve`: migrate, then run the API (gunicorn processes, each an event-loop
front, app/front/) and the workers.

The embedded PostgreSQL, when used, lives in this parent process and stops
when it exits; the children get its URL in SERVICE_DATABASE_URL.
"""
from __future__ import annotations

import argparse
import errno
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

import httpx

from app import config as config_module
from app import runtime, telemetry
from app.jsonlog import capture_library_logs, log

SERVICE_WSGI_APP = "app.web.wsgi:application"


def server_command(config, wsgi_app: str = SERVICE_WSGI_APP) -> list[str]:
    """The command that serves `wsgi_app` ("module:attribute") with the
    service's server settings: SERVICE_WEB_CONCURRENCY gunicorn processes, each
    reading requests on an event loop with the read deadline and handing whole
    requests to SERVICE_WEB_THREADS threads (app/front/). Benchmarks start
    their reference handlers with it so that both run under the same server."""
    return [
        sys.executable, "-m", "gunicorn", wsgi_app,
        "--worker-class", "app.front.worker.FrontWorker",
        "--workers", str(config.web_concurrency),
        "--threads", str(config.web_threads),
        "--bind", config.bind,
        "--graceful-timeout", "20",
        "--timeout", "60",
        "--keep-alive", "5",
        "--log-level", "warning",
    ]


def address_in_use(bind: str) -> bool:
    """Whether another process listens on SERVICE_BIND ("host:port"; a unix socket is not checked)."""
    if bind.startswith(("unix:", "fd://")):
        return False
    host, _, port = bind.rpartition(":")
    host = host.strip("[]") or "0.0.0.0"
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)   # as gunicorn binds
        try:
            probe.bind((host, int(port)))
        except OSError as exc:
            return exc.errno == errno.EADDRINUSE
    return False


def wait_until_live(base_url: str, process: subprocess.Popen, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"error: the API server exited with status {process.returncode}")
        try:
            if httpx.get(f"{base_url}/api/health/live", timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    raise SystemExit(f"error: the API did not answer on {base_url} within {seconds:.0f} s")


def stop_processes(processes: list[subprocess.Popen], timeout: float = 30) -> None:
    """SIGTERM to every process still running, then wait for each; one that
    outlives `timeout` is killed (and reaped)."""
    for process in processes:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
    for process in processes:
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def memory_folder() -> str | None:
    """/dev/shm when this machine has it (tmpfs), else None (the default temporary folder).

    The processes write their counts into prometheus-client's files there
    (the request counts when published, app/web/request_metrics.py; the code
    host calls and pool figures as they happen). On a disk filesystem those
    are shared file pages the kernel's writeback cleans, after which the next
    write faults again; in memory nothing is written back. The files live
    only as long as the service, so memory is where they belong."""
    folder = "/dev/shm"
    return folder if os.path.isdir(folder) and os.access(folder, os.W_OK | os.X_OK) else None


class Service:
    """The API and worker processes, started and stopped together."""

    def __init__(self, config, url: str, with_workers: bool = True, extra_env: dict | None = None,
                 log_path: str | None = None, wsgi_app: str = SERVICE_WSGI_APP):
        self.config, self.url, self.with_workers, self.wsgi_app = config, url, with_workers, wsgi_app
        self.log_file = open(log_path, "a", encoding="utf-8") if log_path else None
        self.env = dict(os.environ, SERVICE_DATABASE_URL=url, **(extra_env or {}))
        self.children: list[subprocess.Popen] = []
        self.base_url = f"http://{config.bind}"
        # The processes count into one folder of their own, so /metrics from any
        # gunicorn worker adds up all of them (app/telemetry.py; docs/operations.md).
        self.metrics_dir = None
        if not self.env.get(telemetry.MULTIPROCESS_DIR):
            self.metrics_dir = tempfile.mkdtemp(prefix="boardready-metrics-", dir=memory_folder())
            self.env[telemetry.MULTIPROCESS_DIR] = self.metrics_dir

    def start(self) -> Service:
        api = subprocess.Popen(server_command(self.config, self.wsgi_app), env=self.env, stderr=self.log_file)
        self.children.append(api)
        if self.with_workers:
            self.children.append(subprocess.Popen([sys.executable, "-m", "workers"], env=self.env,
                                                  stderr=self.log_file))
        wait_until_live(self.base_url, api)
        return self

    def stop(self, timeout: float = 30) -> None:
        stop_processes(self.children, timeout)
        if self.log_file:
            self.log_file.close()
        if self.metrics_dir:
            shutil.rmtree(self.metrics_dir, ignore_errors=True)

    def wait(self) -> int:
        while all(child.poll() is None for child in self.children):
            time.sleep(0.5)
        return max((child.returncode or 0) for child in self.children if child.poll() is not None)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="bin/serve", description=__doc__)
    parser.add_argument("--no-workers", action="store_true", help="run the API only")
    parser.add_argument("--no-migrate", action="store_true",
                        help="do not migrate first: the database is migrated by bin/migrate with the migration "
                             "role, and this process's role may only execute functions (docs/deploy.md)")
    args = parser.parse_args(argv)
    capture_library_logs()
    runtime.refuse_exposed_secret_files(os.environ)
    config = config_module.load()
    url = runtime.database_url(config)
    if not args.no_migrate:
        runtime.migrate(url)
    if address_in_use(config.bind):
        # Otherwise gunicorn retries for five seconds and exits while another
        # server answers on the address, which looks like this one started.
        log("serve.address_in_use", level="error", bind=config.bind)
        raise SystemExit(f"error: SERVICE_BIND {config.bind} is in use by another process")
    service = Service(config, url, with_workers=not args.no_workers)
    stopping = False

    def on_signal(*_):
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    service.start()
    print(f"boardready listening on {service.base_url}", flush=True)
    while not stopping and all(child.poll() is None for child in service.children):
        time.sleep(0.3)
    exited = [child.returncode for child in service.children if child.poll() is not None]
    service.stop()
    if not stopping and exited:
        # A child died on its own: say so with a failing status, so that a
        # service manager restarts the service.
        log("serve.child_exited", level="error", status=exited[0])
        raise SystemExit(exited[0] or 1)


if __name__ == "__main__":
    main()

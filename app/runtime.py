"""Process start-up shared by bin/serve, bin/worker, bin/migrate and bin/demo."""
from __future__ import annotations

import sys

from app import embedded_pg, migrations
from app.jsonlog import log


def database_url(config) -> str:
    """SERVICE_DATABASE_URL, or the embedded server (exits with a clear message if unusable)."""
    try:
        return embedded_pg.resolve_database_url(config)
    except embedded_pg.DataDirectoryUnusable as exc:
        sys.stderr.write(f"error: {exc}\n")
        raise SystemExit(2) from None


def migrate(url: str, contract: bool | None = None) -> dict:
    done = migrations.migrate(url, contract=contract)
    log("database.migrated", migrations=done["migrations"], functions=len(done["functions"]),
        contract=done["contract"])
    return done

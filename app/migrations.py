"""Schema migrations (yoyo over sql/schema) and SQL functions (sql/functions).

Migrations change tables and are applied once, each with a rollback. Functions
and views are `CREATE OR REPLACE` and re-applied on every run, so a deploy
always leaves the database with exactly the functions in the tree. A
`.sql.j2` file in sql/functions is a jinja2 template rendered as it is applied
(queue.sql.j2: the lease rules, written once, rendered for each queue table),
so the database holds static SQL and the tree no generated copy.
"""
from __future__ import annotations

from pathlib import Path

import psycopg
from yoyo import get_backend, read_migrations

from app.queries import QueryFolder

SQL_DIR = Path(__file__).resolve().parent.parent / "sql"
SCHEMA_DIR = SQL_DIR / "schema"
FUNCTIONS_DIR = SQL_DIR / "functions"
FUNCTIONS = QueryFolder(FUNCTIONS_DIR)


def _yoyo_url(url: str) -> str:
    # yoyo names its psycopg 3 backend "postgresql+psycopg".
    for prefix in ("postgresql://", "postgres://"):
        if url.startswith(prefix):
            return "postgresql+psycopg://" + url[len(prefix):]
    return url


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


def apply_functions(url: str) -> list[str]:
    """Re-apply every file in sql/functions in name order, then the API role's grants."""
    applied = []
    with psycopg.connect(url) as conn:
        # Bodies refer to functions in other files: validate at call time, as pg_dump does.
        conn.execute("SET LOCAL check_function_bodies = off")
        for name, sql in function_sources():
            conn.execute(sql)
            applied.append(name)
        _grant_api_role(conn)
    return applied


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


def migrate(url: str) -> dict:
    """Apply pending migrations, then the functions. Returns what was done.

    A database that a newer release has migrated (it holds migrations this
    tree does not know) keeps its functions: during a rolling upgrade an older
    replica that restarts (bin/serve migrates on start) must not put its older
    function bodies back under the newer release's processes."""
    migrations = read_migrations(str(SCHEMA_DIR))
    with _Backend(url) as backend, backend.lock():
        pending = backend.to_apply(migrations)
        backend.apply_migrations(pending)
        known = {m.id for m in migrations}
        newer = sorted(set(_applied_ids(backend)) - known)
    if newer:
        return {"migrations": [m.id for m in pending], "functions": [], "newer_migrations": newer}
    functions = apply_functions(url)
    return {"migrations": [m.id for m in pending], "functions": functions}


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

"""The previous release, as CHANGELOG.md records it: its commit checked out
into a temporary folder (`git worktree`), its processes run with this tree's
Python (the dependencies are the same; the code is the worktree's, found first
because it is the working directory of every process).

The commit comes from the changelog, not from a tag: a clone need not carry tags.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from contextlib import contextmanager
from pathlib import Path

import psycopg

ROOT = Path(__file__).resolve().parents[2]
CHANGELOG = ROOT / "CHANGELOG.md"


def previous_release() -> tuple[str, str]:
    """(version, commit) of the newest released entry of CHANGELOG.md."""
    text = CHANGELOG.read_text(encoding="utf-8")
    for match in re.finditer(r"^## (\d+\.\d+\.\d+)\s*$(.*?)(?=^## |\Z)", text, re.M | re.S):
        commit = re.search(r"[Cc]ut from commit ([0-9a-f]{7,40})", match.group(2))
        assert commit, f"CHANGELOG.md: release {match.group(1)} names no commit ('Cut from commit <sha>')"
        return match.group(1), commit.group(1)
    raise AssertionError("CHANGELOG.md records no release")


@contextmanager
def checked_out(commit: str):
    """The commit's tree in a temporary folder, removed afterwards."""
    parent = Path(tempfile.mkdtemp(prefix="boardready-previous-"))
    tree = parent / "tree"
    done = subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "--quiet", str(tree), commit],
                          capture_output=True, text=True)
    assert done.returncode == 0, f"cannot check out the previous release {commit}: {done.stderr.strip()}"
    try:
        yield tree
    finally:
        subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)], capture_output=True)
        shutil.rmtree(parent, ignore_errors=True)
        subprocess.run(["git", "-C", str(ROOT), "worktree", "prune"], capture_output=True)


def tree_env(tree: Path, env: dict | None = None) -> dict:
    """An environment in which `python -m ...` runs the code of `tree`."""
    merged = dict(os.environ if env is None else env)
    merged["PYTHONPATH"] = str(tree)
    merged.pop("PYTHONSAFEPATH", None)
    return merged


def run_module(tree: Path, module: str, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", module, *args], cwd=tree, env=tree_env(tree, env),
                          capture_output=True, text=True, timeout=300)


def migrate_with(tree: Path, url: str, *args: str) -> str:
    """Run `tree`'s bin/migrate (with `args`) against `url`; its output."""
    done = run_module(tree, "app.migrate_cli", *args, env={**os.environ, "SERVICE_DATABASE_URL": url})
    assert done.returncode == 0, f"migrate of {tree} failed:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def catalog(url: str) -> dict[str, list]:
    """What a schema is made of, in a comparable form: tables, columns, indexes,
    constraints, triggers, views, function signatures and the API role's grants
    of the service's schemas."""
    schemas = ("boardready", "boardready_private", "ops")
    queries = {
        "tables": "SELECT n.nspname || '.' || c.relname || ' ' || c.relkind::text FROM pg_class c "
                  "JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = ANY(%s) AND c.relkind IN "
                  "('r', 'v', 'm', 'S', 'p')",
        "columns": "SELECT table_schema || '.' || table_name || '.' || column_name || ' ' || data_type || ' ' || "
                   "is_nullable || ' ' || coalesce(column_default, '') FROM information_schema.columns "
                   "WHERE table_schema = ANY(%s)",
        "indexes": "SELECT schemaname || ' ' || indexdef FROM pg_indexes WHERE schemaname = ANY(%s)",
        "constraints": "SELECT n.nspname || '.' || cl.relname || ' ' || c.conname || ' ' || "
                       "pg_get_constraintdef(c.oid) FROM pg_constraint c JOIN pg_class cl ON cl.oid = c.conrelid "
                       "JOIN pg_namespace n ON n.oid = cl.relnamespace WHERE n.nspname = ANY(%s)",
        "triggers": "SELECT n.nspname || '.' || cl.relname || ' ' || pg_get_triggerdef(t.oid) FROM pg_trigger t "
                    "JOIN pg_class cl ON cl.oid = t.tgrelid JOIN pg_namespace n ON n.oid = cl.relnamespace "
                    "WHERE NOT t.tgisinternal AND n.nspname = ANY(%s)",
        "functions": "SELECT n.nspname || '.' || p.proname || '(' || pg_get_function_identity_arguments(p.oid) || "
                     "') -> ' || pg_get_function_result(p.oid) FROM pg_proc p JOIN pg_namespace n "
                     "ON n.oid = p.pronamespace WHERE n.nspname = ANY(%s)",
        "types": "SELECT n.nspname || '.' || t.typname FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace "
                 "WHERE n.nspname = ANY(%s) AND t.typtype IN ('c', 'e', 'd') AND NOT EXISTS "
                 "(SELECT 1 FROM pg_class c WHERE c.oid = t.typrelid AND c.relkind <> 'c')",
        "grants": "SELECT n.nspname || '.' || p.proname || '(' || pg_get_function_identity_arguments(p.oid) || ')' "
                  "FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = ANY(%s) "
                  "AND has_function_privilege('boardready_api', p.oid, 'EXECUTE')",
    }
    with psycopg.connect(url) as conn:
        return {name: sorted(row[0] for row in conn.execute(sql, (list(schemas),)))
                for name, sql in queries.items()}


def function_signatures(url: str) -> dict[str, str]:
    """boardready's functions: 'name(identity arguments)' -> its arguments with
    their defaults, its result, and whether the API role may execute it: what
    a caller that names its arguments (app/database.py does) depends on."""
    with psycopg.connect(url) as conn:
        rows = conn.execute(
            "SELECT p.proname || '(' || pg_get_function_identity_arguments(p.oid) || ')', "
            "'(' || pg_get_function_arguments(p.oid) || ') -> ' || pg_get_function_result(p.oid) || "
            "CASE WHEN has_function_privilege('boardready_api', p.oid, 'EXECUTE') THEN '' "
            "ELSE ', not executable by boardready_api' END "
            "FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = 'boardready'").fetchall()
    return dict(rows)


def every_function(url: str) -> dict[str, str]:
    """Every function of the service's schemas, public and private helpers
    alike: 'schema.name(identity arguments)' -> its arguments and result. A
    previous-release body calls its private helpers by name, so they are as
    much its interface while it runs as the functions its Python calls."""
    with psycopg.connect(url) as conn:
        rows = conn.execute(
            "SELECT n.nspname || '.' || p.proname || '(' || pg_get_function_identity_arguments(p.oid) || ')', "
            "'(' || pg_get_function_arguments(p.oid) || ') -> ' || pg_get_function_result(p.oid) "
            "FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace "
            "WHERE n.nspname IN ('boardready', 'boardready_private')").fetchall()
    return dict(rows)


#: Names a release's code quotes that are not function calls.
NOT_CALLS = {"release_decision": "a column of the row app/web/reviews.py answers with"}


def functions_called_by(tree: Path, signatures: dict[str, str]) -> dict[str, str]:
    """The entries of `signatures` (function_signatures of the database
    `tree`'s release built) whose function `tree`'s code calls: through its
    client (sql_api.name), its name quoted ("name", as app/database.py's
    callers pass it) or called as boardready.name( in its app, workers, tools
    and bin, and in its named queries (sql/queries, tools/queries). The client
    itself, app/sql_api.py, is not read: it defines a function for every
    public one and names the ones kept for the release before it, calling none."""
    files = [path for folder in ("app", "workers", "tools", "bin", "sql/queries") for path in (tree / folder).rglob("*")
             if path.is_file() and (path.suffix in (".py", ".sql") or path.parent.name == "bin")
             and path != tree / "app" / "sql_api.py"]
    code = "\n".join(path.read_text(encoding="utf-8", errors="replace") for path in files)
    called = set(re.findall(r"""["']([a-z][a-z0-9_]*)["']|boardready\.([a-z][a-z0-9_]*)\(|sql_api\.([a-z][a-z0-9_]*)""",
                            code))
    names = {quoted or qualified or client for quoted, qualified, client in called} - set(NOT_CALLS)
    return {signature: shape for signature, shape in signatures.items() if signature.split("(")[0] in names}

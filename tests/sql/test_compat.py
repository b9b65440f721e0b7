"""The previous release in one deletable place: sql/compat/<release>.sql holds
what only the previous release's processes use, and nothing current calls
into it (docs/sql-api.md). Deleting the file and running its contract
migration is the whole removal.

Read here: every function body of sql/functions (templates rendered), the
service's named queries and the Python of app, workers and tools. A call of
a function the compat file defines, by its name followed by "(", fails."""
from __future__ import annotations

import re
from pathlib import Path

import psycopg

from app import migrations, sql_api

ROOT = Path(__file__).resolve().parents[2]


def compat_calls(sources: dict[str, str], names: set[str]) -> list[tuple[str, str]]:
    """(source, name) for each call of a compat function `names` holds (bare names) in `sources`."""
    pattern = re.compile(r"(?<![\w])(?:boardready(?:_private)?\.)?(" + "|".join(sorted(names)) + r")\s*\(")
    found = []
    for source, text in sources.items():
        code = "\n".join(line.split("--")[0] for line in text.splitlines())   # SQL comments are no calls
        found.extend((source, match.group(1)) for match in pattern.finditer(code))
    return sorted(set(found))


def current_sources() -> dict[str, str]:
    sources = {f"sql/functions/{name}": sql for name, sql in migrations.function_sources()}
    for path in (ROOT / "sql" / "queries").glob("*.sql*"):
        sources[str(path.relative_to(ROOT))] = path.read_text(encoding="utf-8")
    for folder in ("app", "workers", "tools"):
        for path in (ROOT / folder).rglob("*.py"):
            if path.name != "sql_api.py":      # the client names what it keeps for the previous release
                sources[str(path.relative_to(ROOT))] = path.read_text(encoding="utf-8")
    return sources


def compat_names() -> set[str]:
    return {name.split(".", 1)[1] for name in migrations.compat_functions()}


def test_each_compat_file_names_its_contract_migration_and_defines_something():
    files = migrations.compat_files()
    known = {path.stem for path in migrations.SCHEMA_DIR.glob("*_contract.sql")}
    for path, contract in files.items():
        assert contract in known, f"{path.name}: its contract migration {contract} is not in sql/schema"
    for name in migrations.compat_functions():
        assert name.startswith(("boardready.", "boardready_private.")), name


def test_nothing_current_calls_into_the_compat_file():
    names = compat_names()
    if not names:
        return
    assert compat_calls(current_sources(), names) == [], "a current body calls the previous release's layer"


def test_the_check_finds_a_call_into_the_compat_file():
    sources = {"a.sql": "SELECT * FROM token_verify(p_sha, p_now);\n-- token_verify(x) in a comment",
               "b.sql": "PERFORM boardready.supply_board_refreshed (1, true, NULL, now());",
               "c.py": 'sql_api.token_verify_v2(conn, token_sha256=b"")'}
    assert compat_calls(sources, {"token_verify", "supply_board_refreshed"}) == \
        [("a.sql", "token_verify"), ("b.sql", "supply_board_refreshed")]


def test_the_public_functions_kept_for_the_previous_release_are_the_compat_files(db_url):
    """PREVIOUS_RELEASE_ONLY is written from the compat files, each with a
    successor this release calls; a database migrated from empty has none of
    them (the contract ran) and its functions applied again do not bring them
    back."""
    public = {name.split(".", 1)[1]: successor for name, successor in migrations.compat_functions().items()
              if name.startswith("boardready.")}
    assert sql_api.PREVIOUS_RELEASE_ONLY == public
    assert all(public.values()), "a public compat function names no successor ('-- successor: <name>')"
    assert "compat/" not in " ".join(migrations.migrate(db_url)["functions"])
    with psycopg.connect(db_url) as conn:
        left = conn.execute("SELECT n.nspname || '.' || p.proname FROM pg_proc p JOIN pg_namespace n "
                            "ON n.oid = p.pronamespace WHERE n.nspname || '.' || p.proname = ANY (%s)",
                            (list(migrations.compat_functions()),)).fetchall()
    assert left == []

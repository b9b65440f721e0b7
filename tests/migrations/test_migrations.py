"""Migrations go up, all the way down, and up again; the API role cannot write tables."""
from __future__ import annotations

import psycopg
import pytest

from app import migrations, sql_api


def tables(conn) -> set[str]:
    rows = conn.execute(
        "SELECT table_schema || '.' || table_name AS t FROM information_schema.tables "
        "WHERE table_schema IN ('boardready', 'ops')").fetchall()
    return {r["t"] for r in rows}


def test_up_down_up(db_url, owner):
    migrated = tables(owner)
    assert {"boardready.webhook_inbox", "boardready.lifecycle_jobs", "ops.inbox"} <= migrated

    rolled_back = migrations.rollback_all(db_url)
    assert rolled_back == sorted(rolled_back, reverse=True) and "0001_spine" in rolled_back
    assert tables(owner) == set()

    again = migrations.migrate(db_url)
    assert "0001_spine" in again["migrations"]
    assert tables(owner) == migrated


def test_migrate_is_idempotent_and_reapplies_functions(db_url, owner):
    owner.execute("DROP FUNCTION boardready.health_probe()")
    done = migrations.migrate(db_url)
    assert done["migrations"] == []
    assert "health.sql" in done["functions"]
    assert sql_api.health_probe(owner)["ok"] is True


def test_every_migration_has_a_rollback():
    for forward in migrations.SCHEMA_DIR.glob("[0-9]*.sql"):
        if forward.name.endswith(".rollback.sql"):
            continue
        assert forward.with_name(forward.stem + ".rollback.sql").is_file(), forward.name


def test_api_role_cannot_write_tables_directly(pool):
    with pool.connection() as conn:
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("UPDATE boardready.lifecycle_jobs SET status = 'completed'")
    with pool.connection() as conn:
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("INSERT INTO boardready.accounts (id, login, type) VALUES (1, 'x', 'User')")
    with pool.connection() as conn:
        # ...but may call the functions and read the operator views.
        assert sql_api.health_probe(conn)["ok"] is True
        assert conn.execute("SELECT count(*) AS n FROM ops.inbox").fetchone()["n"] == 0


def test_a_database_a_newer_release_migrated_keeps_its_functions(db_url, owner):
    """An older replica restarting in a rolling upgrade (bin/serve migrates on
    start) must not put its older function bodies back: a migration this tree
    does not know means a newer release owns the functions."""
    owner.execute("INSERT INTO _yoyo_migration (migration_hash, migration_id, applied_at_utc) "
                  "VALUES ('newer-release', '9999_from_a_newer_release', now())")
    owner.execute("DROP FUNCTION boardready.health_probe()")   # stands for a body the newer release changed
    done = migrations.migrate(db_url)
    assert done == {"migrations": [], "functions": [], "newer_migrations": ["9999_from_a_newer_release"]}
    assert owner.execute("SELECT to_regprocedure('boardready.health_probe()') AS f").fetchone()["f"] is None

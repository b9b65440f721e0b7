"""Migrations go up, all the way down, and up again; the API role cannot write tables."""
from __future__ import annotations

import threading

import psycopg
import pytest

from app import migrations, sql_api
from tests.helpers.reconciliation import events
from tests.helpers.service import wait_for


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
    assert done == {"migrations": [], "functions": [], "newer_migrations": ["9999_from_a_newer_release"],
                    "contract": []}
    assert owner.execute("SELECT to_regprocedure('boardready.health_probe()') AS f").fetchone()["f"] is None


def test_contract_migrations_wait_for_the_operator_on_an_upgraded_database(db_url, owner):
    """A database migrated from empty gets the contract migrations at once (no
    previous release runs on it); an existing one only when asked, once the
    previous release's processes have stopped (bin/migrate --contract)."""
    contract = sorted(m.id for m in migrations.read_migrations(str(migrations.SCHEMA_DIR))
                      if migrations._is_contract(m))
    assert contract, "this release has a contract migration"
    applied = {r["migration_id"] for r in owner.execute("SELECT migration_id FROM _yoyo_migration").fetchall()}
    assert set(contract) <= applied          # the template was migrated from empty

    owner.execute("DELETE FROM _yoyo_migration WHERE migration_id = ANY (%s)", (contract,))
    assert migrations.migrate(db_url)["contract"] == []
    assert migrations.migrate(db_url, contract=True)["contract"] == contract
    assert migrations.migrate(db_url, contract=True)["contract"] == []


def test_a_migration_waiting_on_a_running_process_gives_way_instead_of_deadlocking(db_url, owner, capsys):
    """A previous-release process reads ops.jobs and then ops.inbox in one
    transaction while the functions are applied, which replace ops.inbox and
    then ops.jobs: each waits for the other. The migration's lock wait is
    bounded below PostgreSQL's deadlock_timeout, so it is the one that gives
    way, and is retried once the process has committed; the process never
    sees an error."""
    done: dict = {}
    with psycopg.connect(db_url) as process:
        process.execute("SELECT count(*) FROM ops.jobs")
        applying = threading.Thread(target=lambda: done.update(migrations.migrate(db_url)))
        applying.start()
        wait_for(lambda: owner.execute(
            "SELECT count(*) AS n FROM pg_locks WHERE relation = 'ops.inbox'::regclass "
            "AND mode = 'AccessExclusiveLock' AND granted").fetchone()["n"] == 1, seconds=30)
        process.execute("SELECT count(*) FROM ops.inbox")    # waits for the migration until it gives way
        process.commit()
        applying.join(timeout=60)
    assert "ops.sql" in done["functions"]
    busy = events(capsys, "database.migration_lock_busy")
    assert busy and all(e["step"] == "functions" for e in busy)

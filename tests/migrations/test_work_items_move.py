"""Migration 0032 moves the outbox calls and the reconciliation items into
work_items with the rows in flight: a database built up to 0031 holds a
leased outbox call, an outbox dead letter, a leased reconciliation item and
supply work; after the upgrade each is the same item (the outbox keeps its
id, every lease its token), the previous release's calls with the ids and
tokens it held still report, and the operator's dead letter is replayed."""
from __future__ import annotations

import uuid

import psycopg
import pytest
from psycopg.rows import dict_row
from yoyo import get_backend, read_migrations

from app import migrations, sql_api

BEFORE_THE_MOVE = "0031_more_function_tombstones"
OUTBOX_LEASE = "11111111-1111-1111-1111-111111111111"
RECONCILIATION_LEASE = "22222222-2222-2222-2222-222222222222"


@pytest.fixture
def upgraded(pg_server):
    """The ids the rows had before 0032, and an owner connection to the database after the full migration."""
    janitor = pg_server.janitor(f"boardready_move_{uuid.uuid4().hex[:10]}")
    janitor.init()
    url = pg_server.url(janitor.dbname)
    try:
        backend = get_backend(url.replace("postgresql://", "postgresql+psycopg://", 1))
        try:
            known = read_migrations(str(migrations.SCHEMA_DIR))
            with backend.lock():
                backend.apply_migrations(backend.to_apply(known.filter(lambda m: m.id <= BEFORE_THE_MOVE)))
        finally:
            backend.connection.close()
        with psycopg.connect(url, autocommit=True, row_factory=dict_row) as conn:
            before = seed(conn)
        migrations.migrate(url)
        with psycopg.connect(url, autocommit=True, row_factory=dict_row) as conn:
            conn.execute("SET search_path = boardready, pg_temp")
            yield before, conn
    finally:
        janitor.drop()


def seed(conn) -> dict:
    conn.execute("INSERT INTO boardready.installations (id) VALUES (501)")
    conn.execute("INSERT INTO boardready.repositories (id, installation_id, full_name) VALUES (601, 501, 'acme/board')")
    run = conn.execute(
        "INSERT INTO boardready.release_runs (repository_id, installation_id, pr_number, head_sha, trigger_action, "
        "status, started_at, updated_at) VALUES (601, 501, 7, repeat('a', 40), 'opened', 'queued', now(), now()) "
        "RETURNING id").fetchone()["id"]
    outbox = "INSERT INTO boardready.outbox_items (release_run_id, installation_id, kind, idempotency_key, status, " \
             "run_after, created_at, updated_at, lease_token, leased_until, leased_by, attempts, reason_code, " \
             "error_class, failed_at) VALUES (%s, 501, %s, %s, %s, now(), now(), now(), %s, %s, %s, %s, %s, %s, %s) " \
             "RETURNING id"
    # A few of each first, so that the tables' ids overlap as they do in a real database.
    for n in range(3):
        conn.execute(outbox, (run, "pr_comment", f"done:{n}", "completed", None, None, None, 1, None, None, None))
    leased = conn.execute(outbox, (run, "check_run_create", "create:1", "leased", OUTBOX_LEASE,
                                   "2999-01-01T00:00:00Z", "outbox@old:1", 1, None, None, None)).fetchone()["id"]
    dead = conn.execute(outbox, (run, "pr_comment", "comment:1", "dead_letter", None, None, None, 5,
                                 "host_unavailable", "HostRetryable", "2026-11-01T00:00:00Z")).fetchone()["id"]
    reconciliation = conn.execute(
        "INSERT INTO boardready.reconciliation_items (kind, subject_id, installation_id, reason_code, deadline_at, "
        "status, run_after, lease_token, leased_until, leased_by, attempts, created_at, updated_at) "
        "VALUES ('release_run', %s, 501, 'reporting_stale', now() + interval '1 hour', 'leased', now(), %s, "
        "'2999-01-01', 'reconcile@old:1', 1, now(), now()) RETURNING id", (run, RECONCILIATION_LEASE)).fetchone()["id"]
    supply = conn.execute(
        "INSERT INTO boardready.work_items (kind, subject_id, installation_id, status, run_after, created_at, "
        "updated_at) VALUES ('board_refresh', 77, 501, 'accepted', now(), now(), now()) RETURNING id").fetchone()["id"]
    return {"run": run, "leased": leased, "dead": dead, "reconciliation": reconciliation, "supply": supply}


def test_every_row_in_flight_is_the_same_item_after_the_move(upgraded):
    before, conn = upgraded
    rows = {r["kind"]: r for r in conn.execute(
        "SELECT * FROM work_items WHERE status <> 'completed' ORDER BY id").fetchall()}
    assert set(rows) == {"check_run_create", "pr_comment", "release_run", "board_refresh"}
    leased, dead = rows["check_run_create"], rows["pr_comment"]
    assert (leased["id"], leased["subject_id"], str(leased["lease_token"]), leased["leased_by"]) == \
        (before["leased"], before["run"], OUTBOX_LEASE, "outbox@old:1")
    assert (dead["id"], dead["status"], dead["reason_code"], dead["attempts"]) == \
        (before["dead"], "dead_letter", "host_unavailable", 5)
    reconciliation = rows["release_run"]
    assert (str(reconciliation["lease_token"]), reconciliation["reason_code"], reconciliation["subject_id"]) == \
        (RECONCILIATION_LEASE, "reporting_stale", before["run"])
    assert reconciliation["deadline_at"] is not None
    # Numbered after the outbox ids and the supply work (which moved up to make room).
    assert reconciliation["id"] != before["reconciliation"] and rows["board_refresh"]["id"] != before["supply"]
    # The older names show the same rows with the columns they had.
    assert conn.execute("SELECT release_run_id, idempotency_key FROM outbox_items WHERE id = %s",
                        (before["leased"],)).fetchone() == {"release_run_id": before["run"],
                                                           "idempotency_key": "create:1"}
    assert conn.execute("SELECT count(*) AS n FROM reconciliation_items").fetchone()["n"] == 1
    # New items are numbered after every moved one.
    made = conn.execute("INSERT INTO work_items (kind, subject_id, installation_id, status, run_after, created_at, "
                        "updated_at) VALUES ('board_refresh', 78, 501, 'accepted', now(), now(), now()) "
                        "RETURNING id").fetchone()["id"]
    assert made > max(r["id"] for r in conn.execute("SELECT id FROM work_items WHERE id <> %s", (made,)).fetchall())


def test_the_previous_release_reports_on_the_leases_it_held(upgraded):
    before, conn = upgraded
    # 0.6.0's outbox worker completes the call it held, by the id it knew.
    assert conn.execute("SELECT outcome FROM outbox_report(%s, %s, 'skip')",
                        (before["leased"], OUTBOX_LEASE)).fetchone()["outcome"] == "skip"
    # The reconciliation item moved with the lease token its holder had: failing it by that token works.
    moved = conn.execute("SELECT id FROM work_items WHERE lease_token = %s", (RECONCILIATION_LEASE,)).fetchone()["id"]
    failed = sql_api.work_fail(conn, item_id=moved, lease_token=RECONCILIATION_LEASE, reason_code="handler_error",
                               error_class="RuntimeError", max_attempts=5)
    assert failed["outcome"] == "retry_scheduled"
    assert conn.execute("SELECT status, reason_code FROM work_items WHERE kind = 'release_run'").fetchone() == \
        {"status": "accepted", "reason_code": "handler_error"}
    # A token nobody holds any more still reports lease_lost.
    assert conn.execute("SELECT outcome FROM outbox_report(%s, %s, 'skip')",
                        (before["leased"], OUTBOX_LEASE)).fetchone()["outcome"] == "lease_lost"


def test_the_moved_dead_letter_is_listed_and_replayed_by_its_id(upgraded):
    before, conn = upgraded
    listed = conn.execute("SELECT item_type, item_id, reason_code FROM ops.dead_letters").fetchall()
    assert listed == [{"item_type": "outbox", "item_id": before["dead"], "reason_code": "host_unavailable"}]
    replayed = sql_api.dead_letter_replay(conn, installation_id=501, item_type="outbox", item_id=before["dead"],
                                          idempotency_key="key-1", actor="operator:test", operation_id="op-1")
    assert replayed["outcome"] == "replayed"
    assert conn.execute("SELECT status, attempts FROM work_items WHERE id = %s", (before["dead"],)).fetchone() == \
        {"status": "accepted", "attempts": 0}

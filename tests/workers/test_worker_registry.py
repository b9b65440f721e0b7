"""The one worker loop's registries against the schema: every kind a queue
table allows has a handler, and every handler is for a kind the table allows
(a kind without a handler would be dead-lettered as unknown_kind; a handler
without a kind is dead code or a missing migration)."""
from __future__ import annotations

import re
import threading

from app import database
from app.queueing import UnknownKind
from tests.helpers.service import make_config
from workers.registry import build_queues

#: The column each table names its kinds in; lifecycle_jobs has one SQL handler for every event.
KIND_COLUMNS = {"work_items": "kind", "schedules": "name"}


def allowed(owner, table: str, column: str) -> set[str]:
    rows = owner.execute(
        "SELECT pg_get_constraintdef(c.oid) AS definition FROM pg_constraint c "
        "JOIN pg_class t ON t.oid = c.conrelid JOIN pg_namespace n ON n.oid = t.relnamespace "
        "WHERE n.nspname = 'boardready' AND t.relname = %s AND c.contype = 'c'", (table,)).fetchall()
    [definition] = [r["definition"] for r in rows if re.match(rf"CHECK \(\({column} = ANY", r["definition"])]
    return set(re.findall(r"'([^']+)'::text", definition))


def test_every_queue_registry_matches_the_kinds_its_table_allows(owner, db_url):
    """work_items holds the outbox's, the reconciliation's and the supply's
    kinds: together their registries are exactly the kinds the table allows,
    with no kind in two queues."""
    pool = database.create_pool(db_url, max_size=2, name="registry-test")
    try:
        queues = build_queues(make_config(), db_url, pool, threading.Event())
    finally:
        pool.close()
    registries: dict[str, set[str]] = {}
    for queue in queues.all:
        shared = registries.setdefault(queue.table, set())
        assert not shared & set(queue.handlers), (queue.name, "a kind registered in two queues")
        shared |= set(queue.handlers)
    assert set(registries) == set(KIND_COLUMNS) | {"lifecycle_jobs"}
    assert registries["lifecycle_jobs"] == {"lifecycle_job"}
    for table, column in KIND_COLUMNS.items():
        schema = allowed(owner, table, column)
        assert registries[table] == schema, (table, {"no handler": schema - registries[table],
                                                     "no such kind": registries[table] - schema})


def test_each_work_queue_claims_the_kinds_it_has_handlers_for(owner, db_url):
    """The SQL side of the registry: the kinds a work_items queue claims
    (queue.sql.j2's work_queue_kinds) are the kinds its handlers take."""
    pool = database.create_pool(db_url, max_size=2, name="registry-test")
    try:
        queues = build_queues(make_config(), db_url, pool, threading.Event())
    finally:
        pool.close()
    work_queues = [queue for queue in queues.all if queue.table == "work_items"]
    assert {queue.work_queue for queue in work_queues} == {"outbox", "reconciliation", "supply"}
    for queue in work_queues:
        claimed = owner.execute("SELECT boardready_private.work_queue_kinds(%s) AS kinds", (queue.work_queue,)).fetchone()
        assert set(claimed["kinds"]) == set(queue.handlers), queue.name


def test_an_item_of_an_unknown_kind_fails_with_a_stable_code(db_url):
    pool = database.create_pool(db_url, max_size=2, name="registry-test")
    try:
        queues = build_queues(make_config(), db_url, pool, threading.Event())
        try:
            queues.reconciliation.handle(pool, {"kind": "something_newer", "item_id": 1})
        except UnknownKind as exc:
            assert exc.reason_code == "unknown_kind"
        else:
            raise AssertionError("an unknown kind was handled")
    finally:
        pool.close()

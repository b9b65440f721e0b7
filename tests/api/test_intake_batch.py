"""Deliveries stored together (app/web/intake_batch.py, intake_accept_deliveries):
one transaction for a batch, each delivery its own answer, duplicates within
and across batches told apart, and a value PostgreSQL refuses costs only its
own delivery."""
from __future__ import annotations

import threading

import pytest

from app.web.errors import ApiError
from app.web.intake_batch import Delivery, IntakeBatcher, _Waiting
from tests.helpers.service import count


def delivery(delivery_id: str, event: str = "pull_request", **changes) -> Delivery:
    fields = dict(delivery_id=delivery_id, event=event, action="opened", installation_id=7,
                  actions={"kind": event, "action": "opened"}, payload_sha256="0" * 64, payload_bytes=10,
                  acceptance_ms=3)
    return Delivery(**(fields | changes))


def store_as_one_batch(batcher: IntakeBatcher, deliveries: list[Delivery]) -> list[_Waiting]:
    """What a batcher thread does with the deliveries waiting at one moment."""
    batch = [_Waiting(d) for d in deliveries]
    batcher._store(batch)
    assert all(waiting.done.is_set() for waiting in batch)
    return batch


def test_a_batch_is_one_transaction_and_each_delivery_gets_its_own_row(pool, config, owner):
    batcher = IntakeBatcher(pool, config, "host")
    store_as_one_batch(batcher, [delivery("b-0")])
    batch = store_as_one_batch(batcher, [delivery("b-1"), delivery("b-0"), delivery("b-2", event="ping"),
                                         delivery("b-1")])
    assert [(w.row["outcome"], w.row["awaits_job"]) for w in batch] == [
        ("accepted", True), ("duplicate", False), ("accepted", False), ("duplicate", False)]
    assert batch[0].row["inbox_id"] == batch[3].row["inbox_id"]
    stored = owner.execute("SELECT delivery_id, state, xmin::text AS tx FROM webhook_inbox "
                           "WHERE delivery_id IN ('b-1', 'b-2') ORDER BY delivery_id").fetchall()
    assert [(r["delivery_id"], r["state"]) for r in stored] == [("b-1", "accepted"), ("b-2", "processed")]
    assert stored[0]["tx"] == stored[1]["tx"]  # one transaction
    assert count(owner, "webhook_inbox") == 3


def test_a_value_the_database_refuses_costs_only_its_own_delivery(pool, config, owner):
    batcher = IntakeBatcher(pool, config, "host")
    # PostgreSQL's jsonb cannot hold a NUL (SQLSTATE 22P05): a bug upstream,
    # since normalize() refuses one first, but only its sender may hear of it.
    refused = delivery("r-1", actions={"kind": "pull_request", "note": "a\u0000b"})
    batch = store_as_one_batch(batcher, [delivery("r-0"), refused, delivery("r-2")])
    assert [w.row["outcome"] if w.row else w.error.code for w in batch] == ["accepted", "invalid_input", "accepted"]
    assert count(owner, "webhook_inbox") == 2


def test_an_unreachable_database_answers_every_waiting_delivery_503(config, owner, db_url):
    from app import database

    pool = database.create_pool(db_url, max_size=1, name="closed-test", open_wait_seconds=10)
    pool.close()
    batch = store_as_one_batch(IntakeBatcher(pool, config, "host"), [delivery("u-0"), delivery("u-1")])
    assert [(w.error.status, w.error.code) for w in batch] == [(503, "persistence_unavailable")] * 2
    assert count(owner, "webhook_inbox") == 0


def test_concurrent_deliveries_are_each_stored_once(pool, config, owner):
    batcher = IntakeBatcher(pool, config, "host")
    ids = [f"c-{n % 30}" for n in range(60)]  # each id twice
    outcomes: dict[str, list[str]] = {}
    lock = threading.Lock()

    def send(delivery_id: str):
        row = batcher.store(delivery(delivery_id))
        with lock:
            outcomes.setdefault(delivery_id, []).append(row["outcome"])

    threads = [threading.Thread(target=send, args=(i,)) for i in ids]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert all(sorted(found) == ["accepted", "duplicate"] for found in outcomes.values())
    assert len(outcomes) == 30 and count(owner, "webhook_inbox") == 30


def test_a_batcher_error_reaches_the_request(pool, config):
    batcher = IntakeBatcher(pool, config, "host")
    with pytest.raises(ApiError) as refused:
        batcher.store(delivery("bad id with spaces"))  # intake_invalid_identity: a broken invariant
    assert (refused.value.status, refused.value.code) == (400, "invalid_input")

"""Marketplace deliveries out of order and concurrently (two connections)
end in the same account state as in order."""
from __future__ import annotations

import datetime as dt
import itertools
import threading

import psycopg
import pytest
from psycopg.rows import dict_row

from app import sql_api
from tests.helpers.access import marketplace_body, post_marketplace

T = [dt.datetime(2024, 3, day, tzinfo=dt.timezone.utc) for day in (1, 2, 3)]
NAMES = {"purchased": "marketplace_purchase.purchased.0.json", "cancelled": "marketplace_purchase.cancelled.1.json"}


def apply(conn, account_id: int, action: str, when: dt.datetime, delivery_id: str) -> dict:
    return sql_api.marketplace_apply_event(conn, delivery_id=delivery_id, action=action, account_id=account_id,
                                           account_login="acme", account_type="Organization", effective_date=when,
                                           payload_sha256="0" * 64, payload_bytes=1)


def summary(owner, account_id: int) -> tuple:
    """The entitlement a reader acts on: state, tier, effective date, and the pending erasure deadline."""
    state = owner.execute("SELECT state, tier, effective_date FROM marketplace_accounts WHERE account_id = %s",
                          (account_id,)).fetchone()
    pending = owner.execute("SELECT due_at FROM erasure_requests WHERE account_id = %s AND status = 'pending'",
                            (account_id,)).fetchall()
    return (state["state"], state["tier"], state["effective_date"], [p["due_at"] for p in pending])


EVENT_SETS = {
    # purchase, then cancellation: canceled, erasure due 30 days after the cancellation
    "purchase_then_cancel": [("purchased", 0), ("cancelled", 1)],
    # cancellation, then a strictly newer purchase: active, nothing pending
    "cancel_then_newer_purchase": [("cancelled", 0), ("purchased", 1)],
    # a purchase with the cancellation's timestamp never reopens
    "cancel_and_purchase_same_time": [("cancelled", 1), ("purchased", 1)],
    "three_events": [("purchased", 0), ("cancelled", 1), ("purchased", 2)],
    "cancel_twice_then_purchase": [("cancelled", 0), ("cancelled", 1), ("purchased", 1)],
}


@pytest.mark.parametrize("events", EVENT_SETS.values(), ids=EVENT_SETS.keys())
def test_every_order_converges_to_the_in_order_state(client, owner, events):
    account_ids = []
    for n, order in enumerate(itertools.permutations(events)):
        account_id = 4000 + n
        account_ids.append(account_id)
        for i, (action, day) in enumerate(order):
            body = marketplace_body(NAMES[action], account_id=account_id, effective_date=T[day].isoformat())
            assert post_marketplace(client, body, delivery_id=f"{account_id}-{i}").status_code == 200
    in_order = summary(owner, account_ids[0])
    for account_id in account_ids[1:]:
        assert summary(owner, account_id) == in_order


def test_the_expected_end_states(client, owner, pool):
    with pool.connection() as conn:
        for account_id, events in enumerate(EVENT_SETS.values(), start=5000):
            for i, (action, day) in enumerate(events):
                apply(conn, account_id, action, T[day], f"{account_id}-{i}")
    due = lambda day: T[day] + dt.timedelta(days=30)  # noqa: E731
    assert summary(owner, 5000) == ("canceled", "free", T[1], [due(1)])
    assert summary(owner, 5001) == ("active", "free", T[1], [])
    assert summary(owner, 5002) == ("canceled", "free", T[1], [due(1)])
    assert summary(owner, 5003) == ("active", "free", T[2], [])
    assert summary(owner, 5004) == ("canceled", "free", T[1], [due(1)])


RACES = [
    (("cancelled", 1), ("purchased", 0)),   # older purchase loses
    (("cancelled", 0), ("purchased", 1)),   # newer purchase wins and withdraws the erasure request
    (("cancelled", 1), ("purchased", 1)),   # same time: the cancellation stays
]


@pytest.mark.parametrize("race", RACES, ids=["older_purchase", "newer_purchase", "same_time"])
def test_concurrent_deliveries_on_two_connections_converge(owner, pool, db_url, race):
    rounds = 12
    expected = None
    for n in range(rounds):
        account_id = 6000 + n
        barrier = threading.Barrier(2)
        errors = []

        def deliver(action, day, delivery_id):
            try:
                with psycopg.connect(db_url, autocommit=True, row_factory=dict_row) as conn:
                    conn.execute("SET ROLE boardready_api")
                    barrier.wait(timeout=10)
                    apply(conn, account_id, action, T[day], delivery_id)
            except Exception as exc:  # reported below
                errors.append(exc)

        # Alternate which one starts first so both interleavings occur.
        pair = race if n % 2 == 0 else race[::-1]
        threads = [threading.Thread(target=deliver, args=(a, d, f"{account_id}-{i}")) for i, (a, d) in enumerate(pair)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert errors == []
        state = summary(owner, account_id)
        # In order (cancellation first, then purchase) gives the reference state.
        if expected is None:
            with pool.connection() as conn:
                reference = 7000 + n
                for i, (action, day) in enumerate(race):
                    apply(conn, reference, action, T[day], f"{reference}-{i}")
            expected = summary(owner, reference)
        assert state == expected, (n, pair)
        assert owner.execute("SELECT count(*) AS n FROM marketplace_deliveries WHERE account_id = %s",
                             (account_id,)).fetchone()["n"] == 2


def test_one_delivery_id_racing_itself_is_applied_once(owner, db_url):
    barrier = threading.Barrier(2)
    outcomes = []

    def deliver():
        with psycopg.connect(db_url, autocommit=True, row_factory=dict_row) as conn:
            conn.execute("SET ROLE boardready_api")
            barrier.wait(timeout=10)
            outcomes.append(apply(conn, 8000, "cancelled", T[0], "same-delivery")["outcome"])

    threads = [threading.Thread(target=deliver) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(outcomes) == ["applied", "duplicate"]
    assert owner.execute("SELECT count(*) AS n FROM erasure_requests").fetchone()["n"] == 1

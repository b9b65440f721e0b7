"""Component supply in SQL: classification, price breaks, the per-installation
call budget and the circuit breaker's four transitions with a driven clock."""
from __future__ import annotations

import datetime as dt
import json
import threading

import psycopg
import pytest
from psycopg.rows import dict_row
from psycopg.types.json import Jsonb

from app import sql_api

T0 = dt.datetime(2026, 3, 2, 9, 0, 0, tzinfo=dt.timezone.utc)
INSTALLATION = 7001


def classify(owner, sellers) -> str:
    return owner.execute("SELECT boardready_private.supply_distributor_classification(%s::jsonb) AS c",
                         (None if sellers is None else json.dumps(sellers),)).fetchone()["c"]


@pytest.mark.parametrize("sellers, expected", [
    (None, "unknown"),                                                   # no seller data
    ([], "unknown"),
    ([{"company": {"name": "Digi-Key"}, "isAuthorized": True}], "authorized-distributor"),
    ([{"isAuthorized": False}, {"isAuthorized": True}], "authorized-distributor"),   # any authorized
    ([{"isAuthorized": False}, {"isAuthorized": False}], "marketplace"),             # none authorized
    ([{"company": {"name": "Broker"}}], "unknown"),                      # no authorization signal
    ([{"isAuthorized": False}, {"isAuthorized": None}], "unknown"),      # a seller without a signal
    ([{"isAuthorized": "yes"}], "unknown"),                              # not a boolean: no signal
])
def test_classification_branches(owner, sellers, expected):
    assert classify(owner, sellers) == expected


def prices(*points):
    return [{"quantity": q, "price": p, "currency": c} for q, p, c in points]


def test_price_breaks_come_from_the_authorized_seller_when_both_kinds_exist(owner):
    sellers = [
        {"isAuthorized": False, "offers": [{"inventoryLevel": 9000, "prices": prices((1, 0.01, "USD"), (100, 0.005, "USD"),
                                                                                     (1000, 0.004, "USD"))}]},
        {"isAuthorized": True, "offers": [{"inventoryLevel": 50, "prices": prices((1, 0.10, "USD"), (10, 0.08, "EUR"))}]},
    ]
    breaks = owner.execute("SELECT boardready_private.supply_price_breaks(%s::jsonb) AS b", (json.dumps(sellers),)).fetchone()["b"]
    assert breaks == [{"quantity": 10, "price": 0.08, "currency": "EUR"}, {"quantity": 1, "price": 0.10, "currency": "USD"}]


def test_price_breaks_of_a_marketplace_part_and_of_a_part_without_offers(owner):
    only_marketplace = [{"isAuthorized": False, "offers": [{"prices": prices((5, 1.5, "GBP"))}]}]
    assert owner.execute("SELECT boardready_private.supply_price_breaks(%s::jsonb) AS b",
                         (json.dumps(only_marketplace),)).fetchone()["b"] == [
        {"quantity": 5, "price": 1.5, "currency": "GBP"}]
    assert owner.execute("SELECT boardready_private.supply_price_breaks('[]'::jsonb) AS b").fetchone()["b"] == []


def test_an_observation_records_classification_stock_and_lifecycle(owner):
    parts = [{"partKey": "yageo:RC0603FR-07330RL", "manufacturer": "Yageo", "mpn": "RC0603FR-07330RL",
              "matched": True, "providerPartId": "4321", "lifecycle": "NRND (Last Updated: 3 months ago)",
              "sellers": [{"isAuthorized": True, "offers": [{"inventoryLevel": 120, "prices": prices((1, 0.1, "USD"))}]},
                          {"isAuthorized": False, "offers": [{"inventoryLevel": 5}]}]}]
    sql_api.supply_observations_record(owner, installation_id=INSTALLATION, parts=Jsonb(parts), now=T0)
    row = owner.execute("SELECT * FROM boardready.part_lifecycle_observations").fetchone()
    assert row["lifecycle_status"] == "nrnd" and row["distributor_classification"] == "authorized-distributor"
    assert row["stock"] == 125 and row["authorized_stock"] == 120 and row["provider_part_id"] == "4321"
    assert row["fetched_at"] == T0


# -- the call budget and the breaker ------------------------------------------------------------

LIMIT, THRESHOLD, COOLDOWN_MS = 30, 5, 300_000


def acquire(conn, now, limit=LIMIT):
    return sql_api.component_provider_acquire(conn, installation_id=INSTALLATION, limit_per_minute=limit,
                                              cooldown_ms=COOLDOWN_MS, trial_lease_ms=60000, now=now)


def record(conn, now, success, token=None):
    return sql_api.component_provider_record(conn, installation_id=INSTALLATION, success=success, trial_token=token,
                                             threshold=THRESHOLD, now=now)


def transitions(owner):
    return [(r["from_state"], r["to_state"], r["reason"]) for r in owner.execute(
        "SELECT * FROM ops.component_provider_breaker_transitions ORDER BY id").fetchall()]


def test_the_budget_is_shared_by_two_workers_and_work_over_it_waits(db_url):
    """Two workers (two connections, two threads) together get exactly 30 calls in one minute."""
    granted = []
    lock = threading.Lock()

    def worker():
        with psycopg.connect(db_url, autocommit=True, row_factory=dict_row) as conn:
            for _ in range(25):
                row = acquire(conn, T0 + dt.timedelta(seconds=10))
                with lock:
                    granted.append(row["outcome"])

    threads = [threading.Thread(target=worker) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert granted.count("allowed") == 30 and granted.count("rate_limited") == 20
    with psycopg.connect(db_url, autocommit=True, row_factory=dict_row) as conn:
        waiting = acquire(conn, T0 + dt.timedelta(seconds=10))
        assert waiting["outcome"] == "rate_limited" and waiting["retry_after_ms"] == 50_000
        assert acquire(conn, T0 + dt.timedelta(seconds=60))["outcome"] == "allowed"   # the next minute


def test_the_breaker_four_transitions_with_a_driven_clock(owner):
    now = T0
    for failure in range(THRESHOLD - 1):
        assert acquire(owner, now)["outcome"] == "allowed"
        assert record(owner, now, False)["breaker_state"] == "closed"
    assert record(owner, now, True)["breaker_state"] == "closed"      # a success resets the count
    for failure in range(THRESHOLD):
        acquire(owner, now)
        state = record(owner, now, False)
    assert state["breaker_state"] == "open" and state["transitioned"]           # closed -> open
    refused = acquire(owner, now + dt.timedelta(minutes=4))
    assert refused["outcome"] == "breaker_open" and refused["retry_after_ms"] == 60_000
    trial = acquire(owner, now + dt.timedelta(minutes=5))                      # open -> half-open
    assert trial["outcome"] == "trial" and trial["trial_token"] is not None
    assert record(owner, now + dt.timedelta(minutes=5), False, trial["trial_token"])["breaker_state"] == "open"
    later = now + dt.timedelta(minutes=10, seconds=1)
    trial = acquire(owner, later)
    assert record(owner, later, True, trial["trial_token"])["breaker_state"] == "closed"   # half-open -> closed
    assert transitions(owner) == [
        ("closed", "open", "failure_threshold"), ("open", "half-open", "cooldown_elapsed"),
        ("half-open", "open", "trial_failed"), ("open", "half-open", "cooldown_elapsed"),
        ("half-open", "closed", "trial_succeeded")]
    assert owner.execute("SELECT state FROM ops.component_provider_breakers").fetchone()["state"] == "closed"


def test_half_open_lets_exactly_one_trial_call_out_under_concurrency(db_url, owner):
    for _ in range(THRESHOLD):
        acquire(owner, T0)
        record(owner, T0, False)
    after = T0 + dt.timedelta(minutes=6)
    outcomes = []
    lock = threading.Lock()
    barrier = threading.Barrier(6)

    def caller():
        with psycopg.connect(db_url, autocommit=True, row_factory=dict_row) as conn:
            barrier.wait()
            row = acquire(conn, after)
            with lock:
                outcomes.append(row["outcome"])

    threads = [threading.Thread(target=caller) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(outcomes) == ["trial"] + ["trial_in_flight"] * 5
    # A late failure of a call made before the breaker opened changes nothing in half-open.
    assert record(owner, after, False)["transitioned"] is False


def test_a_trial_caller_that_dies_frees_the_trial_after_its_lease(owner):
    for _ in range(THRESHOLD):
        acquire(owner, T0)
        record(owner, T0, False)
    first = acquire(owner, T0 + dt.timedelta(minutes=5))
    assert first["outcome"] == "trial"
    assert acquire(owner, T0 + dt.timedelta(minutes=5, seconds=30))["outcome"] == "trial_in_flight"
    second = acquire(owner, T0 + dt.timedelta(minutes=6, seconds=1))
    assert second["outcome"] == "trial" and second["trial_token"] != first["trial_token"]
    # The dead caller's outcome, arriving late, no longer counts.
    assert record(owner, T0 + dt.timedelta(minutes=6, seconds=2), True, first["trial_token"])["transitioned"] is False


def test_every_foreign_key_to_a_release_run_is_indexed(owner):
    """Deleting a release run (the retention purge, an erasure) checks every table
    that refers to it: supply_checks.release_run_id among them. An index leading
    with the referring column keeps each check from reading the whole table."""
    unindexed = owner.execute(
        "SELECT c.conrelid::regclass::text AS referrer, a.attname AS column_name FROM pg_constraint c "
        "  JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = c.conkey[1] "
        " WHERE c.contype = 'f' AND c.confrelid = 'boardready.release_runs'::regclass AND cardinality(c.conkey) = 1 "
        "   AND NOT EXISTS (SELECT 1 FROM pg_index i WHERE i.indrelid = c.conrelid AND i.indkey[0] = c.conkey[1]) "
        " ORDER BY 1, 2").fetchall()
    assert unindexed == []

"""The SLO policy host-cloud-ga-v1: each trigger's gate with a driven clock
(fires once, recovers once, never below its duration, volume or snapshot
count), the events, and the aggregate snapshot computed in SQL."""
from __future__ import annotations

import json

import pytest

from app import sql_api
from tests.helpers.paths import webhook_fixture
from tests.helpers.service import post_webhook
from tests.helpers.reconciliation import events, later
from workers.slo import POLICY_VERSION, SloPolicy, SloWorker, take_snapshot

HEALTHY = {"webhook_acceptance_p95_ms": 40.0, "lifecycle_queue_age_seconds": 0.0, "outbox_lag_seconds": 0.0,
           "reconciliation_backlog": 0, "stale_attempts": 0, "terminal_runs": 0, "terminal_failure_rate_bp": 0}


def feed(policy: SloPolicy, snapshots: list[dict], every: float = 30, start: float = 1000.0):
    """Evaluate snapshots taken `every` seconds apart; returns (fired, recovered) per snapshot."""
    out = []
    for index, snapshot in enumerate(snapshots):
        evaluation = policy.evaluate({**HEALTHY, **snapshot}, start + index * every)
        out.append((evaluation.fired, evaluation.recovered))
    return out


def fired(outcomes, name):
    return [i for i, (f, _) in enumerate(outcomes) if name in f]


def recovered(outcomes, name):
    return [i for i, (_, r) in enumerate(outcomes) if name in r]


@pytest.mark.parametrize("signal, breach", [
    ("webhook_acceptance_p95", {"webhook_acceptance_p95_ms": 1500.0}),
    ("queue_lag", {"lifecycle_queue_age_seconds": 61.0}),
    ("queue_lag", {"outbox_lag_seconds": 90.0}),
])
def test_duration_gates_fire_after_five_minutes_once_and_recover_once(signal, breach):
    # 10 snapshots 30 s apart span 270 s: not yet; the 11th is 300 s after the first.
    outcomes = feed(SloPolicy(), [breach] * 15 + [{}] * 3)
    assert fired(outcomes, signal) == [10]
    assert recovered(outcomes, signal) == [15]


def test_a_breach_shorter_than_five_minutes_never_fires():
    outcomes = feed(SloPolicy(), ([{"webhook_acceptance_p95_ms": 5000.0}] * 10 + [{}]) * 3)
    assert fired(outcomes, "webhook_acceptance_p95") == []
    assert recovered(outcomes, "webhook_acceptance_p95") == []


def test_exactly_at_the_threshold_is_healthy():
    outcomes = feed(SloPolicy(), [{"webhook_acceptance_p95_ms": 1000.0, "lifecycle_queue_age_seconds": 60.0,
                                   "reconciliation_backlog": 20, "terminal_runs": 40,
                                   "terminal_failure_rate_bp": 500}] * 20, every=60)
    assert all(f == () for f, _ in outcomes)


def test_backlog_above_twenty_fires_at_once():
    outcomes = feed(SloPolicy(), [{"reconciliation_backlog": 21}, {"reconciliation_backlog": 25}, {}])
    assert fired(outcomes, "reconciliation_backlog") == [0]
    assert recovered(outcomes, "reconciliation_backlog") == [2]


def test_backlog_increasing_for_three_snapshots_fires():
    outcomes = feed(SloPolicy(), [{"reconciliation_backlog": n} for n in (1, 2, 2, 3, 4, 4, 4)])
    assert fired(outcomes, "reconciliation_backlog") == [4]          # 2, 3, 4: three increasing snapshots
    assert recovered(outcomes, "reconciliation_backlog") == [5]      # 4 again: no longer increasing, not above 20
    # Two increasing snapshots are not a trend.
    assert fired(feed(SloPolicy(), [{"reconciliation_backlog": n} for n in (1, 2, 2, 3, 3)]),
                 "reconciliation_backlog") == []


def test_stale_attempts_fire_on_the_second_snapshot():
    outcomes = feed(SloPolicy(), [{"stale_attempts": 1}, {}, {"stale_attempts": 2}, {"stale_attempts": 1}, {}])
    assert fired(outcomes, "stale_attempts") == [3]
    assert recovered(outcomes, "stale_attempts") == [4]


def test_failure_rate_needs_twenty_terminal_runs():
    outcomes = feed(SloPolicy(), [{"terminal_runs": 19, "terminal_failure_rate_bp": 5000},
                                  {"terminal_runs": 20, "terminal_failure_rate_bp": 501},
                                  {"terminal_runs": 21, "terminal_failure_rate_bp": 900},
                                  {"terminal_runs": 25, "terminal_failure_rate_bp": 400}])
    assert fired(outcomes, "terminal_failure_rate") == [1]
    assert recovered(outcomes, "terminal_failure_rate") == [3]


def test_a_new_process_starts_healthy_and_a_restart_is_no_recovery():
    first = SloPolicy()
    feed(first, [{"stale_attempts": 1}] * 3)
    assert first.states["stale_attempts"].active
    restarted = SloPolicy()
    outcomes = feed(restarted, [{}] * 3)
    assert recovered(outcomes, "stale_attempts") == []


class FakeConfig:
    slo_snapshot_interval_ms = 30_000

    class reconciliation:
        deadline_seconds = 1800


def test_worker_events_and_failure(db_url, capsys):
    clock = iter(range(0, 10_000, 30))
    worker = SloWorker(FakeConfig(), db_url, clock=lambda: next(clock))
    evaluation = worker.evaluate_once()
    assert evaluation.health == "healthy" and evaluation.active == ()
    [event] = events(capsys, "worker.control_plane_slo_evaluation")
    assert (event["policyVersion"], event["health"], event["activeSignals"]) == (POLICY_VERSION, "healthy", [])
    worker._conn.close()

    broken = SloWorker(FakeConfig(), db_url.replace("/boardready_t_", "/no_such_database_"))
    assert broken.evaluate_once() is None
    [failed] = events(capsys, "worker.control_plane_slo_failed")
    assert set(failed) == {"ts", "level", "event", "errorClass"}


def test_firing_and_recovered_events(capsys):
    from workers.slo import log_evaluation
    policy = SloPolicy()
    for index, backlog in enumerate((30, 0)):
        snapshot = {**HEALTHY, "reconciliation_backlog": backlog}
        log_evaluation(policy, snapshot, policy.evaluate(snapshot, index * 30.0))
    err = capsys.readouterr().err
    lines = [json.loads(line) for line in err.splitlines() if line.startswith("{")]
    names = [(e["event"], e.get("signal"), e.get("health")) for e in lines]
    assert names == [("worker.control_plane_slo_firing", "reconciliation_backlog", None),
                     ("worker.control_plane_slo_evaluation", None, "unhealthy"),
                     ("worker.control_plane_slo_recovered", "reconciliation_backlog", None),
                     ("worker.control_plane_slo_evaluation", None, "healthy")]
    assert lines[1]["activeSignals"] == ["reconciliation_backlog"]


def test_snapshot_aggregates_in_sql(client, owner, db_url):
    for index in range(3):
        body = webhook_fixture("installation.created.1.json")
        assert post_webhook(client, body, "installation", delivery_id=f"d-slo-{index}").status_code in (200, 202)
    owner.execute("UPDATE webhook_inbox SET acceptance_ms = v.ms FROM (VALUES (1, 10), (2, 20), (3, 2000)) "
                  "AS v (id, ms) WHERE webhook_inbox.id = v.id")
    import psycopg
    from psycopg.rows import dict_row
    with psycopg.connect(db_url, autocommit=True, row_factory=dict_row) as conn:
        snapshot = take_snapshot(conn, 1800)
    assert snapshot["webhook_deliveries"] == 3
    assert 1800 < snapshot["webhook_acceptance_p95_ms"] <= 2000    # percentile_cont over 10, 20, 2000
    assert snapshot["lifecycle_accepted"] == 3 and snapshot["lifecycle_queue_age_seconds"] >= 0
    assert snapshot["reconciliation_backlog"] == 0
    assert snapshot["reconciliation_backlog_by_kind"] == {"lifecycle_inbox": 0, "release_run": 0,
                                                          "workflow_attempt": 0}
    assert (snapshot["stale_attempts"], snapshot["terminal_runs"], snapshot["terminal_failure_rate_bp"]) == (0, 0, 0)
    # Aggregates only: no identifier or payload of any tenant.
    assert "Codertocat" not in json.dumps(snapshot, default=str)
    # Older deliveries leave the acceptance window.
    with psycopg.connect(db_url, autocommit=True, row_factory=dict_row) as conn:
        later_snapshot = sql_api.slo_snapshot(conn, deadline_seconds=1800, now=later(120))
    assert later_snapshot["webhook_deliveries"] == 0 and later_snapshot["webhook_acceptance_p95_ms"] is None
    assert later_snapshot["lifecycle_queue_age_seconds"] >= 119

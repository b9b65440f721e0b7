"""GET /metrics (operator token): the SLI snapshot and the processes' own
counters in the Prometheus text format.

From the database, the same on every replica: the aggregate snapshot the SLO
policy host-cloud-ga-v1 evaluates (boardready.slo_snapshot: counts, ages,
percentiles, no tenant data), the reconcilers' poll and success times, and
each queue's depth and oldest item's age by kind (boardready.metrics_queues),
read with a statement timeout.

From the processes (app/telemetry.py): requests by route and status with
their latency, database pool use and waits, code host calls by outcome; in
multiprocess mode the sum over bin/serve's processes. The alert rules that
use them are in docs/operations.md, "Metrics of the processes".
"""
from __future__ import annotations

import datetime as dt

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.exposition import CONTENT_TYPE_LATEST

from app import sql_api, telemetry
from app.web import db
from app.web.operator import OperatorResource

PREFIX = "boardready_"


def _seconds(value: dt.datetime | str | None) -> float | None:
    if value is None:
        return None
    if isinstance(value, str):
        value = dt.datetime.fromisoformat(value)
    return value.timestamp()


def _gauge(name: str, documentation: str, value=None, labels: dict | None = None, samples=None) -> GaugeMetricFamily:
    family = GaugeMetricFamily(PREFIX + name, documentation, labels=list(labels or {}) or None)
    if samples is not None:
        for label_values, sample in samples:
            if sample is not None:
                family.add_metric(label_values, sample)
    elif value is not None:
        family.add_metric([], value)
    return family


class _Snapshot:
    """A one-shot collector over one snapshot row."""

    def __init__(self, snapshot: dict, configuration_valid: bool, queues: list[dict] | None = None):
        self.s, self.valid, self.queues = snapshot, configuration_valid, queues or []

    def collect(self):
        s = self.s
        p95 = s["webhook_acceptance_p95_ms"]
        yield _gauge("webhook_deliveries_recent", "Deliveries received in the acceptance window (60 s).",
                     s["webhook_deliveries"])
        yield _gauge("webhook_acceptance_p95_seconds", "p95 of the server-side webhook acceptance time "
                     "over the acceptance window (absent without deliveries).", None if p95 is None else p95 / 1000)
        yield _gauge("queue_items", "Queue items by queue and status (completed items are not counted).",
                     labels={"queue": 0, "status": 0}, samples=[
                         (["lifecycle", status], s[f"lifecycle_{status}"]) for status in
                         ("accepted", "leased", "dead_letter")] + [
                         (["outbox", status], s[f"outbox_{status}"]) for status in
                         ("accepted", "leased", "dead_letter")])
        yield _gauge("lifecycle_queue_age_seconds", "Age of the oldest accepted or leased lifecycle job.",
                     s["lifecycle_queue_age_seconds"])
        yield _gauge("outbox_lag_seconds", "How long the oldest due outbox item has waited past its due time.",
                     s["outbox_lag_seconds"])
        yield _gauge("reconciliation_backlog", "Open reconciliation items by kind.", labels={"kind": 0},
                     samples=[([kind], n) for kind, n in sorted(s["reconciliation_backlog_by_kind"].items())])
        yield _gauge("stale_attempts", "Current attempts of open release runs older than the reconciliation "
                     "deadline.", s["stale_attempts"])
        yield _gauge("terminal_runs", "Release runs that ended in the last hour.", s["terminal_runs"])
        yield _gauge("failed_runs", "Release runs that failed or timed out in the last hour.", s["failed_runs"])
        yield _gauge("terminal_failure_rate_basis_points", "Failed or timed-out share of the terminal runs of "
                     "the last hour, in basis points.", s["terminal_failure_rate_bp"])
        beats = s["reconcilers"] or {}
        yield _gauge("reconciler_last_poll_timestamp_seconds", "When each reconciler last polled (any replica).",
                     labels={"reconciler": 0}, samples=[([name], _seconds(beat.get("lastPollAt")))
                                                        for name, beat in sorted(beats.items())])
        yield _gauge("reconciler_last_success_timestamp_seconds", "When each reconciler last finished a pass "
                     "without error (any replica).", labels={"reconciler": 0},
                     samples=[([name], _seconds(beat.get("lastSuccessAt"))) for name, beat in sorted(beats.items())])
        yield _gauge("reconciliation_configuration_valid", "1 when every SERVICE_RECONCILIATION_* value is valid.",
                     1 if self.valid else 0)
        yield _gauge("queue_depth", "Open (accepted or leased) items by queue and kind.", labels={"queue": 0, "kind": 0},
                     samples=[([q["queue"], q["kind"]], q["depth"]) for q in self.queues])
        yield _gauge("queue_oldest_age_seconds", "Age of the oldest open item by queue and kind (since it was "
                     "created).", labels={"queue": 0, "kind": 0},
                     samples=[([q["queue"], q["kind"]], q["oldest_age_seconds"]) for q in self.queues])


def render(snapshot: dict, configuration_valid: bool, queues: list[dict] | None = None) -> bytes:
    """The database's figures, then the processes' (their names do not overlap)."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(_Snapshot(snapshot, configuration_valid, queues))
    return generate_latest(registry) + generate_latest(telemetry.registry())


class Metrics(OperatorResource):
    def _snapshot(self, conn) -> dict:
        with conn.transaction():
            conn.execute(f"SET LOCAL statement_timeout = {int(self.config.db_acquire_timeout_ms)}")
            return sql_api.slo_snapshot(conn, deadline_seconds=self.config.reconciliation.deadline_seconds)

    def _queues(self, conn) -> list[dict]:
        with conn.transaction():
            conn.execute(f"SET LOCAL statement_timeout = {int(self.config.db_acquire_timeout_ms)}")
            return sql_api.metrics_queues(conn)

    def on_get(self, req, resp):
        self.gate.authenticate(req)
        snapshot = db.run(self.pool, self.config, self._snapshot, idempotent=True)
        queues = db.run(self.pool, self.config, self._queues, idempotent=True)
        resp.content_type = CONTENT_TYPE_LATEST
        resp.data = render(snapshot, self.config.reconciliation.valid, queues)

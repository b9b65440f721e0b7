"""What every reconciler does: detect, claim, observe, report.

Each reconciler (workflow state, check run publication, inbox and job drift)
detects candidates with one SQL function, run by the `reconciliation_detect`
schedule every SERVICE_RECONCILIATION_DETECT_INTERVAL_MS (workers/schedules.py),
and its items are claimed by the one worker loop (workers/queue_worker.py)
through ReconciliationQueue (workers/reconcilers.py) every
SERVICE_RECONCILIATION_POLL_MS, at most SERVICE_RECONCILIATION_CONCURRENCY at
once, with the lease renewed while an observation runs. An item is observed
(usually one code host lookup) and the observation reported through one SQL
function, which decides, re-checks the lease and applies the repair in one
transaction. There is no NOTIFY: reconciliation is slow by design and polling
is the truth.

Events (JSON log lines, ids and reason codes only, never payloads), with the
reconciler's prefix (`worker.reconciliation`, `worker.check_run_reconciliation`,
`worker.lifecycle_reconciliation`): `_detected` per new item,
`_detection_failed`, `_claim_failed`, `_terminal` per item that ended. Each pass
also records the reconciler's poll and success times in the database, so every
replica reports the fleet's truth (GET /api/v1/operator/reconciliation).
"""
from __future__ import annotations

import datetime as dt
import threading
from typing import Protocol

from app import database, queries, sql_api
from app.config import ReconciliationSettings
from app.jsonlog import log
from app.queueing import LeaseLost, at, worker_identity

# Claims of one item without an observation before it is dead-lettered (an
# unexpected error each time: a bug or a database that keeps failing).
MAX_FAILED_CLAIMS = 5
#: An observation is one code host lookup; the worker loop renews the lease while it runs.
LEASE_SECONDS = 120


class Reconciler(Protocol):
    name: str            # workflow, check_run, lifecycle (reconciler_heartbeats)
    event_prefix: str    # worker.reconciliation, ...

    def detect(self, conn, settings: ReconciliationSettings, now: dt.datetime | None) -> list[dict]: ...

    def claim(self, conn, worker_id: str, limit: int, now: dt.datetime | None) -> list[dict]: ...

    def observe(self, pool, item: dict, now: dt.datetime | None) -> dict:
        """Look, report the observation; return the report's row (outcome, reason_code, terminal, ...)."""


class SqlReconciler:
    """What every reconciler does the same way: detection and claims are the
    SQL functions reconciliation_detect and reconciliation_claim for its item
    kind (sql/functions/reconciliation.sql), and each claimed item carries
    what its kind's subjects view says of its subject; a subclass names its
    kind and view, and observes."""
    name: str
    event_prefix: str
    item_kind: str            # reconciliation_items.kind: workflow_attempt, release_run, lifecycle_inbox
    subject_view: str | None  # reconciliation_<kind>_subjects, or None: the item alone is enough

    def detect(self, conn, settings: ReconciliationSettings, now: dt.datetime | None) -> list[dict]:
        return sql_api.reconciliation_detect(conn, kind=self.item_kind,
                                             observation_seconds=settings.observation_seconds,
                                             deadline_seconds=settings.deadline_seconds, **at(now))

    def claim(self, conn, worker_id: str, limit: int, now: dt.datetime | None) -> list[dict]:
        items = sql_api.reconciliation_claim(conn, kind=self.item_kind, worker=worker_id, limit=limit,
                                             lease_seconds=LEASE_SECONDS, max_attempts=MAX_FAILED_CLAIMS, **at(now))
        if not items or self.subject_view is None:
            return items
        subjects = {row["subject_id"]: row for row in queries.fetch_all(
            conn, "reconciliation_subjects", shape={"view": self.subject_view},
            subject_ids=[item["subject_id"] for item in items])}
        # An item whose subject is gone is not observed: its lease expires and
        # the claims after it dead-letter it (MAX_FAILED_CLAIMS).
        return [{**item, **subjects[item["subject_id"]]} for item in items if item["subject_id"] in subjects]

    def report(self, pool, item: dict, now: dt.datetime | None, **observation) -> dict:
        """Apply what was seen of a leased item (reconciliation_report); its row says the outcome."""
        with database.connection(pool) as conn:
            return sql_api.reconciliation_report(conn, item_id=item["item_id"], lease_token=item["lease_token"],
                                                 **observation, **at(now))


def _ids(report: dict) -> dict:
    """The ids a report names, camelCased for the event (release_run_id -> releaseRunId)."""
    def camel(name: str) -> str:
        first, *rest = name.split("_")
        return first + "".join(part.title() for part in rest)
    return {camel(k): v for k, v in report.items() if k.endswith("_id") and k != "item_id" and v is not None}


class Reconciliation:
    """One reconciler with its pool: detection (the reconciliation_detect
    schedule), claims and observations (ReconciliationQueue in the worker
    loop; tests/helpers/drivers.py drives them in turn)."""

    def __init__(self, reconciler: Reconciler, pool, settings: ReconciliationSettings,
                 stop: threading.Event | None = None):
        self.reconciler = reconciler
        self.pool = pool
        self.settings = settings
        self.stop = stop or threading.Event()
        self.name = f"reconcile-{reconciler.name}"
        self.worker_id = worker_identity(self.name)

    def _event(self, suffix: str, **fields) -> None:
        level = "warning" if suffix.endswith("failed") else "info"
        log(f"{self.reconciler.event_prefix}_{suffix}", level=level, reconciler=self.reconciler.name, **fields)

    def _heartbeat(self, succeeded: bool, now: dt.datetime | None) -> None:
        try:
            with database.connection(self.pool, 5) as conn:
                sql_api.reconciler_heartbeat(conn, reconciler=self.reconciler.name, succeeded=succeeded, **at(now))
        except Exception as exc:  # the database is away: the next pass tries again
            log("worker.reconciliation_heartbeat_failed", level="warning", reconciler=self.reconciler.name,
                errorClass=type(exc).__name__)

    # -- detection ------------------------------------------------------------
    def detect(self, now: dt.datetime | None = None) -> list[dict]:
        try:
            with database.connection(self.pool, 5) as conn:
                rows = self.reconciler.detect(conn, self.settings, now)
        except Exception as exc:
            self._event("detection_failed", errorClass=type(exc).__name__)
            self._heartbeat(False, now)
            return []
        for row in rows:
            self._event("detected", itemId=row["item_id"], subjectId=row["subject_id"],
                        installationId=row["installation_id"], reasonCode=row["reason_code"])
        self._heartbeat(True, now)
        return rows

    # -- items ----------------------------------------------------------------
    def claim(self, limit: int, now: dt.datetime | None = None, worker_id: str | None = None) -> list[dict] | None:
        """The claimed items, each with its `kind`, or None when the claim failed."""
        try:
            with database.connection(self.pool, 5) as conn:
                claimed = self.reconciler.claim(conn, worker_id or self.worker_id, limit, now)
        except Exception as exc:
            self._event("claim_failed", errorClass=type(exc).__name__)
            self._heartbeat(False, now)
            return None
        self._heartbeat(True, now)
        return [{**item, "kind": self.reconciler.item_kind} for item in claimed]

    def observe(self, item: dict, now: dt.datetime | None = None) -> dict:
        """Observe one claimed item and report it; raises LeaseLost, or what the observation raised."""
        report = self.reconciler.observe(self.pool, item, now)
        if report["outcome"] == "lease_lost":
            raise LeaseLost()
        if report["terminal"]:
            self._event("terminal", itemId=item["item_id"], outcome=report["outcome"],
                        reasonCode=report["reason_code"], **_ids(report))
        return report

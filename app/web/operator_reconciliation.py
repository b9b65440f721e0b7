"""GET /api/v1/operator/reconciliation (operator token): the reconcilers' state.

The spec's readiness body allows no other properties, so the operational
fields its guidance names live here: whether the reconciliation settings are
valid, and each reconciler's last poll and last successful pass. They are read
from the database (reconciler_heartbeats, written by whichever worker replica
did the work), so every API replica reports the fleet's truth, not its own.
"""
from __future__ import annotations

from app import sql_api
from app.web import db
from app.web.operator import OperatorResource
from app.web.tokens import iso

# reconciler (reconciler_heartbeats) -> the name in the field names
FIELD_NAMES = {"workflow": "Workflow", "check_run": "CheckRun", "lifecycle": "Lifecycle"}


def reconciliation_body(config, rows: list[dict]) -> dict:
    settings = config.reconciliation
    body: dict = {"ok": True, "reconciliationConfigurationValid": settings.valid}
    for row in rows:
        name = FIELD_NAMES[row["reconciler"]]
        body[f"last{name}ReconciliationPollAt"] = iso(row["last_poll_at"])
        body[f"lastSuccessful{name}ReconciliationAt"] = iso(row["last_success_at"])
    body["reconcilers"] = [{
        "reconciler": row["reconciler"], "kind": row["kind"], "openItems": row["open_items"],
        "dueItems": row["due_items"], "oldestOpenAt": iso(row["oldest_open_at"]),
        "completedItems": row["completed_items"], "failedItems": row["failed_items"],
        "deadLetterItems": row["dead_letter_items"],
    } for row in rows]
    body["settings"] = {
        "concurrency": settings.concurrency, "pollMs": settings.poll_ms,
        "detectIntervalMs": settings.detect_interval_ms, "observationSeconds": settings.observation_seconds,
        "deadlineSeconds": settings.deadline_seconds, "nextCheckSeconds": settings.next_check_seconds,
    }
    return body


class OperatorReconciliation(OperatorResource):
    def on_get(self, req, resp):
        self.gate.authenticate(req)
        rows = db.call(self.pool, self.config, sql_api.reconciliation_status, idempotent=True)
        resp.media = reconciliation_body(self.config, rows)

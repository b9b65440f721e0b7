"""The three reconcilers of a worker process, and the queue that runs their
items in the one worker loop."""
from __future__ import annotations

import threading

from app import channels
from app.queueing import SqlQueue
from workers.reconcile import LEASE_SECONDS, MAX_FAILED_CLAIMS, Reconciliation
from workers.reconcile_check_runs import CheckRunReconciler
from workers.reconcile_lifecycle import LifecycleReconciler
from workers.reconcile_workflow import WorkflowReconciler


def build_reconciliations(config, pool, host, stop: threading.Event | None = None) -> list[Reconciliation]:
    """host is None when the app is not configured: lifecycle drift is still
    repaired, and code host lookups count as unavailable (fail closed at the deadline)."""
    settings = config.reconciliation
    return [Reconciliation(reconciler, pool, settings, stop) for reconciler in (
        WorkflowReconciler(settings, host),
        CheckRunReconciler(settings, host, config.host_app_id, config.public_url),
        LifecycleReconciler(),
    )]


class ReconciliationQueue(SqlQueue):
    """The reconciliation kinds of work_items, one handler per kind (the reconciler that observes it)."""

    name = "reconcile"
    channel = channels.RECONCILIATION
    table = "work_items"
    work_queue = "reconciliation"
    id_field = "item_id"

    def __init__(self, config, reconciliations: list[Reconciliation]):
        super().__init__(config)
        self.lease_seconds, self.max_attempts = LEASE_SECONDS, MAX_FAILED_CLAIMS
        self.reconciliations = {r.reconciler.item_kind: r for r in reconciliations}
        self.handlers = {kind: self._observer(r) for kind, r in self.reconciliations.items()}

    @staticmethod
    def _observer(reconciliation: Reconciliation):
        def observe(pool, item: dict) -> str:
            return reconciliation.observe(item)["outcome"]
        return observe

    def claim(self, conn, worker_id: str, limit: int) -> list[dict]:
        """Due items of every kind, up to `limit` in all; a kind whose claim
        failed is logged (and its heartbeat marked) by its reconciliation."""
        claimed: list[dict] = []
        for reconciliation in self.reconciliations.values():
            if len(claimed) >= limit:
                break
            claimed.extend(reconciliation.claim(limit - len(claimed), worker_id=worker_id) or [])
        return claimed

"""The three reconcilers of a worker process, ready to run as threads."""
from __future__ import annotations

import threading

from workers.reconcile import ReconcileLoop
from workers.reconcile_check_runs import CheckRunReconciler
from workers.reconcile_lifecycle import LifecycleReconciler
from workers.reconcile_workflow import WorkflowReconciler


def build_reconcilers(config, pool, host, stop: threading.Event) -> list[ReconcileLoop]:
    """host is None when the app is not configured: lifecycle drift is still
    repaired, and code host lookups count as unavailable (fail closed at the deadline)."""
    settings = config.reconciliation
    return [ReconcileLoop(reconciler, pool, settings, stop) for reconciler in (
        WorkflowReconciler(settings, host),
        CheckRunReconciler(settings, host, config.host_app_id, config.public_url),
        LifecycleReconciler(),
    )]

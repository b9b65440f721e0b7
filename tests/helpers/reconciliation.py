"""What the reconciliation tests share: a driven clock, the reconcile loops
built from a configuration, and reading items back."""
from __future__ import annotations

import datetime as dt

from workers.reconcile import Reconciliation
from workers.reconcile_check_runs import CheckRunReconciler
from workers.reconcile_lifecycle import LifecycleReconciler
from workers.reconcile_workflow import WorkflowReconciler

OBSERVATION = 300
DEADLINE = 1800
NEXT_CHECK = 60


def utcnow() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc)


def later(seconds: float, start: dt.datetime | None = None) -> dt.datetime:
    return (start or utcnow()) + dt.timedelta(seconds=seconds)


def lifecycle_loop(config, pool) -> Reconciliation:
    return Reconciliation(LifecycleReconciler(), pool, config.reconciliation)


def workflow_loop(config, pool, host) -> Reconciliation:
    return Reconciliation(WorkflowReconciler(config.reconciliation, host), pool, config.reconciliation)


def check_run_loop(config, pool, host) -> Reconciliation:
    reconciler = CheckRunReconciler(config.reconciliation, host, config.host_app_id, config.public_url)
    return Reconciliation(reconciler, pool, config.reconciliation)


def items(owner, kind: str | None = None) -> list[dict]:
    if kind is None:
        return owner.execute("SELECT * FROM ops.reconciliation_items ORDER BY id").fetchall()
    return owner.execute("SELECT * FROM ops.reconciliation_items WHERE kind = %s ORDER BY id", (kind,)).fetchall()


def audit(owner, event_type: str) -> list[dict]:
    return owner.execute("SELECT * FROM audit_events WHERE event_type = %s ORDER BY occurred_at",
                         (event_type,)).fetchall()


def events(capsys, name: str) -> list[dict]:
    """The JSON log lines named `name` that the code under test wrote to stderr."""
    import json
    lines = capsys.readouterr().err.splitlines()
    return [e for e in (json.loads(line) for line in lines if line.startswith("{")) if e.get("event") == name]


def due_now(owner) -> None:
    """Queue rows a driven clock created are due at that (future) instant; the
    real-time workers compare with the database's clock: make them due now."""
    owner.execute("UPDATE outbox_items SET run_after = now() WHERE status = 'accepted'")
    owner.execute("UPDATE lifecycle_jobs SET run_after = now() WHERE status = 'accepted'")

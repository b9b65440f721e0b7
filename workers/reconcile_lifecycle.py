"""Inbox and job drift reconciliation (kind lifecycle_inbox).

`lifecycle_job_missing`: a non-terminal delivery older than the observation
window has no job; the job is recreated with the delivery's idempotency key,
and it reads the normalized actions persisted on the inbox row.
`lifecycle_inbox_state_drift`: the inbox state is not its job's projection
(the job's status is authoritative); the state is corrected. Both repairs are
one SQL function with the inbox row locked, so a concurrent repair completes
without a second job. No code host call is involved.
"""
from __future__ import annotations

from workers.reconcile import SqlReconciler


class LifecycleReconciler(SqlReconciler):
    name = "lifecycle"
    item_kind = "lifecycle_inbox"
    subject_view = None  # the repair reads the inbox row itself
    event_prefix = "worker.lifecycle_reconciliation"

    def observe(self, pool, item, now):
        return self.report(pool, item, now)

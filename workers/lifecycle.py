"""The lifecycle job queue: installation, repository and pull request events.

The handler is entirely in SQL (lifecycle_job_run): it applies the job's
normalized actions and completes the job in one transaction, and refuses when
the lease was taken over. The outbox work a job queues is announced after its
commit, by one coalesced NOTIFY (app/wakeup.py), not in the job's transaction.
While a burst of deliveries arrives, the jobs wait for it to end
(workers/intake_first.py).
"""
from __future__ import annotations

import threading

from app import channels, database, sql_api
from app.queueing import LeaseLost, SqlQueue
from app.wakeup import Waker
from workers.intake_first import IntakeBursts


class LifecycleQueue(SqlQueue):
    name = "lifecycle"
    channel = channels.LIFECYCLE_JOBS
    table = "lifecycle_jobs"
    id_field = "job_id"
    claim_function = staticmethod(sql_api.job_claim)
    fail_function = staticmethod(sql_api.job_fail)
    release_function = staticmethod(sql_api.job_release)
    renew_function = staticmethod(sql_api.job_renew_leases)
    id_param = "job_id"
    #: lifecycle_jobs.kind is the delivery's event; one SQL handler applies
    #: every event's normalized actions (installation, repository, pull request).
    kind_field = "queue"

    def __init__(self, config):
        super().__init__(config)
        self.handlers = {"lifecycle_job": self._process}
        self._outbox_waker: Waker | None = None
        self._waker_lock = threading.Lock()
        self.bursts = IntakeBursts(config.intake_first_ms / 1000)

    def notified(self, channel: str) -> None:
        """The intake's wake-up (the listener's only channel for this queue)."""
        self.bursts.arrived()

    def claim_hold_seconds(self) -> float:
        return self.bursts.hold_seconds()

    def claim(self, conn, worker_id: str, limit: int) -> list[dict]:
        return [{**item, "queue": "lifecycle_job"} for item in super().claim(conn, worker_id, limit)]

    def _process(self, pool, item: dict) -> str:
        with database.connection(pool) as conn:
            row = sql_api.lifecycle_job_run(conn, job_id=item["job_id"], lease_token=item["lease_token"])
        outcome = row["outcome"]
        if row["outbox_waiting"]:  # committed: wake the outbox workers
            self._outbox_wakeup(pool).poke()
        if outcome == "lease_lost":
            # Another worker owns the job now; its run is the one that counts.
            raise LeaseLost()
        return outcome

    def _outbox_wakeup(self, pool) -> Waker:
        with self._waker_lock:
            if self._outbox_waker is None:
                self._outbox_waker = Waker(pool, channels.OUTBOX)
            return self._outbox_waker

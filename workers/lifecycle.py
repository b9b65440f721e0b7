"""The lifecycle job queue: installation, repository and pull request events.

The handler is entirely in SQL (lifecycle_job_process): it applies the job's
normalized actions and completes the job in one transaction, and refuses when
the lease was taken over.
"""
from __future__ import annotations

from app import database, sql_api
from app.queueing import LeaseLost, SqlQueue


class LifecycleQueue(SqlQueue):
    name = "lifecycle"
    channel = "lifecycle_jobs"
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

    def claim(self, conn, worker_id: str, limit: int) -> list[dict]:
        return [{**item, "queue": "lifecycle_job"} for item in super().claim(conn, worker_id, limit)]

    def _process(self, pool, item: dict) -> str:
        with database.connection(pool) as conn:
            outcome = sql_api.lifecycle_job_process(conn, job_id=item["job_id"],
                                                    lease_token=item["lease_token"])["outcome"]
        if outcome == "lease_lost":
            # Another worker owns the job now; its run is the one that counts.
            raise LeaseLost()
        return outcome

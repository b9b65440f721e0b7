"""The lifecycle job queue: installation, repository and pull request events.

The handler is entirely in SQL (lifecycle_job_process): it applies the job's
normalized actions and completes the job in one transaction, and refuses when
the lease was taken over.
"""
from __future__ import annotations

from app import database
from app.queueing import LeaseLost, failure_codes


class LifecycleQueue:
    name = "lifecycle"
    channel = "lifecycle_jobs"
    table = "lifecycle_jobs"
    id_field = "job_id"

    def __init__(self, config):
        self.config = config
        self.lease_seconds = config.job_lease_seconds

    def claim(self, conn, worker_id: str, limit: int) -> list[dict]:
        return database.call(conn, "job_claim", p_worker=worker_id, p_limit=limit,
                             p_lease_seconds=self.config.job_lease_seconds,
                             p_max_attempts=self.config.job_max_attempts)

    def handle(self, pool, item: dict) -> str:
        with database.connection(pool) as conn:
            outcome = database.call_one(conn, "lifecycle_job_process", p_job_id=item["job_id"],
                                        p_lease_token=item["lease_token"])["outcome"]
        if outcome == "lease_lost":
            # Another worker owns the job now; its run is the one that counts.
            raise LeaseLost()
        return outcome

    def fail(self, conn, item: dict, exc: BaseException) -> dict:
        reason, error_class = failure_codes(exc)
        return database.call_one(conn, "job_fail", p_job_id=item["job_id"], p_lease_token=item["lease_token"],
                                 p_reason_code=reason, p_error_class=error_class,
                                 p_max_attempts=self.config.job_max_attempts)

    def release(self, conn, item: dict) -> None:
        database.call(conn, "job_release", p_job_id=item["job_id"], p_lease_token=item["lease_token"])

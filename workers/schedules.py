"""Periodic work, scheduled the way procrastinate schedules periodic tasks:
one row per schedule (boardready.schedules), leased by the replica that runs
its tick, so that two replicas never both run one. A tick runs in the one
worker loop like any queue item; when it ends the row is due again its
interval later (schedule_complete), also after a failure (a tick is never
dead-lettered: the next one starts over from the data).

Schedules: reconciliation_detect (every reconciler's detection pass),
retention_sweep (erasures, then the retention purge; a NOTIFY on
retention_sweep brings it forward), slo_evaluate (one SLI snapshot and the
policy's triggers), board_refresh (the watched boards due for their daily
refresh become supply work items).
"""
from __future__ import annotations

import threading

from app import database, sql_api
from app.channels import RETENTION_SWEEP, SCHEDULES
from app.queueing import LeaseLost, SqlQueue, failure_codes


class ScheduleQueue(SqlQueue):
    name = "schedules"
    channel = SCHEDULES
    channels = (SCHEDULES, RETENTION_SWEEP)
    table = "schedules"
    release_function = staticmethod(sql_api.schedule_release)
    renew_function = staticmethod(sql_api.schedule_renew_leases)
    id_param = "schedule_id"
    id_field = "schedule_id"
    kind_field = "name"

    def __init__(self, config, ticks: dict[str, tuple]):
        """ticks: schedule name -> (tick(pool, item) -> outcome, interval in ms)."""
        super().__init__(config)
        self.handlers = {name: tick for name, (tick, _) in ticks.items()}
        self.intervals = {name: interval_ms for name, (_, interval_ms) in ticks.items()}
        self._due_now: set[str] = set()
        self._lock = threading.Lock()

    @property
    def poll_ms(self) -> int:
        """Often enough that no schedule waits much past its time."""
        return max(10, min(self.config.worker_poll_ms, *self.intervals.values()))

    def notified(self, channel: str) -> None:
        if channel == RETENTION_SWEEP:
            with self._lock:
                self._due_now.add("retention_sweep")

    def claim(self, conn, worker_id: str, limit: int) -> list[dict]:
        with self._lock:
            due_now, self._due_now = sorted(self._due_now), set()
        return sql_api.schedule_claim(conn, names=sorted(self.handlers), worker=worker_id,
                                      lease_seconds=self.lease_seconds, due_now=due_now)

    def _complete(self, conn, item: dict, outcome: str, **failure) -> bool:
        return sql_api.schedule_complete(conn, schedule_id=item["schedule_id"], lease_token=item["lease_token"],
                                         interval_ms=self.intervals[item["name"]], outcome=outcome, **failure)

    def handle(self, pool, item: dict) -> str:
        outcome = super().handle(pool, item)
        with database.connection(pool) as conn:
            if not self._complete(conn, item, outcome):
                raise LeaseLost()
        return outcome

    def fail(self, conn, item: dict, exc: BaseException) -> dict:
        reason, error_class = failure_codes(exc)
        done = self._complete(conn, item, "failed", reason_code=reason, error_class=error_class)
        return {"outcome": "rescheduled" if done else "lease_lost"}

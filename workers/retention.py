"""The retention and erasure sweep (sql/functions/retention.sql, erasure.sql).

Every SERVICE_RETENTION_INTERVAL_MS (the `retention_sweep` schedule, run by
one replica at a time: workers/schedules.py), or at once when woken on the
`retention_sweep` channel (a cancellation whose erasure is already due, a
legal hold released from a due erasure), the worker:

1. erases due canceled accounts: `erasure_step` until nothing is due, each
   call one transaction that deletes at most SERVICE_RETENTION_BATCH_SIZE rows
   of one account (or records that a legal hold blocks it);
2. purges run summaries older than SERVICE_RUN_RETENTION_DAYS:
   `retention_purge_batch` until a batch finds nothing left, each call at most
   SERVICE_RETENTION_BATCH_SIZE rows;
3. deletes finished supply work items older than that (`work_items_purge`).

Everything it knows is in the database: a worker killed between batches (or
inside one: its transaction rolls back) leaves the erasure request `erasing`
and the retention sweep open, and the next sweep, in this process or another
replica, carries on from the data. Two replicas never run the same batch: the
SQL functions take their locks with a try and answer `busy`.

Events (ids and counts only): `worker.account_erasure_completed`,
`worker.account_erasure_blocked`, `worker.account_erasure_withdrawn`,
`worker.retention_purged` (per sweep that deleted something),
`worker.retention_sweep_failed` (the phase and errorClass; the other phase
still runs, and the next sweep tries again).
"""
from __future__ import annotations

import datetime as dt
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field

from app import database, sql_api
from app.config import RetentionSettings
from app.jsonlog import log
from app.queueing import at

#: Calls per phase of a sweep at most, each deleting at most a batch: a
#: purge larger than this goes on at the next sweep.
MAX_CALLS_PER_SWEEP = 10_000


@dataclass
class SweepReport:
    erasures: list[dict] = field(default_factory=list)   # each erasure_step that did something
    retention: list[dict] = field(default_factory=list)  # each retention_purge_batch that deleted or closed
    work_items: list[dict] = field(default_factory=list)  # each work_items_purge that deleted
    errors: list[BaseException] = field(default_factory=list)


class RetentionWorker:
    name = "retention"

    def __init__(self, settings: RetentionSettings, pool, stop: threading.Event | None = None):
        self.settings = settings
        self.pool = pool
        self.stop = stop or threading.Event()

    # -- one call each ----------------------------------------------------------
    def erasure_step(self, now: dt.datetime | None = None) -> dict:
        with database.connection(self.pool, 5) as conn:
            row = sql_api.erasure_step(conn, batch_size=self.settings.batch_size, **at(now))
        if row["outcome"] == "completed":
            log("worker.account_erasure_completed", erasureRequestId=row["erasure_request_id"],
                accountId=row["account_id"], deleted=row["deleted"], auditEventId=str(row["audit_event_id"]))
        elif row["outcome"] == "blocked":
            log("worker.account_erasure_blocked", erasureRequestId=row["erasure_request_id"],
                accountId=row["account_id"], holdId=row["hold_id"], auditEventId=str(row["audit_event_id"]))
        elif row["outcome"] == "withdrawn":
            log("worker.account_erasure_withdrawn", erasureRequestId=row["erasure_request_id"],
                accountId=row["account_id"])
        return row

    def retention_batch(self, now: dt.datetime | None = None) -> dict:
        with database.connection(self.pool, 5) as conn:
            return sql_api.retention_purge_batch(conn, retention_days=self.settings.run_retention_days,
                                                 batch_size=self.settings.batch_size, **at(now))

    # -- a sweep ------------------------------------------------------------------
    def _calls(self, step, now: dt.datetime | None, goes_on) -> Iterator[dict]:
        """The rows of `step(now)`, called again while `goes_on(row)`, until
        the worker stops or MAX_CALLS_PER_SWEEP calls were made."""
        for _ in range(MAX_CALLS_PER_SWEEP):
            if self.stop.is_set():
                return
            row = step(now)
            if not goes_on(row):
                return
            yield row

    def erase_due(self, now: dt.datetime | None = None) -> list[dict]:
        """erasure_step until nothing is due (or every due account is another worker's)."""
        return list(self._calls(self.erasure_step, now, lambda row: row["outcome"] not in ("idle", "busy")))

    def purge(self, now: dt.datetime | None = None) -> list[dict]:
        """retention_purge_batch until a batch finds nothing left."""
        batches = []
        for row in self._calls(self.retention_batch, now, lambda row: row["outcome"] in ("purged", "completed")):
            batches.append(row)
            if row["outcome"] == "completed":
                log("worker.retention_purged", sweepId=row["sweep_id"], auditEventId=str(row["audit_event_id"]),
                    batches=len(batches) - 1, deletedRows=sum(b["deleted_rows"] for b in batches))
                break
        return batches

    def purge_work_items(self, now: dt.datetime | None = None) -> list[dict]:
        """Finished supply work items past retention, a batch per call, until none is left."""
        batches = []
        for _ in range(MAX_CALLS_PER_SWEEP):
            if self.stop.is_set():
                break
            with database.connection(self.pool, 5) as conn:
                deleted = sql_api.work_items_purge(conn, retention_days=self.settings.run_retention_days,
                                                   batch_size=self.settings.batch_size, **at(now))
            if not deleted:
                break
            batches.append({"work_items_deleted": deleted})
        return batches

    def sweep_once(self, now: dt.datetime | None = None) -> SweepReport:
        """Erase what is due, then purge what is past retention. A phase that
        fails is logged and does not keep the other from running; the next
        sweep starts over from the data."""
        report = SweepReport()
        for phase, into in ((self.erase_due, report.erasures), (self.purge, report.retention),
                            (self.purge_work_items, report.work_items)):
            try:
                into.extend(phase(now))
            except Exception as exc:  # the database is away, or an invariant broke: logged, retried next sweep
                report.errors.append(exc)
                log("worker.retention_sweep_failed", level="warning", phase=phase.__name__,
                    errorClass=type(exc).__name__)
        return report

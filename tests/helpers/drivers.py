"""Drivers the tests run the workers with, one step at a time, in the test's
own thread: the service runs them only through the worker loop
(workers/queue_worker.py), so these live here, not in product code."""
from __future__ import annotations

import datetime as dt
import time

from app import database, sql_api
from app.jsonlog import log
from app.queueing import LeaseLost, at, failure_codes, worker_identity
from workers.queue_worker import QueueWorker
from workers.reconcile import MAX_FAILED_CLAIMS, Reconciliation
from workers.supply import SupplyQueue


def run_until_idle(worker: QueueWorker, max_seconds: float = 30) -> int:
    """Claim and process until nothing is claimable. Returns the items processed."""
    deadline = time.monotonic() + max_seconds
    before = worker.processed
    while time.monotonic() < deadline:
        claimed = worker._claim(worker.concurrency)
        if not claimed:
            break
        for item in claimed:
            with worker._inflight_lock:
                worker._inflight += 1
            worker._run_one(item)
    return worker.processed - before


def process(loop: Reconciliation, item: dict, now: dt.datetime | None = None) -> dict | None:
    """Observe one claimed item; never raises: a lost lease is its report, an
    error fails the item (work_fail, as the worker loop would)."""
    try:
        return loop.observe(item, now)
    except LeaseLost:
        return {"outcome": "lease_lost", "terminal": False}
    except Exception as exc:
        reason, error_class = failure_codes(exc)
        with database.connection(loop.pool) as conn:
            row = sql_api.work_fail(conn, item_id=item["item_id"], lease_token=item["lease_token"], reason_code=reason,
                                    error_class=error_class, max_attempts=MAX_FAILED_CLAIMS, **at(now))
        log("worker.item_failed", level="warning", queue=loop.name, itemId=item["item_id"], errorClass=error_class,
            outcome=row["outcome"])
        return None


def run_once(loop: Reconciliation, now: dt.datetime | None = None) -> list[dict]:
    """One detection pass, then every due item in turn. Returns the reports."""
    loop.detect(now)
    reports: list[dict] = []
    while True:
        claimed = loop.claim(loop.settings.concurrency, now)
        if not claimed:
            return reports
        reports.extend(r for r in (process(loop, item, now) for item in claimed) if r is not None)


def tick(queue: SupplyQueue) -> bool:
    """Enqueue the boards due, then run one item of supply work if any is due.
    Returns whether there was one."""
    with database.connection(queue.pool) as conn:
        sql_api.supply_boards_enqueue(conn, now=queue.now())
    with database.connection(queue.pool) as conn:
        claimed = queue.claim(conn, worker_identity(queue.name), 1)
    if not claimed:
        return False
    try:
        queue.handle(queue.pool, claimed[0])
    except Exception as exc:
        with database.connection(queue.pool) as conn:
            queue.fail(conn, claimed[0], exc)
    return True

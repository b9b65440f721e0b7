"""Every kind of background work and its handler, in one place.

`build_queues` makes the queues a worker process runs, each with its registry
from kind to handler (tests/workers/test_worker_registry.py checks every
registry against the kinds its table allows, in both directions);
`build_workers` puts each in the one worker loop (workers/queue_worker.py).
"""
from __future__ import annotations

import threading
from dataclasses import dataclass

from app import database, sql_api
from app.host import client as host_client
from app.host.outbox import OutboxQueue
from app.jsonlog import log
from app.queueing import SqlQueue
from workers.lifecycle import LifecycleQueue
from workers.queue_worker import QueueWorker
from workers.reconcilers import ReconciliationQueue, build_reconciliations
from workers.retention import RetentionWorker
from workers.schedules import ScheduleQueue
from workers.slo import SloWorker
from workers.supply import SupplyQueue


@dataclass
class Queues:
    """The queues of a worker process; `runnable` says which of them it runs."""
    lifecycle: LifecycleQueue
    outbox: OutboxQueue
    reconciliation: ReconciliationQueue
    supply: SupplyQueue
    schedules: ScheduleQueue
    host_configured: bool
    slo: SloWorker

    @property
    def all(self) -> list[SqlQueue]:
        return [self.lifecycle, self.outbox, self.reconciliation, self.supply, self.schedules]


#: How often the board_refresh schedule comes round while supply tracking is off.
SUPPLY_DISABLED_INTERVAL_MS = 86_400_000


def build_queues(config, url: str, pool, stop: threading.Event) -> Queues:
    host = host_client.from_config(config)
    reconciliations = build_reconciliations(config, pool, host, stop)
    retention = RetentionWorker(config.retention, pool, stop=stop)
    slo = SloWorker(config, url, stop)
    supply_settings = config.supply
    supply = SupplyQueue(supply_settings, pool, lease_seconds=config.job_lease_seconds,
                         max_attempts=config.job_max_attempts)

    def detect(pool, item) -> str:
        found = sum(len(r.detect()) for r in reconciliations)
        return "detected" if found else "nothing_detected"

    def sweep(pool, item) -> str:
        report = retention.sweep_once()
        return "swept_with_errors" if report.errors else "swept"

    def evaluate(pool, item) -> str:
        return "evaluated" if slo.evaluate_once() is not None else "snapshot_failed"

    def enqueue_boards(pool, item) -> str:
        if not supply_settings.enabled:
            return "supply_disabled"
        with database.connection(pool) as conn:
            made = sql_api.supply_boards_enqueue(conn)
        return "enqueued" if made else "nothing_due"

    ticks = {
        "reconciliation_detect": (detect, config.reconciliation.detect_interval_ms),
        "retention_sweep": (sweep, config.retention.interval_ms),
        "slo_evaluate": (evaluate, config.slo_snapshot_interval_ms),
        # With supply tracking off the schedule comes round once a day, not every
        # poll interval: it only logs "supply_disabled" (it was 100,000 lines a day).
        "board_refresh": (enqueue_boards, supply_settings.poll_ms if supply_settings.enabled
                          else SUPPLY_DISABLED_INTERVAL_MS),
    }
    schedules = ScheduleQueue(config, ticks)
    return Queues(lifecycle=LifecycleQueue(config), outbox=OutboxQueue(config, host),
                  reconciliation=ReconciliationQueue(config, reconciliations), supply=supply, schedules=schedules,
                  host_configured=host is not None, slo=slo)


def build_workers(config, url: str, stop: threading.Event) -> list[QueueWorker]:
    pool = database.create_pool(url, max_size=2 * config.worker_concurrency + 6, name="worker")
    queues = build_queues(config, url, pool, stop)

    def loop(queue, concurrency: int, poll_ms: int) -> QueueWorker:
        return QueueWorker(queue, pool, url, concurrency=concurrency, poll_ms=poll_ms, stop=stop)

    workers = [loop(queues.lifecycle, config.worker_concurrency, config.worker_poll_ms)]
    if queues.host_configured:
        workers.append(loop(queues.outbox, config.worker_concurrency, config.worker_poll_ms))
    else:
        # Readiness reports the missing variables; lifecycle jobs still run.
        log("worker.outbox_disabled", level="warning", reason="host app configuration missing",
            missing=list(config.missing))
    workers.append(loop(queues.reconciliation, config.reconciliation.concurrency, config.reconciliation.poll_ms))
    if queues.supply.settings.enabled:
        workers.append(loop(queues.supply, 1, queues.supply.settings.poll_ms))
    else:
        log("worker.supply_disabled", level="info", reason="component provider credentials not configured")
    workers.append(loop(queues.schedules, len(queues.schedules.handlers), queues.schedules.poll_ms))
    return workers

"""`python -m workers`: run the background workers until SIGTERM or SIGINT."""
from __future__ import annotations

import signal
import threading

from app import config as config_module
from app import database, runtime
from app.host import client as host_client
from app.host.outbox import OutboxQueue
from app.jsonlog import capture_library_logs, log
from workers.lifecycle import LifecycleQueue
from workers.reconcilers import build_reconcilers
from workers.retention import RetentionWorker
from workers.slo import SloWorker
from workers.supply import build_supply_worker
from workers.queue_worker import QueueWorker


def build_workers(config, url: str, stop: threading.Event) -> list[QueueWorker]:
    pool = database.create_pool(url, max_size=2 * config.worker_concurrency + 2, name="worker")
    workers = [
        QueueWorker(LifecycleQueue(config), pool, url, concurrency=config.worker_concurrency,
                    poll_ms=config.worker_poll_ms, stop=stop),
    ]
    host = host_client.from_config(config)
    if host is not None:
        workers.append(QueueWorker(OutboxQueue(config, host), pool, url, concurrency=config.worker_concurrency,
                                   poll_ms=config.worker_poll_ms, stop=stop))
    else:
        # Readiness reports the missing variables; lifecycle jobs still run.
        log("worker.outbox_disabled", level="warning", reason="host app configuration missing")
    # Reconciliation and the SLO policy (issue 10): the SLO worker has its own connection.
    # Component supply (issue 13): only with the provider's credentials.
    supply = build_supply_worker(pool, stop)
    # Retention and account erasure (issue 14): woken on NOTIFY retention_sweep.
    workers.append(RetentionWorker(config.retention, pool, url, stop))
    return [*workers, *build_reconcilers(config, pool, host, stop), SloWorker(config, url, stop),
            *([supply] if supply else [])]


def main() -> None:
    capture_library_logs()
    config = config_module.load()
    url = runtime.database_url(config)
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    workers = build_workers(config, url, stop)
    threads = [threading.Thread(target=w.run, name=getattr(w, "name", None) or w.queue.name) for w in workers]
    for t in threads:
        t.start()
    while any(t.is_alive() for t in threads):
        for t in threads:
            t.join(timeout=0.5)


if __name__ == "__main__":
    main()

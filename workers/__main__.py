"""`python -m workers`: run the background work until SIGTERM or SIGINT.

Every kind of work runs in the one worker loop (workers/queue_worker.py), one
loop per queue; workers/registry.py builds them with their handlers.
"""
from __future__ import annotations

import signal
import threading

from app import config as config_module
from app import runtime
from app.jsonlog import capture_library_logs
from workers.registry import build_workers


def main() -> None:
    capture_library_logs()
    config = config_module.load()
    url = runtime.database_url(config)
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    workers = build_workers(config, url, stop)
    threads = [threading.Thread(target=w.run, name=w.queue.name) for w in workers]
    for t in threads:
        t.start()
    while any(t.is_alive() for t in threads):
        for t in threads:
            t.join(timeout=0.5)


if __name__ == "__main__":
    main()

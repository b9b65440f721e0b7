"""Waking the workers after the intake committed, off the request's path.

A NOTIFY inside a transaction makes its commit take a cluster-wide lock that is
held through the commit record's flush, so concurrent notifying commits queue
behind each other's fsync: at 80 concurrent deliveries, the NOTIFY in the
intake function cost more than everything else the intake does (403 against
705 deliveries/s, bin/bench-intake). The intake therefore commits without it
and pokes this waker, whose one thread sends a single NOTIFY on its own
connection for however many deliveries were accepted since its last one.

It is only a hint: a process that dies between the commit and the NOTIFY
leaves a job the workers' poll finds (DESIGN: polling is the truth).
"""
from __future__ import annotations

import threading
import time

from app import database
from app.jsonlog import log


class Waker:
    def __init__(self, pool, channel: str):
        self.pool, self.channel = pool, channel
        self._pending = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"wake-{channel}", daemon=True)
        self._thread.start()

    def poke(self) -> None:
        """Something committed that a listener should know about; never blocks."""
        self._pending.set()

    #: How long a poke waits for company: at hundreds of deliveries a second,
    #: one NOTIFY then covers several, and a job starts at most this much later.
    COALESCE_SECONDS = 0.002

    def _run(self) -> None:
        while True:
            self._pending.wait()
            time.sleep(self.COALESCE_SECONDS)
            self._pending.clear()  # pokes from here on are covered by a later NOTIFY
            try:
                with database.connection(self.pool, timeout=5) as conn:
                    # A hint needs no durable commit: without the WAL flush the
                    # notifying commit holds the cluster-wide notify lock for
                    # microseconds instead of an fsync.
                    conn.execute("SELECT set_config('synchronous_commit', 'off', true), pg_notify(%s, '')",
                                 (self.channel,))
            except Exception as exc:  # the poll covers a lost hint
                log("wakeup.notify_failed", level="warning", channel=self.channel, errorClass=type(exc).__name__)

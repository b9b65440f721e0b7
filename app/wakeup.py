"""Waking the workers after the intake committed, off the request's path.

A NOTIFY inside a transaction makes its commit take a cluster-wide lock that is
held through the commit record's flush, so concurrent notifying commits queue
behind each other's fsync: at 80 concurrent deliveries, the NOTIFY in the
intake function cost more than everything else the intake does (403 against
705 deliveries/s, bin/bench-intake). The intake therefore commits without it
and pokes this waker, whose one thread sends a single NOTIFY for however many
deliveries were accepted since its last one, and at most one every
MIN_INTERVAL_SECONDS.

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

    #: The least time between two NOTIFYs. The first poke after a quiet spell
    #: is sent at once; pokes during the pause share one NOTIFY at its end, so
    #: a job starts at most this much later. Each NOTIFY is a transaction and
    #: a pool checkout: sent every 2 ms (the earlier coalescing window), one
    #: for every two or three deliveries, they were a third of the intake's
    #: Python time and a quarter of its database time (in-process, one thread:
    #: 611 against 426 us of Python and 433 against 310 us of PostgreSQL per
    #: delivery, with and without the waker).
    MIN_INTERVAL_SECONDS = 0.05

    def _run(self) -> None:
        while True:
            self._pending.wait()
            self._pending.clear()  # pokes from here on are covered by a later NOTIFY
            self._notify()
            time.sleep(self.MIN_INTERVAL_SECONDS)

    def _notify(self) -> None:
        try:
            with database.connection(self.pool, timeout=5) as conn:
                # A hint needs no durable commit: without the WAL flush the
                # notifying commit holds the cluster-wide notify lock for
                # microseconds instead of an fsync.
                conn.execute("SELECT set_config('synchronous_commit', 'off', true), pg_notify(%s, '')",
                             (self.channel,))
        except Exception as exc:  # the poll covers a lost hint
            log("wakeup.notify_failed", level="warning", channel=self.channel, errorClass=type(exc).__name__)

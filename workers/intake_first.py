"""Intake first: the lifecycle jobs of a burst of deliveries wait for it to end.

The intake's answer is what the code host waits for: it gives up after ten
seconds and does not send the delivery again. A job only has to happen soon.
On shared cores and one database, jobs run beside a burst take from the
intake what it needs most then (bin/bench-intake, docs/benchmarks.md). So
while the intake's wake-ups keep coming (a NOTIFY on `lifecycle_jobs`, at most
one every 50 ms per web process while deliveries arrive: app/wakeup.py), the
lifecycle worker does not claim. It claims as soon as they stop for
QUIET_SECONDS, and after `max_wait_seconds` of one burst it claims anyway,
beside the intake, so that a burst without end never starves the jobs.

A lone delivery is not a burst: its job is claimed on its first wake-up.
"""
from __future__ import annotations

import threading
import time


class IntakeBursts:
    #: Wake-ups closer together than this are one burst. The intake sends one
    #: every 50 ms while deliveries arrive; a pause of five of them ends it.
    QUIET_SECONDS = 0.25

    def __init__(self, max_wait_seconds: float, clock=time.monotonic):
        self.max_wait_seconds = max_wait_seconds
        self.clock = clock
        self._lock = threading.Lock()
        self._started: float | None = None   # the burst's first wake-up
        self._last: float | None = None      # its latest
        self._wakeups = 0

    def arrived(self) -> None:
        """The intake stored deliveries (its wake-up reached this worker)."""
        now = self.clock()
        with self._lock:
            if self._last is None or now - self._last > self.QUIET_SECONDS:
                self._started, self._wakeups = now, 0
            self._last = now
            self._wakeups += 1

    def hold_seconds(self) -> float:
        """How long to wait before the next claim: 0 unless a burst is on and
        has not yet been waited for `max_wait_seconds`."""
        now = self.clock()
        with self._lock:
            if self.max_wait_seconds <= 0 or self._last is None or self._wakeups < 2:
                return 0.0
            quiet_in = self.QUIET_SECONDS - (now - self._last)
            waited_out_in = self.max_wait_seconds - (now - self._started)
            return max(0.0, min(quiet_in, waited_out_in))

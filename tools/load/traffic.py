"""Closed-loop senders, what they measured, and the figures made of it.

Every phase is a closed loop: `concurrency` clients each take the next
operation as soon as their last one is answered. An operation that got no
answer, or 502/503/504, is sent again unchanged after a short pause (a
delivery keeps its delivery id: it is what the code host's "redeliver"
does, and what an operator does after an outage), until it succeeds or its
retry budget is spent. Every attempt is a sample: its wall-clock start and end
and its status.

Under a fault, the samples that overlap the fault's window (from its start
until the system is back) are reported apart and kept out of the latency
limits: how long the service needs to come back is the recovery convergence
limit's business, not the steady state's p95.
"""
from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field

from tools.bench_intake import percentile

RETRYABLE = {None, 502, 503, 504}
RETRY_PAUSE_S = 0.2
RETRY_BUDGET_S = 60.0


@dataclass
class Sample:
    started: float    # wall clock (time.time()), to compare with fault windows and database timestamps
    ended: float
    status: int | None  # None: no answer (connection refused or cut, timeout)

    @property
    def ms(self) -> float:
        return (self.ended - self.started) * 1000


@dataclass
class Window:
    """A fault: from when it began until the system was back (database accepting, worker restarted, faults off)."""
    started: float
    ended: float

    def overlaps(self, sample: Sample) -> bool:
        return sample.started < self.ended and sample.ended > self.started


@dataclass
class Outcome:
    """Every attempt of a phase's operations, and how each operation ended."""
    samples: list[Sample] = field(default_factory=list)
    final: list[int | None] = field(default_factory=list)  # the last status of each operation
    retries: int = 0
    started: float = 0.0
    ended: float = 0.0

    def statuses(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for status in self.final:
            key = str(status) if status is not None else "no_answer"
            counts[key] = counts.get(key, 0) + 1
        return dict(sorted(counts.items()))


def figures(values_ms: list[float]) -> dict:
    if not values_ms:
        return {"samples": 0, "p50": None, "p95": None, "p99": None, "max": None}
    return {"samples": len(values_ms), "p50": round(percentile(values_ms, 50), 1),
            "p95": round(percentile(values_ms, 95), 1), "p99": round(percentile(values_ms, 99), 1),
            "max": round(max(values_ms), 1)}


def split_by_faults(samples: Iterable[Sample], windows: list[Window]) -> tuple[list[Sample], list[Sample]]:
    """(steady, during faults)."""
    steady, faulted = [], []
    for sample in samples:
        (faulted if any(w.overlaps(sample) for w in windows) else steady).append(sample)
    return steady, faulted


async def closed_loop(items: list, concurrency: int, send: Callable[[object], Awaitable[int | None]],
                      ok: Callable[[int | None], bool], advance: Callable[[], None] | None = None,
                      budget_s: float = RETRY_BUDGET_S) -> Outcome:
    """Send every item with `concurrency` clients; `send(item)` returns the HTTP status (None: no answer)."""
    outcome = Outcome(started=time.time())
    queue: asyncio.Queue = asyncio.Queue()
    for item in items:
        queue.put_nowait(item)

    async def client() -> None:
        while True:
            try:
                item = queue.get_nowait()
            except asyncio.QueueEmpty:
                return
            first = time.monotonic()
            while True:
                started = time.time()
                try:
                    status = await send(item)
                except (TimeoutError, OSError, ConnectionError):
                    status = None
                except Exception as exc:  # aiohttp's client errors are not all OSErrors
                    if type(exc).__module__.startswith("aiohttp"):
                        status = None
                    else:
                        raise
                outcome.samples.append(Sample(started, time.time(), status))
                if ok(status) or status not in RETRYABLE or time.monotonic() - first > budget_s:
                    break
                outcome.retries += 1
                await asyncio.sleep(RETRY_PAUSE_S)
            outcome.final.append(status)
            if advance:
                advance()

    await asyncio.gather(*(client() for _ in range(max(1, min(concurrency, len(items))))))
    outcome.ended = time.time()
    return outcome

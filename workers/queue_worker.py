"""The one worker loop: every kind of background work runs in it.

Each QueueWorker runs one queue (app/queueing.py's SqlQueue): lifecycle jobs,
outbox calls, reconciliation items, supply work and the periodic schedules
(workers/schedules.py). A queue claims items through queue.sql.j2's rules and
hands each to the handler its registry names for the item's kind
(workers/registry.py builds them all).

LISTEN on the queue's channel is only a hint that work may be waiting; the poll
interval is the truth, so a lost notification delays work by at most one poll.
Claims take a lease in the database; a worker that dies simply lets its lease
expire and another claims the item again. A live worker renews the leases of
the items it holds, so that an item slower than its lease (a busy machine, a
slow code host) is not run a second time by another worker meanwhile.
Completion and failure are reported through SQL functions that refuse a lease
that is no longer current.
"""
from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Protocol

import psycopg

from app import database
from app.jsonlog import log
from app.queueing import worker_identity


class Queue(Protocol):
    name: str
    channel: str
    id_field: str  # the claimed row's id column
    lease_seconds: int

    def claim(self, conn: psycopg.Connection, worker_id: str, limit: int) -> list[dict]: ...

    def claim_hold_seconds(self) -> float: ...

    def handle(self, pool, item: dict) -> str:
        """Do the work and report completion; return the outcome. Raise to fail the attempt."""

    def fail(self, conn: psycopg.Connection, item: dict, exc: BaseException) -> dict: ...

    def release(self, conn: psycopg.Connection, item: dict) -> None: ...

    def renew(self, conn: psycopg.Connection, held: list[tuple[int, object]]) -> set[int]: ...


class Listener(threading.Thread):
    """Sets `wake` whenever a NOTIFY arrives on one of `channels` (after
    telling `notified(channel)`, when given); reconnects with backoff."""

    def __init__(self, url: str, channels: str | tuple[str, ...], wake: threading.Event, stop: threading.Event,
                 notified=None):
        self.channels = (channels,) if isinstance(channels, str) else tuple(channels)
        super().__init__(name=f"listen-{self.channels[0]}", daemon=True)
        self.url, self.wake, self.stop, self.notified = url, wake, stop, notified
        self.channel = self.channels[0]

    #: Reconnection pauses: short and capped, so that a restarted database is
    #: noticed within a second, not after a poll interval or a long backoff.
    FIRST_BACKOFF, MAX_BACKOFF = 0.1, 1.0

    def run(self) -> None:
        backoff = self.FIRST_BACKOFF
        while not self.stop.is_set():
            try:
                with psycopg.connect(self.url, autocommit=True, connect_timeout=5) as conn:
                    for channel in self.channels:
                        conn.execute(f"LISTEN {channel}")
                    backoff = self.FIRST_BACKOFF
                    # A reconnect may have missed notifications: wake once to poll.
                    self.wake.set()
                    while not self.stop.is_set():
                        for notify in conn.notifies(timeout=1.0):
                            if self.notified is not None:
                                self.notified(notify.channel)
                            self.wake.set()
            except psycopg.Error as exc:
                log("worker.listen_failed", level="warning", channel=self.channel, errorClass=type(exc).__name__)
                self.stop.wait(backoff)
                backoff = min(backoff * 2, self.MAX_BACKOFF)


class QueueWorker:
    def __init__(self, queue: Queue, pool, listen_url: str, *, concurrency: int, poll_ms: int,
                 stop: threading.Event | None = None):
        self.queue = queue
        self.pool = pool
        self.listen_url = listen_url
        self.concurrency = concurrency
        self.poll_seconds = poll_ms / 1000
        self.stop = stop or threading.Event()
        self.wake = threading.Event()
        self.worker_id = worker_identity(queue.name)
        self._inflight = 0
        self._inflight_lock = threading.Lock()
        self._held: dict[int, tuple] = {}  # item id -> (lease token, monotonic time of the claim)
        self.processed = 0

    # -- one item ---------------------------------------------------------
    def _run_one(self, item: dict) -> None:
        try:
            if self.stop.is_set():
                # Shutting down before this item started: give it back untouched.
                with database.connection(self.pool) as conn:
                    self.queue.release(conn, item)
                return
            started = time.monotonic()
            outcome = self.queue.handle(self.pool, item)
            log("worker.item_done", queue=self.queue.name, itemId=item[self.queue.id_field], outcome=outcome,
                attempt=item.get("attempts"), ms=round((time.monotonic() - started) * 1000, 1))
            self.processed += 1
        except Exception as exc:  # the attempt failed: report it, never crash the loop
            self._report_failure(item, exc)
        finally:
            with self._inflight_lock:
                self._inflight -= 1
                self._held.pop(item[self.queue.id_field], None)
            self.wake.set()

    def _report_failure(self, item: dict, exc: BaseException) -> None:
        try:
            with database.connection(self.pool) as conn:
                result = self.queue.fail(conn, item, exc)
            log("worker.item_failed", level="warning", queue=self.queue.name, itemId=item[self.queue.id_field],
                attempt=item.get("attempts"), errorClass=type(exc).__name__, outcome=result.get("outcome"))
        except Exception as report_exc:
            # The database is gone too: the lease will expire and the item be claimed again.
            log("worker.failure_report_failed", level="error", queue=self.queue.name, itemId=item[self.queue.id_field],
                errorClass=type(exc).__name__, reportErrorClass=type(report_exc).__name__)

    # -- the loop ---------------------------------------------------------
    def _claim(self, limit: int) -> list[dict]:
        try:
            with database.connection(self.pool, 5) as conn:
                claimed = self.queue.claim(conn, self.worker_id, limit)
        except Exception as exc:
            log("worker.claim_failed", level="warning", queue=self.queue.name, errorClass=type(exc).__name__)
            return []
        now = time.monotonic()
        with self._inflight_lock:
            for item in claimed:
                self._held[item[self.queue.id_field]] = (item["lease_token"], now)
        return claimed

    # -- leases -----------------------------------------------------------
    #: Renewals per lease: a lease is extended well before it can run out.
    RENEWALS_PER_LEASE = 3
    #: An item is kept for at most this many leases. A handler stuck longer
    #: (every call it makes has a timeout) is let go: once its lease runs out,
    #: another worker may take the item over, as when a worker dies.
    MAX_LEASES_PER_ITEM = 10

    def _renew_leases(self) -> None:
        """Extend the leases of the items this worker holds; runs beside the loop."""
        lease = self.queue.lease_seconds
        unrenewed: set[int] = set()  # held items the last round did not renew
        while not self.stop.wait(lease / self.RENEWALS_PER_LEASE):
            oldest = time.monotonic() - lease * self.MAX_LEASES_PER_ITEM
            with self._inflight_lock:
                held = [(item_id, token) for item_id, (token, claimed_at) in self._held.items() if claimed_at > oldest]
            if not held:
                continue
            try:
                with database.connection(self.pool, 5) as conn:
                    renewed_ids = self.queue.renew(conn, held)
            except Exception as exc:  # the next round tries again; a lost lease is refused at completion
                log("worker.lease_renewal_failed", level="warning", queue=self.queue.name,
                    errorClass=type(exc).__name__)
                continue
            # An item whose handler reported it just before this round is not
            # renewed either, yet still held for a moment: lost is what two
            # rounds running found still held and not renewed.
            with self._inflight_lock:
                missed = {item_id for item_id, _ in held if item_id not in renewed_ids and item_id in self._held}
            lost, unrenewed = sorted(missed & unrenewed), missed
            if lost:
                log("worker.leases_lost", level="warning", queue=self.queue.name, itemIds=lost[:20])

    def run(self) -> None:
        listener = Listener(self.listen_url, getattr(self.queue, "channels", self.queue.channel), self.wake,
                            self.stop, getattr(self.queue, "notified", None))
        listener.start()
        threading.Thread(target=self._renew_leases, name=f"leases-{self.queue.name}", daemon=True).start()
        log("worker.started", queue=self.queue.name, worker=self.worker_id, concurrency=self.concurrency)
        with ThreadPoolExecutor(max_workers=self.concurrency, thread_name_prefix=self.queue.name) as executor:
            while not self.stop.is_set():
                self.wake.clear()
                hold = self.queue.claim_hold_seconds()
                if hold > 0:
                    self._pause(hold)
                    continue
                with self._inflight_lock:
                    free = self.concurrency - self._inflight
                claimed = self._claim(free) if free > 0 else []
                for item in claimed:
                    with self._inflight_lock:
                        self._inflight += 1
                    executor.submit(self._run_one, item)
                if claimed and len(claimed) == free:
                    # The queue may hold more: claim again once half the slots
                    # are free, so that a claim takes a batch instead of one
                    # item per finished item (each claim is a commit).
                    self._wait_for_free_slots(max(1, self.concurrency // 2))
                    continue
                self._pause(self.poll_seconds)
            # SIGTERM: no new claims; the executor's exit waits for running items,
            # and items not yet started release their lease in _run_one.
        log("worker.stopped", queue=self.queue.name, worker=self.worker_id, processed=self.processed)

    #: How often a pause looks at the stop event: a long poll interval (a
    #: schedule's) must not keep a stopping worker waiting.
    STOP_CHECK_SECONDS = 0.5

    def _pause(self, seconds: float) -> None:
        """Until a NOTIFY wakes the loop, the poll interval passes, or a stop."""
        deadline = time.monotonic() + seconds
        while not self.stop.is_set():
            remaining = deadline - time.monotonic()
            if remaining <= 0 or self.wake.wait(min(remaining, self.STOP_CHECK_SECONDS)):
                return

    def _wait_for_free_slots(self, wanted: int) -> None:
        """Until `wanted` slots are free, the poll interval passes, or a stop."""
        deadline = time.monotonic() + self.poll_seconds
        while not self.stop.is_set():
            with self._inflight_lock:
                if self.concurrency - self._inflight >= wanted:
                    return
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return
            self.wake.wait(remaining)
            self.wake.clear()


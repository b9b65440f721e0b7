"""Storing the webhook deliveries that arrive together in one transaction.

Each request thread hands its verified, normalized delivery to this process's
batcher and waits; the batcher's thread stores every delivery waiting at that
moment with one call of `intake_accept_deliveries` (sql/functions/intake.sql),
one transaction and one commit, and hands each thread its own row. A 202 still
means the delivery is durably stored: no thread answers before the commit that
holds its delivery.

Why: one durable transaction per delivery left PostgreSQL doing per-statement
and per-commit work (planning, executor setup, locking, the WAL flush) for
every row, and 30 connections doing it at once on two cores spent a third of
their time on each other's locks. At concurrency 80 the batches form on their
own, with no waiting window: deliveries that arrive while a batch is being
stored make the next one, so a lone delivery is stored at once.

A batch is one transaction, so what happens to one happens to all: a lost
connection retries the batch once (the intake is idempotent by delivery id);
an unreachable database answers every waiting delivery 503, nothing stored. A
value PostgreSQL refuses (a 400 for its sender alone) makes the batcher store
that batch's deliveries one by one, so only that delivery is refused.
"""
from __future__ import annotations

import threading
from collections import deque
from dataclasses import dataclass, field

from psycopg.types.json import Jsonb

from app import sql_api
from app.jsonlog import log
from app.web import db
from app.web.errors import ApiError


@dataclass
class Delivery:
    """What the inbox keeps of one verified delivery."""
    delivery_id: str
    event: str
    action: str | None
    installation_id: int | None
    actions: dict
    payload_sha256: str
    payload_bytes: int
    acceptance_ms: int


@dataclass
class _Waiting:
    delivery: Delivery
    done: threading.Event = field(default_factory=threading.Event)
    row: dict | None = None
    error: ApiError | None = None


class IntakeBatcher:
    #: The most deliveries one transaction stores.
    MAX_BATCH = 100
    #: Batches in flight at once per process. One: while it is stored, the
    #: next gathers. Two halved the batches (3.8 deliveries on average under
    #: bin/bench-intake against 6.4) and cost PostgreSQL 420 us per delivery
    #: against 283.
    THREADS = 1
    #: How long a request waits for its batch before it gives up with a 503
    #: (far above the pool's acquire timeout and a batch's own time).
    WAIT_SECONDS = 60

    def __init__(self, pool, config, provider: str):
        self.pool, self.config, self.provider = pool, config, provider
        self._waiting: deque[_Waiting] = deque()
        self._ready = threading.Condition()
        self._started = False

    def store(self, delivery: Delivery) -> dict:
        """The delivery's row (outcome, inbox_id, awaits_job) once it is committed; ApiError otherwise."""
        waiting = _Waiting(delivery)
        with self._ready:
            if not self._started:  # on the first delivery: an application that takes none runs no threads
                self._started = True
                for number in range(self.THREADS):
                    threading.Thread(target=self._run, name=f"intake-batch-{number}", daemon=True).start()
            self._waiting.append(waiting)
            self._ready.notify()
        if not waiting.done.wait(self.WAIT_SECONDS):
            log("webhook.batch_timeout", level="error", deliveryId=delivery.delivery_id)
            raise ApiError(503, *db.NOT_STORED)
        if waiting.error is not None:
            raise waiting.error
        return waiting.row

    def _run(self) -> None:
        while True:
            with self._ready:
                while not self._waiting:
                    self._ready.wait()
                batch = [self._waiting.popleft() for _ in range(min(self.MAX_BATCH, len(self._waiting)))]
            self._store(batch)

    def _store(self, batch: list[_Waiting]) -> None:
        try:
            rows = db.run(self.pool, self.config, lambda conn: self._call(conn, batch), idempotent=True,
                          refusal=db.NOT_STORED, event="webhook.persist_failed", deliveries=len(batch))
        except ApiError as exc:
            if exc.status == 400 and len(batch) > 1:
                for waiting in batch:  # find the one delivery PostgreSQL refused
                    self._store([waiting])
                return
            self._finish(batch, error=exc)
            return
        except Exception as exc:  # a bug: every waiting request gets a 500, and the thread lives on
            log("webhook.batch_failed", level="error", errorClass=type(exc).__name__, deliveries=len(batch))
            self._finish(batch, error=ApiError(500, "internal_error", "internal error"))
            return
        for waiting, row in zip(batch, rows, strict=True):
            waiting.row = row
            waiting.done.set()

    def _call(self, conn, batch: list[_Waiting]) -> list[dict]:
        deliveries = [waiting.delivery for waiting in batch]
        return sql_api.intake_accept_deliveries(
            conn, provider=self.provider, delivery_ids=[d.delivery_id for d in deliveries],
            events=[d.event for d in deliveries], actions=[d.action for d in deliveries],
            installation_ids=[d.installation_id for d in deliveries], normalized=[Jsonb(d.actions) for d in deliveries],
            payload_sha256s=[d.payload_sha256 for d in deliveries], payload_bytes=[d.payload_bytes for d in deliveries],
            acceptance_ms=[d.acceptance_ms for d in deliveries])

    @staticmethod
    def _finish(batch: list[_Waiting], error: ApiError) -> None:
        for waiting in batch:
            waiting.error = error
            waiting.done.set()

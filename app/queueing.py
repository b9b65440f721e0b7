"""What the API and the workers share about queue items.

The workers claim and process queue items; the API processes one itself when
it publishes a result synchronously. Both report outcomes through the same SQL
functions, so they share the same words for what went wrong.
"""
from __future__ import annotations

import datetime as dt
import os
import socket
from collections.abc import Callable

import psycopg

from app import sql_api


class LeaseLost(Exception):
    """The lease this process held was taken over; the new holder's run is the one that counts."""

    reason_code = "lease_lost"


class UnknownKind(Exception):
    """An item of a kind no handler is registered for (a newer release wrote it)."""

    reason_code = "unknown_kind"


def at(now: dt.datetime | None) -> dict:
    """`now` for app/sql_api.py's functions: the database's clock unless a test drives it."""
    return {} if now is None else {"now": now}


def worker_identity(kind: str) -> str:
    return f"{kind}@{socket.gethostname()}:{os.getpid()}"


def failure_codes(exc: BaseException) -> tuple[str, str]:
    """A stable reason code and the error class; never the message (it may hold data)."""
    reason = getattr(exc, "reason_code", None)
    if reason is None:
        if isinstance(exc, psycopg.OperationalError):
            reason = "database_unavailable"
        elif isinstance(exc, psycopg.Error):
            reason = "database_error"
        else:
            reason = "handler_error"
    return reason, type(exc).__name__


Handler = Callable[[object, dict], str]


class SqlQueue:
    """A queue with queue.sql.j2's lease, retry and release rules. A queue names
    its claim function (which returns what its handlers need), its id column,
    and the static functions that fail, release and renew its items (work_*
    for every kind held in work_items, job_* for the lifecycle jobs,
    schedule_* for the schedules: app/sql_api.py's, held as staticmethods so
    that they are not bound to the queue), and registers one handler per kind of item
    (`handlers`: kind -> handler(pool, item) returning the outcome; a test
    checks them against the kinds the schema allows, in both directions)."""

    name: str
    channel: str
    id_field: str
    claim_function: Callable[..., list[dict]]
    handlers: dict[str, Handler]
    #: What an item's kind is called in its claimed row.
    kind_field = "kind"
    #: The static SQL functions over the queue's table, and how they name an item.
    fail_function = staticmethod(sql_api.work_fail)
    release_function = staticmethod(sql_api.work_release)
    renew_function = staticmethod(sql_api.work_renew_leases)
    id_param = "item_id"

    def __init__(self, config):
        self.config = config
        self.lease_seconds = config.job_lease_seconds
        self.max_attempts = config.job_max_attempts

    def claim_hold_seconds(self) -> float:
        """How long the worker loop waits before its next claim (the lifecycle
        queue waits for a burst of deliveries to end: workers/intake_first.py)."""
        return 0.0

    def handle(self, pool, item: dict) -> str:
        """Run the item's handler; its outcome, or an exception to fail the attempt."""
        handler = self.handlers.get(item[self.kind_field])
        if handler is None:
            raise UnknownKind()
        return handler(pool, item)

    def claim(self, conn: psycopg.Connection, worker_id: str, limit: int) -> list[dict]:
        return self.claim_function(conn, worker=worker_id, limit=limit, lease_seconds=self.lease_seconds,
                                   max_attempts=self.max_attempts)

    def fail(self, conn: psycopg.Connection, item: dict, exc: BaseException, **facts) -> dict:
        reason, error_class = failure_codes(exc)
        return self.fail_function(conn, **{self.id_param: item[self.id_field]}, lease_token=item["lease_token"],
                                  reason_code=reason, error_class=error_class, max_attempts=self.max_attempts, **facts)

    def release(self, conn: psycopg.Connection, item: dict) -> None:
        self.release_function(conn, **{self.id_param: item[self.id_field]}, lease_token=item["lease_token"])

    def renew(self, conn: psycopg.Connection, held: list[tuple[int, object]]) -> set[int]:
        """Extend the leases of the (id, lease token) pairs still held; the ids renewed."""
        return set(self.renew_function(conn, ids=[item_id for item_id, _ in held],
                                       lease_tokens=[token for _, token in held], lease_seconds=self.lease_seconds))

"""The API's one way to reach the database: a pool connection, or 503.

Every resource goes through here, so that a dead pooled connection is noticed
and the pool purged (app/database.py), a lost connection on idempotent work is
retried once, and an unreachable database is always the same clear 503 with
nothing stored.
"""
from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

import psycopg

from app import database
from app.jsonlog import log
from app.web.errors import ApiError

T = TypeVar("T")

#: The 503 of paths that authenticate or read: retry later.
UNAVAILABLE = ("unavailable", "the service cannot reach its database right now; retry later")
#: The 503 of paths that store a delivery: the sender keeps it and sends it again.
NOT_STORED = ("persistence_unavailable", "the delivery could not be stored; it was not acknowledged, send it again")


def _not_storable(exc: psycopg.errors.DataError) -> ApiError:
    """A value that passed the edge's checks but that PostgreSQL refused (SQLSTATE
    class 22: out of range, invalid text, an invariant a function checks): the
    transaction rolled back, nothing is stored, and sending it again cannot help."""
    log("database.value_refused", level="warning", sqlstate=exc.sqlstate, errorClass=type(exc).__name__)
    return ApiError(400, "invalid_input", "a value in the request cannot be stored")


def _unavailable(exc: BaseException, refusal: tuple[str, str], event: str, fields: dict) -> ApiError:
    log(event, level="error", errorClass=type(exc).__name__, **fields)
    code, message = refusal
    return ApiError(503, code, message)


@contextmanager
def connection(pool, config, *, refusal: tuple[str, str] = UNAVAILABLE, event: str = "database.unavailable",
               **log_fields: Any) -> Iterator[psycopg.Connection]:
    """A connection for several statements that belong together (never retried)."""
    try:
        with database.connection(pool, config.db_acquire_timeout_ms / 1000) as conn:
            yield conn
    except psycopg.errors.DataError as exc:
        raise _not_storable(exc) from None
    except psycopg.OperationalError as exc:  # pool timeout, connection lost, server down
        raise _unavailable(exc, refusal, event, log_fields) from None


def run(pool, config, work: Callable[[psycopg.Connection], T], *, idempotent: bool,
        refusal: tuple[str, str] = UNAVAILABLE, event: str = "database.unavailable", **log_fields: Any) -> T:
    """`work(conn)`, retried once after a lost connection when `idempotent`."""
    try:
        return database.run(pool, work, idempotent=idempotent, timeout=config.db_acquire_timeout_ms / 1000)
    except psycopg.errors.DataError as exc:
        raise _not_storable(exc) from None
    except psycopg.OperationalError as exc:
        raise _unavailable(exc, refusal, event, log_fields) from None


def call(pool, config, function: Callable[..., T], /, *, idempotent: bool, refusal: tuple[str, str] = UNAVAILABLE,
         event: str = "database.unavailable", log_fields: dict | None = None, **params: Any) -> T:
    """One SQL function call, `function` being app/sql_api.py's: the common case of `run`.
    (A function with an argument named like one of these keywords goes through `run`.)"""
    return run(pool, config, lambda conn: function(conn, **params), idempotent=idempotent,
               refusal=refusal, event=event, **(log_fields or {}))

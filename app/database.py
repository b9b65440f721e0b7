"""Database access for the API and the workers: a pool and one way to call SQL.

Every state transition is one SQL function call in one transaction (see
DESIGN.md). The pool's connections take the `boardready_api` role, which may
execute the functions and read the `ops` views but not write a table directly,
so a bug in Python cannot bypass the functions.
"""
from __future__ import annotations

import re
import select
import threading
from collections.abc import Callable
from functools import lru_cache
from typing import Any, TypeVar

import orjson
import psycopg
from psycopg import sql
from psycopg.rows import dict_row
from psycopg.types.json import set_json_dumps
from psycopg_pool import ConnectionPool, PoolTimeout
from psycopg_pool.base import AttemptWithBackoff

from app.jsonlog import log

T = TypeVar("T")

SCHEMA = "boardready"

# Every Jsonb parameter (a delivery's normalized actions, a run result) is
# encoded with orjson: several times faster than the standard library on the
# intake's hot path, and just as strict (no NaN, no non-string keys).
set_json_dumps(orjson.dumps)
API_ROLE = "boardready_api"
_FUNCTION_NAME = re.compile(r"^[a-z][a-z0-9_]{0,62}$")


def _configure_api_connection(conn: psycopg.Connection) -> None:
    conn.execute(f"SET ROLE {API_ROLE}")
    conn.execute(f"SET search_path = {SCHEMA}, pg_temp")


def _configure_owner_connection(conn: psycopg.Connection) -> None:
    conn.execute(f"SET search_path = {SCHEMA}, public, pg_temp")


#: The longest pause between two attempts to replace a lost connection.
MAX_RECONNECT_DELAY_SECONDS = 1.0


class _CappedBackoff(AttemptWithBackoff):
    """psycopg-pool doubles the pause between reconnection attempts without a
    cap: after a 20 s outage the next attempt could come 16 s after the
    database is back, and every request in between would find no connection.
    Capped, the pool is whole again within a second of the database."""

    def update_delay(self, now: float) -> None:
        super().update_delay(now)
        self.delay = min(self.delay, MAX_RECONNECT_DELAY_SECONDS)


class Pool(ConnectionPool):
    def _add_connection(self, attempt, growing: bool = False) -> None:  # psycopg-pool's maintenance hook
        super()._add_connection(attempt or _CappedBackoff(timeout=self.reconnect_timeout), growing)


def create_pool(url: str, *, max_size: int, min_size: int = 1, name: str = "api",
                as_api_role: bool = True, open_wait_seconds: float | None = None) -> ConnectionPool:
    """A psycopg pool. With open_wait_seconds, wait that long for the first connection."""
    pool = Pool(
        url,
        min_size=min(min_size, max_size),
        max_size=max_size,
        name=name,
        # Autocommit: a function call is one statement and so its own
        # transaction; no extra COMMIT round trip. Multi-statement work uses
        # `with conn.transaction()`.
        kwargs={"row_factory": dict_row, "connect_timeout": 5, "application_name": f"boardready-{name}",
                "autocommit": True},
        configure=_configure_api_connection if as_api_role else _configure_owner_connection,
        # No pool `check` on checkout: it costs a round trip per request.
        # `connection()` below notices a dead connection without one.
        reconnect_timeout=24 * 3600,  # keep trying to reconnect: the database may be down for a while
        open=False,
    )
    pool.open(wait=open_wait_seconds is not None, timeout=open_wait_seconds or 30)
    return pool


def call(conn: psycopg.Connection, function: str, /, **params: Any) -> list[Any]:
    """Call `boardready.<function>(p_name => value, ...)` and return its rows.

    The function name comes from code, never from a request; values are always
    bound parameters. Pool connections are in autocommit, so the call is its
    own transaction unless the caller opened one with `conn.transaction()`.
    """
    return _call_cursor(conn).execute(_call_query(function, tuple(params)), params).fetchall()


def _call_cursor(conn: psycopg.Connection) -> psycopg.Cursor:
    """The cursor call() runs its statements on, made once per connection and
    thread: making one per call (what `conn.execute` does) was a twentieth of a
    webhook intake's Python CPU. Reusing it is safe because call() fetches all
    rows before it returns; a thread never uses another thread's cursor, so two
    threads sharing a connection each get their own, as before. A pool
    checkout hands the cursor to the thread that checked the connection out
    (_hand_cursor_to), since no other thread can use the connection then."""
    owned = getattr(conn, "_boardready_call_cursor", None)
    thread = threading.get_ident()
    if owned is None or owned[0] != thread:
        owned = (thread, conn.cursor())
        conn._boardready_call_cursor = owned
    return owned[1]


def _hand_cursor_to(conn: psycopg.Connection, thread: int) -> None:
    """The checked-out connection's call() cursor now belongs to `thread`.
    Without this, a pooled connection, which a different thread takes nearly
    every time, got a new cursor on most calls: py-spy on a web process under
    bin/bench-intake found cursor construction in 3 % of the samples that held
    the GIL."""
    owned = getattr(conn, "_boardready_call_cursor", None)
    if owned is not None and owned[0] != thread:
        conn._boardready_call_cursor = (thread, owned[1])


@lru_cache(maxsize=512)
def _call_query(function: str, names: tuple[str, ...]) -> str:
    """The query text for a function and its parameter names, rendered once:
    composing it on every call cost a tenth of a millisecond per request."""
    if not _FUNCTION_NAME.match(function):
        raise ValueError(f"not a function name: {function!r}")
    args = sql.SQL(", ").join(sql.SQL("{} => {}").format(sql.Identifier(n), sql.Placeholder(n)) for n in names)
    query = sql.SQL("SELECT * FROM {}.{}({})").format(sql.Identifier(SCHEMA), sql.Identifier(function), args)
    return query.as_string(None)


def call_one(conn: psycopg.Connection, function: str, /, **params: Any) -> Any:
    rows = call(conn, function, **params)
    if len(rows) != 1:
        raise RuntimeError(f"{function} returned {len(rows)} rows, expected 1")
    return rows[0]


# -- surviving a database restart ---------------------------------------------
#
# A restart kills every pooled connection at once, but the pool only learns
# that when a request uses one. Left alone, each request would draw the next
# dead connection and fail. Two things prevent that, neither costing a healthy
# request a round trip:
#  - on checkout, a connection whose socket is readable while idle is dead (the
#    server sent its termination notice or closed the socket): it is discarded
#    and every other idle connection is checked at once (`purge_broken`);
#  - a call that loses its connection mid-flight purges the pool too, and
#    `run()` retries it once on a fresh connection when the caller says the
#    work is idempotent.

#: SQLSTATEs that mean the session is gone: connection exceptions (class 08),
#: admin_shutdown, crash_shutdown, cannot_connect_now.
_SESSION_GONE = ("08", "57P01", "57P02", "57P03")
_purging: set[int] = set()
_purging_lock = threading.Lock()


def is_connection_lost(exc: BaseException, conn: psycopg.Connection | None = None) -> bool:
    """True when `exc` means the connection (not the statement) failed."""
    if not isinstance(exc, psycopg.OperationalError) or isinstance(exc, PoolTimeout):
        return False
    if conn is not None and (conn.closed or conn.broken):
        return True
    state = getattr(exc, "sqlstate", None) or ""
    return state.startswith(_SESSION_GONE)


def _idle_connection_is_dead(conn: psycopg.Connection) -> bool:
    """No round trip: an idle connection has nothing to read unless the server hung up."""
    if conn.closed or conn.broken:
        return True
    try:
        poller = select.poll()
        poller.register(conn.fileno(), select.POLLIN | select.POLLERR | select.POLLHUP)
        return bool(poller.poll(0))
    except (OSError, ValueError, psycopg.Error):
        return True


def purge_broken(pool: ConnectionPool) -> None:
    """Drop every idle connection that no longer works (one thread per pool at a time).

    psycopg-pool's `check()` tries each idle connection and replaces the dead
    ones in the background; it runs only after a failure was seen, so healthy
    traffic never pays for it.
    """
    with _purging_lock:
        if id(pool) in _purging:
            return
        _purging.add(id(pool))
    try:
        pool.check()
        log("database.pool_purged", level="warning", pool=pool.name)
    except Exception as exc:  # the purge is best effort; the next checkout tries again
        log("database.pool_purge_failed", level="error", pool=pool.name, errorClass=type(exc).__name__)
    finally:
        with _purging_lock:
            _purging.discard(id(pool))


def connection(pool: ConnectionPool, timeout: float | None = None) -> _Checkout:
    """A pool connection known not to be dead on arrival, for a `with` block.

    Use it instead of `pool.connection()` everywhere: a connection lost while
    in use purges the pool before the error propagates.
    """
    return _Checkout(pool, timeout)


class _Checkout:
    """connection()'s context manager. A class rather than a generator: every
    request's database call goes through it, and a generator-based context
    manager costs several more Python frames per call."""

    __slots__ = ("pool", "timeout", "conn")

    def __init__(self, pool: ConnectionPool, timeout: float | None):
        self.pool, self.timeout = pool, timeout

    def __enter__(self) -> psycopg.Connection:
        pool = self.pool
        conn = pool.getconn(self.timeout)
        if _idle_connection_is_dead(conn):
            conn.close()  # closed, so the pool discards it instead of keeping it
            pool.putconn(conn)
            purge_broken(pool)
            conn = pool.getconn(self.timeout)
        _hand_cursor_to(conn, threading.get_ident())
        self.conn = conn
        return conn

    def __exit__(self, kind, exc, traceback) -> None:
        lost = isinstance(exc, psycopg.OperationalError) and is_connection_lost(exc, self.conn)
        if lost:
            exc.connection_lost = True  # read by run(): the connection is gone by now
        self.pool.putconn(self.conn)
        if lost:
            purge_broken(self.pool)


def run(pool: ConnectionPool, work: Callable[[psycopg.Connection], T], *, idempotent: bool,
        timeout: float | None = None) -> T:
    """`work(conn)` on a pool connection; retried once on a fresh connection
    when the connection was lost and the caller declared the work idempotent
    (safe to apply twice, such as an intake keyed by its delivery id).
    Work that is not idempotent is never retried: its first attempt may have
    committed before the connection dropped."""
    try:
        with connection(pool, timeout) as conn:
            return work(conn)
    except psycopg.OperationalError as exc:
        if not (idempotent and getattr(exc, "connection_lost", False)):
            raise
        log("database.retry_after_lost_connection", level="warning", pool=pool.name, errorClass=type(exc).__name__)
    with connection(pool, timeout) as conn:
        return work(conn)

"""Database access for the API and the workers: a pool and one way to call SQL.

Every state transition is one SQL function call in one transaction (see
DESIGN.md). The pool's connections take the `boardready_api` role, which may
execute the functions and read the `ops` views but not write a table directly,
so a bug in Python cannot bypass the functions.
"""
from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

import psycopg
from psycopg import sql
from psycopg.rows import dict_row
from psycopg_pool import ConnectionPool

SCHEMA = "boardready"
API_ROLE = "boardready_api"
_FUNCTION_NAME = re.compile(r"^[a-z][a-z0-9_]{0,62}$")


def _configure_api_connection(conn: psycopg.Connection) -> None:
    conn.execute(f"SET ROLE {API_ROLE}")
    conn.execute(f"SET search_path = {SCHEMA}, pg_temp")


def _configure_owner_connection(conn: psycopg.Connection) -> None:
    conn.execute(f"SET search_path = {SCHEMA}, public, pg_temp")


def create_pool(url: str, *, max_size: int, min_size: int = 1, name: str = "api",
                as_api_role: bool = True, open_wait_seconds: float | None = None) -> ConnectionPool:
    """A psycopg pool. With open_wait_seconds, wait that long for the first connection."""
    pool = ConnectionPool(
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
        # No check on every checkout: it costs a round trip per request. A
        # connection that broke (database restarted) fails its request once
        # and is discarded when returned in a bad state.
        reconnect_timeout=24 * 3600,  # keep trying to reconnect: the database may be down for a while
        open=False,
    )
    pool.open(wait=open_wait_seconds is not None, timeout=open_wait_seconds or 30)
    return pool


def call(conn: psycopg.Connection, function: str, /, **params: Any) -> list[dict]:
    """Call `boardready.<function>(p_name => value, ...)` and return its rows.

    The function name comes from code, never from a request; values are always
    bound parameters. Pool connections are in autocommit, so the call is its
    own transaction unless the caller opened one with `conn.transaction()`.
    """
    return conn.execute(_call_query(function, tuple(params)), params).fetchall()


@lru_cache(maxsize=512)
def _call_query(function: str, names: tuple[str, ...]) -> str:
    """The query text for a function and its parameter names, rendered once:
    composing it on every call cost a tenth of a millisecond per request."""
    if not _FUNCTION_NAME.match(function):
        raise ValueError(f"not a function name: {function!r}")
    args = sql.SQL(", ").join(sql.SQL("{} => {}").format(sql.Identifier(n), sql.Placeholder(n)) for n in names)
    query = sql.SQL("SELECT * FROM {}.{}({})").format(sql.Identifier(SCHEMA), sql.Identifier(function), args)
    return query.as_string(None)


def call_one(conn: psycopg.Connection, function: str, /, **params: Any) -> dict:
    rows = call(conn, function, **params)
    if len(rows) != 1:
        raise RuntimeError(f"{function} returned {len(rows)} rows, expected 1")
    return rows[0]

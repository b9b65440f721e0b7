"""Failed-authentication throttling, kept in PostgreSQL so that every replica
shares the counters (sql/functions/auth_throttle.sql).

The client key is the peer address, or the first hop of X-Forwarded-For when
the peer is a trusted proxy (SERVICE_TRUSTED_PROXIES; app/web/client_address.py).
The bearer and operator paths use separate limiters.
"""
from __future__ import annotations

import datetime as dt

from app import sql_api
from app.web import client_address
from app.web.errors import ApiError

BEARER = "bearer"
OPERATOR = "operator"
MAX_CLIENT_KEY = 100


def now() -> dt.datetime:
    """The clock the auth paths pass to SQL as p_now (tests replace it)."""
    return dt.datetime.now(dt.UTC)


def client_key(req) -> str:
    """The request's client key: from the peer and, behind one of the trusted
    proxies the hardening middleware put in `req.context`, X-Forwarded-For
    (app/web/client_address.py). Computed on first use and kept for the rest
    of the request. Without the middleware: the peer address."""
    context = req.context
    key = getattr(context, "client_key", None)
    if key is None:
        trusted_proxies = getattr(context, "trusted_proxies", None)
        if trusted_proxies is None:
            return (req.remote_addr or "unknown")[:MAX_CLIENT_KEY]
        key = context.client_key = client_address.client_key(req.remote_addr, req.get_header("X-Forwarded-For"),
                                                              trusted_proxies)
    return key


def refuse_if_limited(conn, limiter: str, key: str, limit: int, at: dt.datetime) -> None:
    """429 with Retry-After while the client's failures in this window reached the limit.

    Runs before any credential is looked at, so a limited client learns
    nothing, not even with the right token; the refusal itself is not counted.
    """
    row = sql_api.auth_throttle_check(conn, limiter=limiter, client_key=key, limit=limit, now=at)
    if row["limited"]:
        raise limited(row["retry_after_seconds"])


def limited(retry_after_seconds: int) -> ApiError:
    return ApiError(429, "too_many_auth_failures",
                    "too many failed authentications from this client; retry after the window resets",
                    headers={"Retry-After": str(retry_after_seconds)})


def record_failure(conn, limiter: str, key: str, at: dt.datetime) -> int:
    return sql_api.auth_throttle_record_failure(conn, limiter=limiter, client_key=key, now=at)["failures"]

"""What the API and the workers share about queue items.

The workers claim and process queue items; the API processes one itself when
it publishes a result synchronously. Both report outcomes through the same SQL
functions, so they share the same words for what went wrong.
"""
from __future__ import annotations

import os
import socket

import psycopg


class LeaseLost(Exception):
    """The lease this process held was taken over; the new holder's run is the one that counts."""

    reason_code = "lease_lost"


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

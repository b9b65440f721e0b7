"""Path ids and request headers that several resources parse the same way.

ASCII digits only, checked before `int()`: `str.isdigit()` admits '²' and
other Unicode digits that `int()` then refuses, and `int()` of a 5000-digit
string raises too; either would have been a 500 instead of a 4xx.
"""
from __future__ import annotations

import datetime as dt
import re

from app.web.errors import ApiError

POSITIVE_ID = re.compile(r"[1-9][0-9]{0,18}")
MAX_ID = 2**63 - 1                          # a bigint column
IDEMPOTENCY_KEY = re.compile(r"[\x21-\x7e]{1,200}")
# The instants a request may name: what every layer (Python, PostgreSQL, the
# JSON we answer with) can hold and print back.
EARLIEST = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
LATEST = dt.datetime(9999, 12, 31, 23, 59, 59, 999999, tzinfo=dt.UTC)


def positive_id(raw: str | None) -> int | None:
    """A positive 64-bit id, or None for anything else."""
    if raw is None or not POSITIVE_ID.fullmatch(raw):
        return None
    value = int(raw)
    return value if value <= MAX_ID else None


def path_id(raw: str, code: str, name: str) -> int:
    """An id the caller must get right: anything else is 400 `code`."""
    value = positive_id(raw)
    if value is None:
        raise ApiError(400, code, f"{name} must be a positive integer id")
    return value


def idempotency_key(req) -> str:
    """The required Idempotency-Key header of an operator write."""
    key = req.get_header("Idempotency-Key")
    if key is None:
        raise ApiError(400, "missing_idempotency_key", "the Idempotency-Key header is required")
    if not IDEMPOTENCY_KEY.fullmatch(key):
        raise ApiError(400, "invalid_idempotency_key", "Idempotency-Key must be 1-200 visible ASCII characters")
    return key


def utc_instant(raw, max_length: int = 64) -> dt.datetime | None:
    """An ISO 8601 instant with an offset within 1970-01-01 .. 9999-12-31 UTC, in UTC;
    None for anything else (no offset, out of range, not text): the caller answers 400."""
    if not isinstance(raw, str) or len(raw) > max_length:
        return None
    try:
        moment = dt.datetime.fromisoformat(raw.strip().replace("Z", "+00:00"))
        if moment.tzinfo is None:
            return None
        moment = moment.astimezone(dt.UTC)   # OverflowError past year 9999 in UTC
    except (ValueError, OverflowError):
        return None
    return moment if EARLIEST <= moment <= LATEST else None

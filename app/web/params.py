"""Path ids and request headers that several resources parse the same way.

ASCII digits only, checked before `int()`: `str.isdigit()` admits '²' and
other Unicode digits that `int()` then refuses, and `int()` of a 5000-digit
string raises too; either would have been a 500 instead of a 4xx.
"""
from __future__ import annotations

import re

from app.web.errors import ApiError

POSITIVE_ID = re.compile(r"[1-9][0-9]{0,18}")
MAX_ID = 2**63 - 1                          # a bigint column
IDEMPOTENCY_KEY = re.compile(r"[\x21-\x7e]{1,200}")


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

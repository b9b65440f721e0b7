"""API token values and the validation of token requests, shared by the HTTP
endpoints (app/web/tokens.py) and the operator CLI (bin/token).

A value is `svc_live_` followed by 32 random bytes in URL-safe base64 (256
bits). Only its SHA-256 goes to the database; `tokenPrefix` is the first 12
characters (the fixed prefix and 3 random ones, 18 bits: enough to tell
tokens apart in a list, far too little to help guess one).
"""
from __future__ import annotations

import hashlib
import re
import secrets
from dataclasses import dataclass

from app.refusal import Refused

TOKEN_PREFIX = "svc_live_"
RANDOM_BYTES = 32
TOKEN_VALUE = re.compile(r"^svc_live_[A-Za-z0-9_-]{43}$")
DISPLAY_PREFIX_LENGTH = 12
SCOPES = ("runs:write", "reviews:read", "reviews:write", "admin")
DEFAULT_SCOPES = ("runs:write", "reviews:read", "reviews:write")
REPOSITORY_ID = re.compile(r"^[1-9][0-9]{0,18}$")
TOKEN_ID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
MAX_NAME = 100
# Visible ASCII and inner spaces, as contracts/openapi.json states it.
NAME = re.compile(r"^[\x21-\x7e](?:[\x20-\x7e]{0,98}[\x21-\x7e])?$")
MAX_REPOSITORY_ID = 2**63 - 1   # a bigint column
MAX_DURATION_DAYS = 365


class InvalidTokenRequest(Refused, ValueError):
    """A bad field of a token request; `code` is the stable error code."""



@dataclass(frozen=True)
class NewToken:
    value: str
    sha256: bytes
    prefix: str

    def __repr__(self) -> str:  # never print the value by accident
        return f"NewToken(prefix={self.prefix!r})"


def generate() -> NewToken:
    value = TOKEN_PREFIX + secrets.token_urlsafe(RANDOM_BYTES)
    return NewToken(value, digest(value), value[:DISPLAY_PREFIX_LENGTH])


def digest(value: str) -> bytes:
    return hashlib.sha256(value.encode("ascii")).digest()


def repository_id(value) -> int:
    if not isinstance(value, str) or not REPOSITORY_ID.match(value) or int(value) > MAX_REPOSITORY_ID:
        raise InvalidTokenRequest("invalid_repository_id", "repositoryId must be the repository's id as a string of digits")
    return int(value)


def token_id(value) -> str:
    if not isinstance(value, str) or not TOKEN_ID.match(value.lower()):
        raise InvalidTokenRequest("invalid_token_id", "tokenId must be a token id (a UUID)")
    return value.lower()


def name(value) -> str:
    if not isinstance(value, str) or not NAME.match(value):
        raise InvalidTokenRequest("invalid_name", f"name must be 1 to {MAX_NAME} visible ASCII characters or inner spaces")
    return value


def scopes(value) -> list[str]:
    if value is None:
        return list(DEFAULT_SCOPES)
    if (not isinstance(value, list) or not value
            or any(not isinstance(s, str) or s not in SCOPES for s in value)):
        raise InvalidTokenRequest("invalid_scopes", "scopes must be a non-empty list of " + ", ".join(SCOPES))
    return [s for s in SCOPES if s in value]   # canonical order, duplicates dropped


def duration_days(value) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_DURATION_DAYS:
        raise InvalidTokenRequest("invalid_duration_days", f"durationDays must be an integer from 1 to {MAX_DURATION_DAYS}")
    return value

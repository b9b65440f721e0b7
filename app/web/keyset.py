"""Keyset pages: the `limit` and `cursor` query parameters and the opaque cursor.

A cursor is the last row's key plus the filters it was made under, signed
with a key derived from the caller's own credential (the Authorization header
or the session cookie, already verified by the time a resource runs). A
cursor that was altered, made for other filters or by another caller is 400
`invalid_cursor`; no server secret is needed and no offset is ever used.
"""
from __future__ import annotations

import base64
import hashlib
import hmac
import json
import re

from app.web.errors import ApiError
from app.web.session_auth import SESSION_COOKIE, cookie_value

MAX_CURSOR = 600
LIMIT = re.compile(r"[0-9]{1,4}")  # ASCII: str.isdigit() admits digits int() refuses
MAC_BYTES = 16


def limit_param(req, default: int = 25, maximum: int = 100) -> int:
    raw = req.get_param("limit")
    if raw is None:
        return default
    if not LIMIT.fullmatch(raw) or not 1 <= int(raw) <= maximum:
        raise ApiError(400, "invalid_limit", f"limit must be an integer from 1 to {maximum}")
    return int(raw)


def _key(req) -> bytes:
    credential = req.get_header("Authorization") or cookie_value(req, SESSION_COOKIE) or ""
    return hashlib.sha256(b"keyset-cursor:" + credential.encode()).digest()


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def encode(req, key: list, filters: dict) -> str:
    payload = json.dumps([key, filters], separators=(",", ":"), sort_keys=True).encode()
    mac = hmac.new(_key(req), payload, hashlib.sha256).digest()[:MAC_BYTES]
    return f"{_b64(payload)}.{_b64(mac)}"


def decode(req, filters: dict) -> list | None:
    """The key in the request's cursor (None without one); 400 invalid_cursor if it was not ours as is."""
    cursor = req.get_param("cursor")
    if cursor is None:
        return None
    try:
        if len(cursor) > MAX_CURSOR:
            raise ValueError
        payload_text, mac_text = cursor.split(".")
        payload, mac = _unb64(payload_text), _unb64(mac_text)
        expected = hmac.new(_key(req), payload, hashlib.sha256).digest()[:MAC_BYTES]
        if not hmac.compare_digest(mac, expected):
            raise ValueError
        key, made_for = json.loads(payload)
    except (ValueError, TypeError):
        raise ApiError(400, "invalid_cursor", "the cursor is not one this listing gave out") from None
    if made_for != filters or not isinstance(key, list):
        raise ApiError(400, "invalid_cursor", "the cursor was made for other filters")
    return key


def page(req, rows: list, limit: int, key_of, filters: dict) -> tuple[list, str | None]:
    """The first `limit` rows and the cursor after them (None on the last page): callers fetch limit + 1."""
    if len(rows) <= limit:
        return rows, None
    rows = rows[:limit]
    return rows, encode(req, key_of(rows[-1]), filters)

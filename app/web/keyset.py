"""Keyset pages: the `limit` and `cursor` query parameters and the opaque cursor.

A cursor is the last row's key plus the listing and filters it was made
under, MACed (HMAC-SHA-256) with the server's cursor key and bound to the
viewer it was given to (the session's person or the token). The key is
SERVICE_CURSOR_SECRET, else a random one generated once into the data folder
(`cursor-secret`, mode 0600) and shared by every process using that folder. A
cursor that was altered, made for another listing, other filters or another
viewer, or whose key fields are not exactly the types the listing gives out
(a bool is not an int; ints within their column's range; instants within
1970..9999 UTC) is 400 `invalid_cursor`, never a 500. No offset is ever used.
"""
from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import re
import secrets
import threading
from pathlib import Path

from app.web.errors import ApiError
from app.web.params import utc_instant

MAX_CURSOR = 600
LIMIT = re.compile(r"[0-9]{1,4}")  # ASCII: str.isdigit() admits digits int() refuses
MAC_BYTES = 16
SECRET_FILE = "cursor-secret"

# The types of a key's fields.
ID = "id"              # a positive bigint
ORDINAL = "ordinal"    # an integer column: 0 .. 2**31 - 1
INSTANT = "instant"    # an ISO 8601 instant with an offset, 1970..9999 UTC
_RANGES = {ID: (1, 2**63 - 1), ORDINAL: (0, 2**31 - 1)}

_keys: dict[str, bytes] = {}
_keys_lock = threading.Lock()


def limit_param(req, default: int = 25, maximum: int = 100) -> int:
    raw = req.get_param("limit")
    if raw is None:
        return default
    if not LIMIT.fullmatch(raw) or not 1 <= int(raw) <= maximum:
        raise ApiError(400, "invalid_limit", f"limit must be an integer from 1 to {maximum}")
    return int(raw)


def _generated_secret(data_dir: str) -> str:
    """The data folder's cursor secret, made once (atomically: the first process's wins)."""
    folder = Path(data_dir)
    path = folder / SECRET_FILE
    if not path.exists():
        folder.mkdir(parents=True, exist_ok=True)
        scratch = folder / f".{SECRET_FILE}.{os.getpid()}.{secrets.token_hex(4)}"
        fd = os.open(scratch, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="ascii") as handle:
            handle.write(secrets.token_urlsafe(32))
        try:
            os.link(scratch, path)
        except FileExistsError:
            pass
        finally:
            scratch.unlink()
    return path.read_text(encoding="ascii").strip()


def _server_key(config) -> bytes:
    if config is not None and config.cursor_secret is not None:
        secret = config.cursor_secret.reveal()
    else:
        data_dir = config.data_dir if config is not None else ".data"
        with _keys_lock:
            if data_dir not in _keys:
                _keys[data_dir] = hashlib.sha256(_generated_secret(data_dir).encode()).digest()
            return _keys[data_dir]
    return hashlib.sha256(b"keyset-cursor:" + secret.encode()).digest()


def _viewer(req) -> str:
    """Whom the cursor was given to: the session (not only its person) or the token."""
    auth = getattr(req.context, "auth", None)
    session_id = getattr(auth, "session_id", None)
    return f"session:{session_id}" if session_id else getattr(auth, "actor", None) or ""


def _mac(req, payload: bytes) -> bytes:
    bound = f"{_viewer(req)}\n{req.path}\n".encode() + payload
    return hmac.new(_server_key(getattr(req.context, "config", None)), bound, hashlib.sha256).digest()[:MAC_BYTES]


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def encode(req, key: list, filters: dict) -> str:
    payload = json.dumps([key, filters], separators=(",", ":"), sort_keys=True).encode()
    return f"{_b64(payload)}.{_b64(_mac(req, payload))}"


def _typed(value, kind: str) -> bool:
    if kind == INSTANT:
        return isinstance(value, str) and utc_instant(value) is not None
    low, high = _RANGES[kind]
    return type(value) is int and low <= value <= high


def _invalid(message: str = "the cursor is not one this listing gave out") -> ApiError:
    return ApiError(400, "invalid_cursor", message)


def decode(req, filters: dict, types: tuple[str, ...]) -> list | None:
    """The key in the request's cursor (None without one), its fields of exactly `types`;
    400 invalid_cursor if it was not given out as is, by this listing, to this viewer."""
    cursor = req.get_param("cursor")
    if cursor is None:
        return None
    try:
        if len(cursor) > MAX_CURSOR or not cursor.isascii():
            raise ValueError
        payload_text, mac_text = cursor.split(".")
        payload, mac = _unb64(payload_text), _unb64(mac_text)
        if not hmac.compare_digest(mac, _mac(req, payload)):
            raise ValueError
        key, made_for = json.loads(payload)
    except (ValueError, TypeError):
        raise _invalid() from None
    if made_for != filters:
        raise _invalid("the cursor was made for other filters")
    if not isinstance(key, list) or len(key) != len(types) or not all(map(_typed, key, types)):
        raise _invalid()
    return key


def page(req, rows: list, limit: int, key_of, filters: dict) -> tuple[list, str | None]:
    """The first `limit` rows and the cursor after them (None on the last page): callers fetch limit + 1."""
    if len(rows) <= limit:
        return rows, None
    rows = rows[:limit]
    return rows, encode(req, key_of(rows[-1]), filters)

"""A record of every request the emulator answered (control routes excepted).

Credentials never enter the log: the Authorization and Cookie headers keep only
their scheme, and secret-looking body fields (client_secret, tokens, private
keys) are replaced. Response bodies are not recorded since they hold tokens.
"""
from __future__ import annotations

import json
import time
from urllib.parse import parse_qs

from emulator.numbered import NumberedRecords

REDACTED = "[redacted]"
SECRET_HEADERS = {"authorization", "cookie", "proxy-authorization", "x-hub-signature-256", "x-hub-signature"}
SECRET_FIELDS = {"client_secret", "access_token", "token", "private_key", "private_key_pem", "code", "refresh_token",
                 "password", "code_verifier"}
MAX_LOGGED_BODY = 64 * 1024
MAX_ENTRIES = 10_000


def redact_headers(headers: dict) -> dict:
    redacted = {}
    for name, value in headers.items():
        if name.lower() in SECRET_HEADERS:
            scheme, _, rest = value.partition(" ")
            redacted[name] = f"{scheme} {REDACTED}" if rest else REDACTED
        else:
            redacted[name] = value
    return redacted


def redact_body(value):
    if isinstance(value, dict):
        return {k: (REDACTED if k.lower() in SECRET_FIELDS else redact_body(v)) for k, v in value.items()}
    if isinstance(value, list):
        return [redact_body(v) for v in value]
    return value


def loggable_body(raw: bytes, content_type: str | None):
    if not raw:
        return None
    if len(raw) > MAX_LOGGED_BODY:
        return {"_truncated": True, "_bytes": len(raw)}
    try:
        if content_type and "x-www-form-urlencoded" in content_type:
            return redact_body({k: v[-1] for k, v in parse_qs(raw.decode()).items()})
        return redact_body(json.loads(raw))
    except (ValueError, UnicodeDecodeError):
        return {"_unparsed": raw[:200].decode("utf-8", "replace")}


class RequestLog(NumberedRecords):
    """The latest MAX_ENTRIES requests, numbered by ``seq`` as they arrive."""

    def record(self, **entry) -> dict:
        entry["seq"] = self._next_number()
        entry["time"] = time.time()
        with self._lock:
            self._records.append(entry)
            del self._records[:-MAX_ENTRIES]
        return entry

    def update(self, entry: dict, **fields) -> None:
        """Complete an entry recorded when the request arrived (status, fault, duration)."""
        with self._lock:
            entry.update(fields)

    def entries(self, method: str | None = None, path_prefix: str | None = None, operation_id: str | None = None) -> list[dict]:
        with self._lock:
            found = [dict(e) for e in self._records]
        if method:
            found = [e for e in found if e["method"] == method.upper()]
        if path_prefix:
            found = [e for e in found if e["path"].startswith(path_prefix)]
        if operation_id:
            found = [e for e in found if e.get("operation_id") == operation_id]
        return found

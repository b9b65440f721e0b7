"""What every answer the front writes itself (408, 413, 431, 500) carries; the
application's own answers get the same from app/web/hardening.py."""
from __future__ import annotations

import json

HARDENING_HEADERS = [(b"x-content-type-options", b"nosniff"), (b"cache-control", b"no-store")]


def json_refusal(code: str, message: str) -> bytes:
    return json.dumps({"ok": False, "code": code, "message": message}).encode()

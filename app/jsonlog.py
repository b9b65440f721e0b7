"""Structured logs: one JSON object per line on stderr, an `event` name and fields.

Callers pass identifiers and counts, never payloads, tokens or secrets.
"""
from __future__ import annotations

import json
import sys
import threading
import time

_lock = threading.Lock()


def log(event: str, /, level: str = "info", **fields) -> None:
    record = {"ts": round(time.time(), 3), "level": level, "event": event}
    record.update(fields)
    line = json.dumps(record, default=str, separators=(",", ":"))
    with _lock:
        sys.stderr.write(line + "\n")
        sys.stderr.flush()

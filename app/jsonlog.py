"""Structured logs: one JSON object per line on stderr, an `event` name and fields.

Callers pass identifiers and counts, never payloads, tokens or secrets.
"""
from __future__ import annotations

import logging
import sys
import threading
import time

import orjson

_lock = threading.Lock()


def log(event: str, /, level: str = "info", **fields) -> None:
    record = {"ts": round(time.time(), 3), "level": level, "event": event}
    record.update(fields)
    # orjson: a log line per delivery is on the intake's hot path.
    line = orjson.dumps(record, default=str, option=orjson.OPT_APPEND_NEWLINE | orjson.OPT_NON_STR_KEYS)
    with _lock:
        sys.stderr.write(line.decode())
        sys.stderr.flush()


class _JsonHandler(logging.Handler):
    """Library log records (psycopg's pool, gunicorn) as our JSON lines."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            message = record.getMessage()
        except Exception:  # a malformed record must not take the process down
            message = str(record.msg)
        log("library.log", level=record.levelname.lower(), logger=record.name, message=message[:500])


def capture_library_logs(level: int = logging.WARNING) -> None:
    """Route the standard logging module's warnings into the JSON log (once)."""
    root = logging.getLogger()
    if not any(isinstance(h, _JsonHandler) for h in root.handlers):
        root.addHandler(_JsonHandler())
    root.setLevel(level)

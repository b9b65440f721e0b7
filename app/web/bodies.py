"""Reading request bodies: bounded before and while reading, JSON objects only."""
from __future__ import annotations

import json

from app.web.errors import ApiError

READ_CHUNK = 64 * 1024


def require_json_content_type(req) -> None:
    if (req.content_type or "").split(";", 1)[0].strip().lower() != "application/json":
        raise ApiError(400, "invalid_content_type", "Content-Type must be application/json")


def read_bounded(req, limit: int) -> bytes:
    """The raw body; 413 past `limit`, judged from Content-Length before reading
    and enforced while reading (chunked bodies, a lying Content-Length): never
    more than limit + 1 bytes in memory."""
    declared = req.content_length
    if declared is not None and declared > limit:
        raise ApiError(413, "payload_too_large", f"body above {limit} bytes")
    # Without Content-Length (chunked transfer), Falcon's bounded stream reads
    # nothing; gunicorn's input stream decodes the chunks and ends cleanly.
    stream = req.bounded_stream if declared is not None else req.stream
    chunks, total = [], 0
    while True:
        chunk = stream.read(min(READ_CHUNK, limit + 1 - total))
        if not chunk:
            break
        chunks.append(chunk)
        total += len(chunk)
        if total > limit:
            raise ApiError(413, "payload_too_large", f"body above {limit} bytes")
    return b"".join(chunks)


def parse_json_object(raw: bytes) -> dict:
    try:
        body = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        raise ApiError(400, "malformed_json", "body is not valid JSON") from None
    if not isinstance(body, dict):
        raise ApiError(400, "malformed_json", "body must be a JSON object")
    return body


def read_json_object(req, limit: int) -> dict:
    require_json_content_type(req)
    return parse_json_object(read_bounded(req, limit))

"""Reading a signed webhook delivery, shared by the lifecycle and marketplace
endpoints: secret present, headers well formed, size bounded before and while
reading, HMAC-SHA256 signature compared in constant time, then JSON.

The order matters: nothing is parsed before the signature is verified, and
nothing is read past the size limit.
"""
from __future__ import annotations

import hashlib
import hmac
import json
import re
from dataclasses import dataclass

from app.config import Secret
from app.web.errors import ApiError

DELIVERY_ID = re.compile(r"^[A-Za-z0-9._:-]{1,200}$")
EVENT_NAME = re.compile(r"^[a-z_]{1,64}$")
SIGNATURE = re.compile(r"^sha256=([0-9a-fA-F]{64})$")
READ_CHUNK = 64 * 1024


@dataclass(frozen=True)
class SignedDelivery:
    delivery_id: str
    event: str
    payload: dict
    raw_sha256: str
    raw_bytes: int


def _header(req, *names: str) -> str | None:
    for name in names:
        value = req.get_header(name)
        if value is not None:
            return value
    return None


def _read_bounded(req, limit: int) -> bytes:
    declared = req.content_length
    if declared is not None and declared > limit:
        raise ApiError(413, "payload_too_large", f"body above {limit} bytes")
    # Enforced while reading too (chunked bodies, lying Content-Length):
    # never hold more than limit + 1 bytes.
    chunks, total = [], 0
    # Without Content-Length (chunked transfer), Falcon's bounded stream reads
    # nothing; gunicorn's input stream decodes the chunks and ends cleanly.
    stream = req.bounded_stream if declared is not None else req.stream
    while True:
        chunk = stream.read(min(READ_CHUNK, limit + 1 - total))
        if not chunk:
            break
        chunks.append(chunk)
        total += len(chunk)
        if total > limit:
            raise ApiError(413, "payload_too_large", f"body above {limit} bytes")
    return b"".join(chunks)


def read_signed_delivery(req, secret: Secret | None, secret_name: str, limit: int) -> SignedDelivery:
    if secret is None:
        raise ApiError(503, "webhook_secret_missing", f"{secret_name} is not configured")

    content_type = (req.content_type or "").split(";", 1)[0].strip().lower()
    if content_type != "application/json":
        raise ApiError(400, "invalid_content_type", "Content-Type must be application/json")
    signature = _header(req, "X-Hub-Signature-256")
    if signature is None:
        raise ApiError(400, "missing_signature", "X-Hub-Signature-256 is required")
    match = SIGNATURE.match(signature.strip())
    if not match:
        raise ApiError(400, "invalid_signature_header", "X-Hub-Signature-256 must be sha256=<64 hex digits>")
    delivery_id = _header(req, "X-Host-Delivery", "X-GitHub-Delivery")
    if delivery_id is None or not DELIVERY_ID.match(delivery_id):
        raise ApiError(400, "invalid_delivery_id", "X-Host-Delivery must be 1-200 characters of [A-Za-z0-9._:-]")
    event = _header(req, "X-Host-Event", "X-GitHub-Event")
    if event is None or not EVENT_NAME.match(event):
        raise ApiError(400, "invalid_event", "X-Host-Event must be an event name")

    raw = _read_bounded(req, limit)
    expected = hmac.new(secret.reveal().encode(), raw, hashlib.sha256).digest()
    if not hmac.compare_digest(expected, bytes.fromhex(match.group(1))):
        raise ApiError(401, "invalid_signature", "signature does not match the body")

    try:
        payload = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        raise ApiError(400, "malformed_json", "body is not valid JSON") from None
    if not isinstance(payload, dict):
        raise ApiError(400, "malformed_json", "body must be a JSON object")
    return SignedDelivery(delivery_id, event, payload, hashlib.sha256(raw).hexdigest(), len(raw))

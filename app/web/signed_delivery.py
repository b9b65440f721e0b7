"""Reading a signed webhook delivery, shared by the lifecycle and marketplace
endpoints: secret present, headers well formed, size bounded before and while
reading, HMAC-SHA256 signature compared in constant time, then JSON.

The order matters: nothing is parsed before the signature is verified, and
nothing is read past the size limit.
"""
from __future__ import annotations

import hashlib
import hmac
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

from app.config import Secret
from app.web.bodies import parse_json_object, read_bounded, require_json_content_type
from app.web.errors import ApiError

DELIVERY_ID = re.compile(r"^[A-Za-z0-9._:-]{1,200}$")
EVENT_NAME = re.compile(r"^[a-z_]{1,64}$")
SIGNATURE = re.compile(r"^sha256=([0-9a-fA-F]{64})$")
# The headers' WSGI environ keys (PEP 3333), read from the environ directly:
# falcon's get_header raises and catches a KeyError for an absent header, and
# every delivery lacks one name of each pair.
SIGNATURE_HEADER = ("HTTP_X_HUB_SIGNATURE_256",)
DELIVERY_HEADERS = ("HTTP_X_HOST_DELIVERY", "HTTP_X_GITHUB_DELIVERY")
EVENT_HEADERS = ("HTTP_X_HOST_EVENT", "HTTP_X_GITHUB_EVENT")


@dataclass(frozen=True)
class SignedDelivery:
    delivery_id: str
    event: str
    payload: dict
    raw_sha256: str
    raw_bytes: int


def _header(req, environ_keys: tuple[str, ...]) -> str | None:
    """The first of these headers the request carries."""
    environ = req.env
    for key in environ_keys:
        value = environ.get(key)
        if value is not None:
            return value
    return None


@lru_cache(maxsize=4)
def _keyed_hmac(secret: Secret) -> hmac.HMAC:
    """The HMAC-SHA256 state after the key, computed once per secret: each
    delivery copies it rather than deriving it again."""
    return hmac.new(secret.reveal().encode(), digestmod=hashlib.sha256)


def read_signed_delivery(req, secret: Secret | None, secret_name: str, limit: int,
                         parse: Callable[[bytes], dict] = parse_json_object) -> SignedDelivery:
    """The verified delivery. By default its body passes parse_json_object's
    checks of the whole tree (app/web/bodies.py), so a body the database
    could not store is a 400 here, never a 503 that asks for a resend. An
    endpoint that keeps only fields its readers check (app/payload.py) asks
    for parse_strict_json_object: strict JSON is all it needs of the rest."""
    if secret is None:
        raise ApiError(503, "webhook_secret_missing", f"{secret_name} is not configured")

    require_json_content_type(req)
    signature = _header(req, SIGNATURE_HEADER)
    if signature is None:
        raise ApiError(400, "missing_signature", "X-Hub-Signature-256 is required")
    match = SIGNATURE.match(signature.strip())
    if not match:
        raise ApiError(400, "invalid_signature_header", "X-Hub-Signature-256 must be sha256=<64 hex digits>")
    delivery_id = _header(req, DELIVERY_HEADERS)
    if delivery_id is None or not DELIVERY_ID.match(delivery_id):
        raise ApiError(400, "invalid_delivery_id", "X-Host-Delivery must be 1-200 characters of [A-Za-z0-9._:-]")
    event = _header(req, EVENT_HEADERS)
    if event is None or not EVENT_NAME.match(event):
        raise ApiError(400, "invalid_event", "X-Host-Event must be an event name")

    raw = read_bounded(req, limit)
    mac = _keyed_hmac(secret).copy()
    mac.update(raw)
    if not hmac.compare_digest(mac.digest(), bytes.fromhex(match.group(1))):
        raise ApiError(401, "invalid_signature", "signature does not match the body")

    payload = parse(raw)
    return SignedDelivery(delivery_id, event, payload, hashlib.sha256(raw).hexdigest(), len(raw))

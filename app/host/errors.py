"""How a code host call ended, in the terms the outbox acts on.

- HostRetryable: try again later (5xx, 429, secondary rate limits, a
  connection that never reached the host); `not_before` honours Retry-After
  and X-RateLimit-Reset.
- HostPermanent: the same request will fail again (404, 422, other 4xx).
- HostUncertain: the request was sent and no answer came back; the host may
  have acted on it. Never retried blindly.
"""
from __future__ import annotations

import datetime as dt


class HostError(Exception):
    reason_code = "host_error"

    def __init__(self, message: str, status: int | None = None):
        super().__init__(message)
        self.status = status


class HostRetryable(HostError):
    reason_code = "host_retryable"

    def __init__(self, message: str, status: int | None = None, not_before: dt.datetime | None = None,
                 reason_code: str | None = None):
        super().__init__(message, status)
        self.not_before = not_before
        if reason_code:
            self.reason_code = reason_code


class HostPermanent(HostError):
    reason_code = "host_rejected"

    def __init__(self, message: str, status: int | None = None, reason_code: str | None = None):
        super().__init__(message, status)
        if reason_code:
            self.reason_code = reason_code


class HostUncertain(HostError):
    reason_code = "host_response_lost"


def _whole_number(value: str | None) -> int | None:
    """A header's non-negative integer, else None: ASCII digits only (str.isdigit()
    admits digits that int() refuses) and at most 12 of them."""
    text = (value or "").strip()
    return int(text) if text.isascii() and text.isdigit() and len(text) <= 12 else None


def _retry_after(headers, now: dt.datetime) -> dt.datetime | None:
    seconds = _whole_number(headers.get("retry-after"))
    if seconds is not None:
        return now + dt.timedelta(seconds=min(seconds, 3600))
    if headers.get("x-ratelimit-remaining") == "0":
        reset = _whole_number(headers.get("x-ratelimit-reset"))
        if reset is not None:
            latest = now + dt.timedelta(hours=1)   # before converting: a year past 9999 would raise
            return dt.datetime.fromtimestamp(min(reset, latest.timestamp()), dt.UTC)
    return None


def classify_response(response, now: dt.datetime | None = None) -> HostError | None:
    """None for 2xx; otherwise the error to raise."""
    status = response.status_code
    if 200 <= status < 300:
        return None
    now = now or dt.datetime.now(dt.UTC)
    not_before = _retry_after(response.headers, now)
    if status == 429:
        return HostRetryable("rate limited", status, not_before, reason_code="host_rate_limited")
    if status == 403 and (not_before is not None or _mentions_rate_limit(response)):
        return HostRetryable("secondary rate limit", status, not_before, reason_code="host_rate_limited")
    if status >= 500:
        return HostRetryable(f"host answered {status}", status, not_before, reason_code="host_unavailable")
    if status == 404:
        return HostPermanent("not found", status, reason_code="host_not_found")
    if status == 401:
        # The installation token expired or was revoked under us: a new one fixes it.
        return HostRetryable("unauthorized", status, reason_code="host_unauthorized")
    return HostPermanent(f"host refused the request ({status})", status, reason_code=f"host_rejected_{status}")


def _mentions_rate_limit(response) -> bool:
    try:
        message = str(response.json().get("message", ""))
    except ValueError:
        return False
    return "rate limit" in message.lower()

"""How the code host's answers are classified: a Retry-After or rate-limit
reset header is outside input, so a value int() cannot take, or a date past
year 9999, must mean "no hint", not a worker crash."""
from __future__ import annotations

import datetime as dt

import httpx
import pytest

from app.host.errors import HostRetryable, classify_response

NOW = dt.datetime(2026, 11, 23, 12, 0, tzinfo=dt.timezone.utc)


def classify(status: int, **headers: str):
    # As bytes, the way they come off the wire (httpx decodes them itself).
    return classify_response(httpx.Response(status, headers={k: v.encode() for k, v in headers.items()}), NOW)


def test_retry_after_seconds_are_kept_and_capped_at_an_hour():
    assert classify(429, **{"retry-after": "30"}).not_before == NOW + dt.timedelta(seconds=30)
    assert classify(429, **{"retry-after": "86400"}).not_before == NOW + dt.timedelta(hours=1)


@pytest.mark.parametrize("value", ["\u00b2", "\uff13\uff10", "9" * 5000, "-5", "soon", ""])
def test_retry_after_that_is_not_ascii_seconds_gives_no_hint(value):
    error = classify(429, **{"retry-after": value})
    assert isinstance(error, HostRetryable) and error.not_before is None


def test_a_rate_limit_reset_far_in_the_future_is_capped_before_it_is_converted():
    error = classify(403, **{"x-ratelimit-remaining": "0", "x-ratelimit-reset": "999999999999"})
    assert error.reason_code == "host_rate_limited" and error.not_before == NOW + dt.timedelta(hours=1)
    soon = int((NOW + dt.timedelta(minutes=5)).timestamp())
    assert classify(403, **{"x-ratelimit-remaining": "0", "x-ratelimit-reset": str(soon)}).not_before \
        == NOW + dt.timedelta(minutes=5)

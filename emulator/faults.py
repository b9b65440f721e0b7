"""Fault switches: make chosen requests fail the way the real host sometimes does.

A fault matches by method and/or a path pattern and/or operationId. The pattern
is either a path template (``/repos/{owner}/{repo}/check-runs``; ``{x}`` matches
one segment) or a glob (``/repos/*/check-runs*``). Effects, in order: delay
(``delay_ms``; a long delay is how a hang past the client's timeout is made),
then either drop the connection without an answer, or answer ``status`` with
``body`` and ``headers``; a fault with only a delay lets the request through.
With ``after``, the request is handled first and then its answer is dropped or
replaced: the host acted, the client never learns how (a lost answer, or a
dispatch answered ``204`` by a host that does not return run details).
``count`` applies it to the next N matching requests; without it, until cleared.
"""
from __future__ import annotations

import fnmatch
import re
import time
from dataclasses import asdict, dataclass, field

from emulator.numbered import NumberedRecords


@dataclass
class Fault:
    id: int
    method: str | None = None
    path: str | None = None
    operation_id: str | None = None
    status: int | None = None
    body: object = None
    headers: dict = field(default_factory=dict)
    delay_ms: int = 0
    drop: bool = False
    after: bool = False       # handle the request, then drop or replace its answer
    count: int | None = None  # None: persistent until cleared
    hits: int = 0

    def matches(self, method: str, path: str, operation_id: str | None) -> bool:
        if self.method and self.method.upper() != method.upper():
            return False
        if self.operation_id and self.operation_id != operation_id:
            return False
        return not self.path or _path_matches(self.path, path)

    def to_dict(self) -> dict:
        return asdict(self)


def _path_matches(pattern: str, path: str) -> bool:
    if "{" in pattern:
        regex = "^" + re.sub(r"\\\{\w+\\\}", "[^/]+", re.escape(pattern)) + "$"
        return re.match(regex, path) is not None
    return fnmatch.fnmatchcase(path, pattern)


def preset(name: str, reset_in_seconds: int = 60) -> dict:
    """Ready-made answers of the real host: primary and secondary rate limits, overload."""
    reset = str(int(time.time()) + reset_in_seconds)
    docs = "https://docs.github.com/rest/using-the-rest-api/rate-limits-for-the-rest-api"
    if name in ("rate_limit", "rate_limit_429"):
        # The primary limit: the host answers 403 (or, on some routes, 429) with the reset time.
        status = 403 if name == "rate_limit" else 429
        return {
            "status": status,
            "headers": {"X-RateLimit-Limit": "5000", "X-RateLimit-Remaining": "0", "X-RateLimit-Used": "5000",
                        "X-RateLimit-Reset": reset, "X-RateLimit-Resource": "core"},
            "body": {"message": "API rate limit exceeded for installation.", "documentation_url": docs,
                     "status": str(status)},
        }
    if name == "secondary_rate_limit":
        return {
            "status": 403,
            "headers": {"Retry-After": str(reset_in_seconds)},
            "body": {"message": "You have exceeded a secondary rate limit. Please wait a few minutes before you try again.",
                     "documentation_url": docs, "status": "403"},
        }
    if name == "server_error":
        return {"status": 500, "body": {"message": "Server Error", "status": "500"}}
    if name == "bad_gateway":
        return {"status": 502, "body": "<html><body><h1>502 Bad Gateway</h1></body></html>",
                "headers": {"Content-Type": "text/html"}}
    raise ValueError(f"unknown fault preset {name!r}")


class FaultSwitches(NumberedRecords):
    """The faults in force, numbered by ``id`` as they are added."""

    def add(self, **spec) -> Fault:
        """Add a fault; ``preset=`` fills status/headers/body from ``preset()``."""
        if "preset" in spec:
            name = spec.pop("preset")
            for key, value in preset(name, int(spec.pop("reset_in_seconds", 60))).items():
                spec.setdefault(key, value)
        unknown = set(spec) - {"method", "path", "operation_id", "status", "body", "headers", "delay_ms", "drop", "count",
                               "after"}
        if unknown:
            raise ValueError(f"unknown fault fields: {sorted(unknown)}")
        if not (spec.get("status") or spec.get("drop") or spec.get("delay_ms")):
            raise ValueError("a fault needs a status, drop or delay_ms")
        if spec.get("count") is not None and int(spec["count"]) < 1:
            raise ValueError("count must be at least 1")
        with self._lock:
            fault = Fault(id=self._next_number(), **spec)
            fault.headers = dict(fault.headers or {})
            self._records.append(fault)
            return fault

    def take(self, method: str, path: str, operation_id: str | None) -> Fault | None:
        """The first fault matching this request, counting it as used."""
        with self._lock:
            for fault in self._records:
                if fault.matches(method, path, operation_id):
                    fault.hits += 1
                    if fault.count is not None:
                        fault.count -= 1
                        if fault.count == 0:
                            self._records.remove(fault)
                    return fault
        return None

    def list(self) -> list[dict]:
        with self._lock:
            return [f.to_dict() for f in self._records]

    def remove(self, fault_id: int) -> bool:
        with self._lock:
            before = len(self._records)
            self._records = [f for f in self._records if f.id != fault_id]
            return len(self._records) != before

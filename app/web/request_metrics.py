"""Falcon middleware: every answer counted by route template, method and
status, with its latency (app/telemetry.py), and the pool sampled.

The route is the template the request matched (`/api/v1/runs/{run_id}`),
never the path, so ids do not make new series; a request that matched no
route is `unmatched`. First in the middleware list, so it times the others too.

It runs on every request, the webhook intake's among them, so the per-request
work is kept to the writes themselves: the labelled children of a (route,
method, status) are bound once per process and kept (`_bound`), since
`labels()` builds and looks up its label tuple under the metric's lock on
each call (in one thread, multiprocess mode: 6.4 us per request with it,
3.5 without). The set of keys is bounded: the routes are the application's
templates, an unknown method is `other`, and statuses are the application's
own. The counts stay synchronous (a scrape right after an answer sees it):
in multiprocess mode each count and observation is still a write to this
process's mmap file, about 1 us each, three per request. Served, the
middleware has cost the intake more than that (docs/benchmarks.md, "Session 6").
"""
from __future__ import annotations

from time import perf_counter

from app import telemetry


class RequestMetrics:
    def __init__(self, pool, pool_name: str = "api"):
        self.pool, self.pool_name = pool, pool_name
        # (route template or None, method, resp.status) -> (counter child, histogram child)
        self._bound: dict[tuple, tuple] = {}

    def process_request(self, req, resp):
        req.context.metrics_started = perf_counter()

    def process_response(self, req, resp, resource, req_succeeded):
        method = req.method if req.method in _METHODS else "other"
        key = (req.uri_template, method, resp.status)
        bound = self._bound.get(key)
        if bound is None:
            bound = self._bound[key] = _bind(req.uri_template or "unmatched", method, resp.status_code)
        requests, duration = bound
        requests.inc()
        started = getattr(req.context, "metrics_started", None)
        if started is not None:
            duration.observe(perf_counter() - started)
        if self.pool is not None:
            telemetry.sample_pool(self.pool, self.pool_name)


def _bind(route: str, method: str, status_code: int) -> tuple:
    # Two threads binding the same key at once get the same children from labels().
    return (telemetry.HTTP_REQUESTS.labels(route, method, str(status_code)),
            telemetry.HTTP_DURATION.labels(route, method))


_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})

"""Falcon middleware: every answer counted by route template, method and
status, with its latency (app/telemetry.py), and the pool sampled.

The route is the template the request matched (`/api/v1/runs/{run_id}`),
never the path, so ids do not make new series; a request that matched no
route is `unmatched`. First in the middleware list, so it times the others too.
"""
from __future__ import annotations

import time

from app import telemetry


class RequestMetrics:
    def __init__(self, pool, pool_name: str = "api"):
        self.pool, self.pool_name = pool, pool_name

    def process_request(self, req, resp):
        req.context.metrics_started = time.perf_counter()

    def process_response(self, req, resp, resource, req_succeeded):
        started = getattr(req.context, "metrics_started", None)
        route = req.uri_template or "unmatched"
        method = req.method if req.method in _METHODS else "other"
        telemetry.HTTP_REQUESTS.labels(route, method, str(resp.status_code)).inc()
        if started is not None:
            telemetry.HTTP_DURATION.labels(route, method).observe(time.perf_counter() - started)
        if self.pool is not None:
            telemetry.sample_pool(self.pool, self.pool_name)


_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})

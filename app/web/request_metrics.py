"""Falcon middleware: every answer counted by route template, method and
status, with its latency (app/telemetry.py), and the pool sampled.

The route is the template the request matched (`/api/v1/runs/{run_id}`),
never the path, so ids do not make new series; a request that matched no
route is `unmatched`. First in the middleware list, so it times the others too.

It runs on every request, the webhook intake's among them, so a request only
adds to its own thread's tally in memory: no lock, no system call, no file
write. The tallies are written into prometheus-client's metrics when they are
published (telemetry.publish_everywhere: before every scrape, in every
process serving the API, and once a second), as the increase since the last
publication. So a scrape still sees every answer given before it, in any
process. The set of keys is bounded: the routes are the application's
templates, an unknown method is `other`, and statuses are the application's
own. What it cost before, with a write per count into multiprocess files, and
what it costs now: docs/benchmarks.md, "Request metrics in memory".
"""
from __future__ import annotations

import threading
from bisect import bisect_left
from time import perf_counter

from app import telemetry

_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
#: The histogram's upper bounds, +Inf last: a duration falls in the first bound
#: it does not exceed, as prometheus-client's own observe() places it.
_BOUNDS = tuple(telemetry.HTTP_DURATION._upper_bounds)
# A tally entry: [requests, duration sum, one count per bucket...]
_REQUESTS, _SUM, _FIRST_BUCKET = 0, 1, 2


class RequestTallies:
    """This process's request counts and latencies, one tally per thread, and
    what of them was published into the metrics already."""

    def __init__(self):
        self._local = threading.local()
        self._tallies: list[dict] = []          # every thread's tally
        self._published: dict[tuple, list] = {}  # labels -> totals written into the metrics
        self._children: dict[tuple, tuple] = {}  # labels -> (counter child, histogram child)
        self._publish_lock = threading.Lock()

    def tally(self) -> dict:
        """This thread's tally: (route, method, status) labels -> entry."""
        try:
            return self._local.tally
        except AttributeError:
            tally = self._local.tally = {}
            self._tallies.append(tally)
            return tally

    def publish(self) -> None:
        """Write what was counted since the last publication into the metrics."""
        with self._publish_lock:
            totals: dict[tuple, list] = {}
            for tally in list(self._tallies):
                # Copies taken under the GIL: a thread counting meanwhile adds
                # a key or an increment that the next publication writes.
                for labels, entry in list(tally.items()):
                    entry = entry[:]
                    total = totals.get(labels)
                    if total is None:
                        totals[labels] = entry
                    else:
                        for i, value in enumerate(entry):
                            total[i] += value
            for labels, total in totals.items():
                published = self._published.get(labels)
                if published is None:
                    published = self._published[labels] = [0] * len(total)
                if total == published:
                    continue
                requests, duration = self._bound(labels)
                if total[_REQUESTS] > published[_REQUESTS]:
                    requests.inc(total[_REQUESTS] - published[_REQUESTS])
                if total[_SUM] > published[_SUM]:
                    duration._sum.inc(total[_SUM] - published[_SUM])
                for i, bucket in enumerate(duration._buckets, _FIRST_BUCKET):
                    if total[i] > published[i]:
                        bucket.inc(total[i] - published[i])
                self._published[labels] = total

    def _bound(self, labels: tuple) -> tuple:
        children = self._children.get(labels)
        if children is None:
            route, method, status = labels
            children = self._children[labels] = (telemetry.HTTP_REQUESTS.labels(route, method, status),
                                                 telemetry.HTTP_DURATION.labels(route, method))
        return children


#: One per process: every app built in it (tests build many) counts here.
TALLIES = RequestTallies()
telemetry.add_publisher(TALLIES.publish)


class RequestMetrics:
    def __init__(self, pool, pool_name: str = "api"):
        self.pool, self.pool_name = pool, pool_name
        # (route template or None, method, resp.status) -> labels, shared by the threads
        self._labels: dict[tuple, tuple] = {}
        telemetry.serve_publish_requests()

    def process_request(self, req, resp):
        req.context.metrics_started = perf_counter()

    def process_response(self, req, resp, resource, req_succeeded):
        method = req.method if req.method in _METHODS else "other"
        key = (req.uri_template, method, resp.status)
        labels = self._labels.get(key)
        if labels is None:
            labels = self._labels[key] = (req.uri_template or "unmatched", method, str(resp.status_code))
        tally = TALLIES.tally()
        entry = tally.get(labels)
        if entry is None:
            entry = tally[labels] = [0, 0.0] + [0] * len(_BOUNDS)
        entry[_REQUESTS] += 1
        started = getattr(req.context, "metrics_started", None)
        if started is not None:
            seconds = perf_counter() - started
            entry[_SUM] += seconds
            entry[_FIRST_BUCKET + bisect_left(_BOUNDS, seconds)] += 1
        if self.pool is not None:
            telemetry.sample_pool(self.pool, self.pool_name)

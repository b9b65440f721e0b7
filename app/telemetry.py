"""The service's own counters, through prometheus-client: requests by route and
status with their latency, the database pools' use and waits, and calls to
the code host by outcome. GET /metrics serves them beside the SLI gauges the
database computes (app/web/metrics.py).

Several processes count: gunicorn's workers and the worker process. When
PROMETHEUS_MULTIPROC_DIR is set (bin/serve sets it for the processes it
starts, app/serve.py), prometheus-client's multiprocess mode keeps each
process's values in files there and /metrics adds them up, so any gunicorn
worker answers for all of them. Without it (one process: a test, a tool)
the values are this process's. The choice and its limits are in
docs/operations.md, "Metrics of the processes".
"""
from __future__ import annotations

import os
import threading
import time

from prometheus_client import REGISTRY, CollectorRegistry, Counter, Gauge, Histogram, multiprocess

MULTIPROCESS_DIR = "PROMETHEUS_MULTIPROC_DIR"
POOL_SAMPLE_SECONDS = 1.0

HTTP_REQUESTS = Counter("boardready_http_requests_total", "HTTP requests answered, by route template, method and "
                        "status code.", ["route", "method", "status"])
HTTP_DURATION = Histogram("boardready_http_request_duration_seconds", "Time from the request reaching the "
                          "application to its answer, by route template and method.", ["route", "method"],
                          buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0))
HOST_CALLS = Counter("boardready_host_requests_total", "Requests to the code host's API, by method and outcome "
                     "(ok, or the error's reason code).", ["method", "outcome"])
HOST_DURATION = Histogram("boardready_host_request_duration_seconds", "Time the code host took to answer, by "
                          "outcome.", ["outcome"], buckets=(0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0))
POOL_CONNECTIONS = Gauge("boardready_db_pool_connections", "Database pool connections by pool and state (open: "
                         "held by the pool, idle: free to take, max: the pool's limit), summed over live processes.",
                         ["pool", "state"], multiprocess_mode="livesum")
POOL_WAITING = Gauge("boardready_db_pool_requests_waiting", "Requests waiting for a database connection now.",
                     ["pool"], multiprocess_mode="livesum")
POOL_WAITS = Counter("boardready_db_pool_waits_total", "Requests that had to wait for a database connection.",
                     ["pool"])
POOL_WAIT_SECONDS = Counter("boardready_db_pool_wait_seconds_total", "Time requests spent waiting for a database "
                            "connection.", ["pool"])
POOL_TIMEOUTS = Counter("boardready_db_pool_errors_total", "Requests that got no connection (timeout or error).",
                        ["pool"])

_sampled: dict[int, float] = {}
_sample_lock = threading.Lock()


def sample_pool(pool, name: str) -> None:
    """Copy a psycopg pool's figures into the metrics, at most once a second per pool.
    Its counters are taken with pop_stats (reset on read), so each wait is counted once."""
    now = time.monotonic()
    with _sample_lock:
        if now - _sampled.get(id(pool), 0.0) < POOL_SAMPLE_SECONDS:
            return
        _sampled[id(pool)] = now
    stats = pool.pop_stats()
    POOL_CONNECTIONS.labels(name, "open").set(stats.get("pool_size", 0))
    POOL_CONNECTIONS.labels(name, "idle").set(stats.get("pool_available", 0))
    POOL_CONNECTIONS.labels(name, "max").set(stats.get("pool_max", 0))
    POOL_WAITING.labels(name).set(stats.get("requests_waiting", 0))
    POOL_WAITS.labels(name).inc(stats.get("requests_queued", 0))
    POOL_WAIT_SECONDS.labels(name).inc(stats.get("requests_wait_ms", 0) / 1000)
    POOL_TIMEOUTS.labels(name).inc(stats.get("requests_errors", 0))


def record_host_call(method: str, outcome: str, seconds: float) -> None:
    HOST_CALLS.labels(method, outcome).inc()
    HOST_DURATION.labels(outcome).observe(seconds)


def registry():
    """What /metrics exposes of the processes: every process's values in
    multiprocess mode, else this process's."""
    if os.environ.get(MULTIPROCESS_DIR):
        collected = CollectorRegistry()
        multiprocess.MultiProcessCollector(collected)
        return collected
    return REGISTRY


def process_exited(pid: int) -> None:
    """Drop a finished process's live gauges (the pools it no longer holds)."""
    if os.environ.get(MULTIPROCESS_DIR):
        multiprocess.mark_process_dead(pid)

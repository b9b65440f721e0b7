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

The request metrics are counted in memory (app/web/request_metrics.py) and
published into those metrics on demand: a scrape publishes its own process's
counts and asks every other process serving the API to publish theirs (one
datagram each to the Unix socket it listens on in the multiprocess folder,
answered once written), then reads the files. Each process also publishes
once a second and when it exits, so a process that dies loses at most a
second of counts, and a scrape never waits for a process that does not
answer for more than PUBLISH_WAIT_SECONDS.
"""
from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Callable

from prometheus_client import REGISTRY, CollectorRegistry, Counter, Gauge, Histogram, multiprocess

from app.jsonlog import log

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


_publishers: list[Callable[[], None]] = []
#: Between two publications of a process that nobody scrapes: what a process
#: that dies unannounced may lose.
PUBLISH_SECONDS = 1.0
#: The longest a scrape waits for the other processes to publish.
PUBLISH_WAIT_SECONDS = 0.5
_listening_pid: int | None = None
_listening_lock = threading.Lock()


def add_publisher(publish: Callable[[], None]) -> None:
    """`publish` writes counts this process keeps in memory into the metrics."""
    _publishers.append(publish)


def publish_here() -> None:
    for publish in _publishers:
        publish()


def _publish_socket(folder: str, pid: int) -> str:
    return os.path.join(folder, f"publish_{pid}.sock")


def serve_publish_requests() -> None:
    """In multiprocess mode, publish this process's counts when another
    process's scrape asks, and once a second; once per process (after a fork too)."""
    global _listening_pid
    folder = os.environ.get(MULTIPROCESS_DIR)
    if not folder or _listening_pid == os.getpid():
        return
    with _listening_lock:
        if _listening_pid == os.getpid():
            return
        _listening_pid = os.getpid()
        path = _publish_socket(folder, _listening_pid)
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        try:
            if os.path.exists(path):   # an earlier process with this pid
                os.unlink(path)
            listener.bind(path)
        except OSError:   # e.g. a folder path too long for a socket: publish on the clock alone
            listener.close()
            listener = None
        threading.Thread(target=_publish_on_request, args=(listener,), name="metrics-publish", daemon=True).start()


def _publish_on_request(listener: socket.socket | None) -> None:
    if listener is not None:
        listener.settimeout(PUBLISH_SECONDS)
    while True:
        asker = None
        try:
            if listener is None:
                time.sleep(PUBLISH_SECONDS)
            else:
                _, asker = listener.recvfrom(16)
        except TimeoutError:
            pass
        try:
            publish_here()
        except Exception as exc:   # a publication that failed is retried by the next; the thread must live on
            log("metrics.publish_failed", level="warning", errorClass=type(exc).__name__)
        finally:
            if asker:
                try:
                    listener.sendto(b"1", asker)
                except OSError:   # the asker gave up waiting
                    pass


def publish_everywhere() -> None:
    """Before a scrape: this process's counts, and every other live process's."""
    publish_here()
    folder = os.environ.get(MULTIPROCESS_DIR)
    if not folder:
        return
    own = os.path.basename(_publish_socket(folder, os.getpid()))
    peers = [name for name in os.listdir(folder) if name.startswith("publish_") and name.endswith(".sock")
             and name != own]
    if not peers:
        return
    reply_path = os.path.join(folder, f"scrape_{os.getpid()}_{threading.get_ident()}.sock")
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as asker:
        try:
            asker.bind(reply_path)
        except OSError:
            return
        try:
            asker.settimeout(PUBLISH_WAIT_SECONDS)
            waiting = 0
            for name in peers:
                try:
                    asker.sendto(b"1", os.path.join(folder, name))
                    waiting += 1
                except OSError:   # a process that is gone (its counts were published when it exited)
                    pass
            deadline = time.monotonic() + PUBLISH_WAIT_SECONDS
            while waiting and (remaining := deadline - time.monotonic()) > 0:
                asker.settimeout(remaining)
                try:
                    asker.recv(16)
                except TimeoutError:
                    break
                waiting -= 1
        finally:
            os.unlink(reply_path)


def registry():
    """What /metrics exposes of the processes, the counts kept in memory
    published first: every process's values in multiprocess mode, else this
    process's."""
    publish_everywhere()
    if os.environ.get(MULTIPROCESS_DIR):
        collected = CollectorRegistry()
        multiprocess.MultiProcessCollector(collected)
        return collected
    return REGISTRY


def process_exited(pid: int) -> None:
    """A serving process ends (called in it): its last counts published, its
    live gauges (the pools it no longer holds) and its socket dropped."""
    publish_here()
    folder = os.environ.get(MULTIPROCESS_DIR)
    if folder:
        multiprocess.mark_process_dead(pid)
        try:
            os.unlink(_publish_socket(folder, pid))
        except FileNotFoundError:
            pass

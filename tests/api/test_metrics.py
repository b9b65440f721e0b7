"""GET /metrics exposes the processes' own counters after real requests:
requests by route and status with their latency, the pool, the queues by kind
and the code host calls by outcome; under gunicorn with two workers, one
scrape adds up every worker's requests (prometheus-client's multiprocess mode):
each counts in memory and publishes when a scrape in any of them asks."""
from __future__ import annotations

import os
import socket
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from types import SimpleNamespace

import httpx
import pytest
from falcon import testing
from prometheus_client import generate_latest
from prometheus_client.parser import text_string_to_metric_families

from app import config as config_module
from app import telemetry
from app.host import client as host_client
from app.host.errors import HostError
from app.serve import Service
from app.web.request_metrics import TALLIES, RequestMetrics
from app.web.wsgi import create_app
from tests.helpers.access import OPERATOR_ENV, OPERATOR_TOKEN, bearer
from tests.helpers.service import free_port, make_config
from tests.helpers.host import make_hostkit

AUTH = bearer(OPERATOR_TOKEN)


def samples(text: str) -> dict:
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(text) for s in family.samples}


def requests_of(values: dict, route: str, status: str, method: str = "GET") -> float:
    return values.get(("boardready_http_requests_total",
                       (("method", method), ("route", route), ("status", status))), 0.0)


def scrape(client) -> dict:
    answer = client.simulate_get("/metrics", headers=AUTH)
    assert answer.status_code == 200
    return samples(answer.text)


def test_requests_pool_and_queues_show_after_real_requests(pool, owner):
    client = testing.TestClient(create_app(make_config(**OPERATOR_ENV), pool))
    before = scrape(client)
    for _ in range(3):
        assert client.simulate_get("/api/health/live").status_code == 200
    assert client.simulate_get("/api/v1/runs/12").status_code == 401
    assert client.simulate_get("/nowhere/at/all").status_code == 404
    after = scrape(client)
    assert requests_of(after, "/api/health/live", "200") - requests_of(before, "/api/health/live", "200") == 3
    assert requests_of(after, "/api/v1/runs/{run_id}", "401") - requests_of(before, "/api/v1/runs/{run_id}", "401") == 1
    assert requests_of(after, "unmatched", "404") - requests_of(before, "unmatched", "404") == 1
    count = ("boardready_http_request_duration_seconds_count", (("method", "GET"), ("route", "/api/health/live")))
    assert after[count] - before.get(count, 0) == 3
    assert ("boardready_http_request_duration_seconds_bucket",
            (("le", "0.005"), ("method", "GET"), ("route", "/api/health/live"))) in after
    # The pool the requests used, and its waits (none here, but counted).
    assert after[("boardready_db_pool_connections", (("pool", "api"), ("state", "max")))] == pool.max_size
    assert after[("boardready_db_pool_connections", (("pool", "api"), ("state", "open")))] >= 1
    assert ("boardready_db_pool_waits_total", (("pool", "api"),)) in after
    assert ("boardready_db_pool_wait_seconds_total", (("pool", "api"),)) in after
    # A queue's depth and oldest age by kind, from the database.
    owner.execute("INSERT INTO webhook_inbox (id, provider, delivery_id, idempotency_key, event, action, "
                  "installation_id, actions, payload_sha256, payload_bytes, state, received_at, updated_at) "
                  "VALUES (990001, 'host', 'm1', 'host:m1', 'installation', 'created', NULL, '{}', 'x', 2, "
                  "'accepted', now(), now())")
    owner.execute("INSERT INTO lifecycle_jobs (inbox_id, idempotency_key, kind, action, status, run_after, "
                  "created_at, updated_at) VALUES (990001, 'host:m1', 'installation', 'created', 'accepted', "
                  "now(), now() - interval '90 seconds', now())")
    queues = scrape(client)
    assert queues[("boardready_queue_depth", (("kind", "installation"), ("queue", "lifecycle")))] == 1
    assert queues[("boardready_queue_oldest_age_seconds", (("kind", "installation"), ("queue", "lifecycle")))] >= 90
    # The SLI gauges are still there beside them.
    assert ("boardready_stale_attempts", ()) in queues


def test_code_host_calls_are_counted_by_outcome(pool, host):
    kit = make_hostkit(host)
    client = testing.TestClient(create_app(make_config(**OPERATOR_ENV), pool))
    ok, not_found = (("method", "GET"), ("outcome", "ok")), (("method", "GET"), ("outcome", "host_not_found"))
    before = scrape(client)
    calls = host_client.from_config(kit.config)
    repository = kit.repository["full_name"]
    head = host.open_pull_request(repository)["head"]["sha"]
    check = calls.create_check_run(kit.installation["id"], repository, head, "metrics-1", "boardready")
    assert calls.get_check_run(kit.installation["id"], repository, check["id"])["id"] == check["id"]
    with pytest.raises(HostError):
        calls.get_check_run(kit.installation["id"], repository, 999_999_999)
    after = scrape(client)
    posted = (("method", "POST"), ("outcome", "ok"))   # the installation token and the check run
    assert after[("boardready_host_requests_total", posted)] \
        - before.get(("boardready_host_requests_total", posted), 0) == 2
    assert after[("boardready_host_requests_total", ok)] - before.get(("boardready_host_requests_total", ok), 0) == 1
    assert after[("boardready_host_requests_total", not_found)] \
        - before.get(("boardready_host_requests_total", not_found), 0) == 1
    assert ("boardready_host_request_duration_seconds_count", (("outcome", "ok"),)) in after


LIVE_COUNT = ("boardready_http_request_duration_seconds_count", (("method", "GET"), ("route", "/api/health/live")))


def test_under_gunicorn_one_scrape_counts_every_worker(db_url):
    env = {"SERVICE_BIND": f"127.0.0.1:{free_port()}", "SERVICE_WEB_CONCURRENCY": "2", "SERVICE_WEB_THREADS": "2",
           **OPERATOR_ENV}
    service = Service(config_module.load(env), db_url, with_workers=False, extra_env=env).start()
    try:
        first = samples(httpx.get(f"{service.base_url}/metrics", headers=AUTH).text)
        started = requests_of(first, "/api/health/live", "200")   # bin/serve's own wait for the API to be live
        timed = first.get(LIVE_COUNT, 0)
        # New connections, eight at a time, so that both workers take some.
        with ThreadPoolExecutor(8) as senders:
            answers = list(senders.map(lambda _: httpx.get(f"{service.base_url}/api/health/live",
                                                           headers={"Connection": "close"}).status_code, range(40)))
        assert answers == [200] * 40
        scrapes = [samples(httpx.get(f"{service.base_url}/metrics", headers={**AUTH, "Connection": "close"}).text)
                   for _ in range(4)]
        # Each worker counted in its own file (prometheus-client's multiprocess mode).
        counted_by = {name.rsplit("_", 1)[1] for name in os.listdir(service.metrics_dir) if name.startswith("counter_")}
        assert len(counted_by) == 2
    finally:
        service.stop()
    for values in scrapes:   # whichever worker answered, it counted all 40
        assert requests_of(values, "/api/health/live", "200") == started + 40
        assert values[LIVE_COUNT] == timed + 40
        assert values[("boardready_db_pool_connections", (("pool", "api"), ("state", "max")))] >= 2


def test_counts_of_many_threads_add_up_while_they_are_published():
    """Each thread counts in its own tally; publications taken while they count
    lose nothing and count nothing twice (the counter, the histogram's count
    and its sum)."""
    route = f"/tallies/{uuid.uuid4().hex}"
    middleware = RequestMetrics(None)
    threads, per_thread = 8, 2000
    counting = threading.Event()

    def count():
        for _ in range(per_thread):
            req = SimpleNamespace(method="POST", uri_template=route,
                                  context=SimpleNamespace(metrics_started=time.perf_counter() - 0.02))
            middleware.process_response(req, SimpleNamespace(status=202, status_code=202), None, True)

    def publish():
        while counting.is_set():
            TALLIES.publish()

    counting.set()
    publisher = threading.Thread(target=publish)
    publisher.start()
    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(lambda _: count(), range(threads)))
    counting.clear()
    publisher.join()
    TALLIES.publish()
    values = samples(generate_latest(telemetry.registry()).decode())
    assert requests_of(values, route, "202", "POST") == threads * per_thread
    histogram = (("method", "POST"), ("route", route))
    assert values[("boardready_http_request_duration_seconds_count", histogram)] == threads * per_thread
    # Each took 20 ms or a little more: all in the (0.01, 0.025] bucket, when the machine keeps up.
    assert values[("boardready_http_request_duration_seconds_bucket", (("le", "0.01"),) + histogram)] == 0
    assert values[("boardready_http_request_duration_seconds_sum", histogram)] >= 0.02 * threads * per_thread


def test_a_scrape_waits_at_most_half_a_second_for_a_process_that_does_not_answer(tmp_path, monkeypatch):
    """A process that is stopped (its socket bound, nobody reading) or gone
    (its socket file left behind) costs a scrape PUBLISH_WAIT_SECONDS at most."""
    monkeypatch.setenv(telemetry.MULTIPROCESS_DIR, str(tmp_path))
    stopped = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    stopped.bind(str(tmp_path / "publish_999998.sock"))
    gone = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    gone.bind(str(tmp_path / "publish_999999.sock"))
    gone.close()   # the file stays, nobody is bound to it
    try:
        started = time.monotonic()
        telemetry.publish_everywhere()
        waited = time.monotonic() - started
    finally:
        stopped.close()
    assert telemetry.PUBLISH_WAIT_SECONDS <= waited < telemetry.PUBLISH_WAIT_SECONDS + 0.4
    assert not [path for path in tmp_path.iterdir() if path.name.startswith("scrape_")]   # its reply socket removed

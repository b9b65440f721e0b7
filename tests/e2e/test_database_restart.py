"""PostgreSQL restarts under a steady stream of signed deliveries.

The code host does not redeliver on its own, so a 503 after the database is
back is an event lost until a person notices. The service runs for real
(gunicorn with two web processes and the worker process) on a disposable
cluster of the same PostgreSQL version as the suite's server, which the test
restarts twice (cleanly, then as a crash) while senders keep delivering. From the first request sent
after the database accepts connections again, every delivery must be
accepted; only requests in flight during the restart may answer 503; every
accepted delivery has exactly one inbox row and one job; the worker resumes
and completes them all, those whose last job transaction the crash lost
included.
"""
from __future__ import annotations

import json
import threading
import time
import uuid
from dataclasses import dataclass

import httpx
import psycopg
import pytest

from app import config as config_module
from app import migrations
from app.serve import Service
from tests.helpers.paths import webhook_fixture
from tests.helpers.service import (MARKETPLACE_SECRET, WEBHOOK_SECRET, free_port, generated_app_private_key,
                                   wait_for, webhook_headers)
from tools.disposable_pg import DisposableCluster, bindir_for, server_major

SENDERS = 4
#: A clean restart (every session told and closed), then a crash (sessions cut without a word).
RESTART_MODES = ("fast", "immediate")
DOWN_SECONDS = 1.5
AFTER_RESTART = 40  # deliveries each restart must be followed by
ACKNOWLEDGED = (202, 200)


@dataclass
class Sent:
    delivery_id: str
    started: float
    finished: float
    status: int | None  # None: no HTTP answer (connection error)


@pytest.fixture
def cluster(pg_server):
    major = server_major(pg_server.url("postgres"))
    bindir = bindir_for(major)
    if bindir is None:
        pytest.skip(f"no PostgreSQL {major} binaries on this machine to start a disposable cluster")
    with DisposableCluster(bindir) as cluster:
        yield cluster


def test_deliveries_survive_database_restarts(cluster):
    url = cluster.create_database("boardready")
    migrations.migrate(url)
    env = {"HOST_WEBHOOK_SECRET": WEBHOOK_SECRET, "HOST_MARKETPLACE_WEBHOOK_SECRET": MARKETPLACE_SECRET,
           "HOST_APP_ID": "4242", "HOST_APP_PRIVATE_KEY": generated_app_private_key(),
           "HOST_API_URL": "http://127.0.0.1:9", "SERVICE_OIDC_AUDIENCE": "boardready-test",
           "SERVICE_BIND": f"127.0.0.1:{free_port()}", "SERVICE_WEB_CONCURRENCY": "2",
           "SERVICE_WEB_THREADS": "8", "SERVICE_WORKER_POLL_MS": "500",
           # A crash can lose a job's last transaction (it commits without
           # waiting for the flush: lifecycle.sql); its job is claimed again
           # when its lease runs out, well within the wait below.
           "SERVICE_JOB_LEASE_SECONDS": "10"}
    service = Service(config_module.load(env), url, extra_env=env).start()
    payload = json.loads(webhook_fixture("pull_request.opened.12.json"))
    body = json.dumps(payload).encode()
    sent: list[Sent] = []
    sent_lock = threading.Lock()
    stop = threading.Event()

    def sender():
        with httpx.Client(base_url=service.base_url, timeout=15) as http:
            while not stop.is_set():
                delivery_id = f"restart-{uuid.uuid4()}"
                started = time.monotonic()
                try:
                    status = http.post("/api/host/webhook", content=body,
                                       headers=webhook_headers(body, "pull_request", delivery_id)).status_code
                except httpx.HTTPError:
                    status = None
                with sent_lock:
                    sent.append(Sent(delivery_id, started, time.monotonic(), status))
                time.sleep(0.01)

    def sent_since(moment: float) -> int:
        with sent_lock:
            return sum(1 for s in sent if s.started >= moment and s.status is not None)

    threads = [threading.Thread(target=sender, daemon=True) for _ in range(SENDERS)]
    back_at: list[float] = []
    try:
        for t in threads:
            t.start()
        wait_for(lambda: sent_since(0) >= 40, seconds=60)
        for mode in RESTART_MODES:
            cluster.restart(down_seconds=DOWN_SECONDS, mode=mode)
            # The database accepts connections again from here on.
            with psycopg.connect(url, connect_timeout=5):
                back_at.append(time.monotonic())
            wait_for(lambda: sent_since(back_at[-1]) >= AFTER_RESTART, seconds=90)
    finally:
        stop.set()
        for t in threads:
            t.join(timeout=30)

    try:
        first_back = back_at[0]
        after = [s for s in sent if any(s.started >= b for b in back_at)
                 and not any(s.started < b <= s.finished for b in back_at)]
        # 200 is an acknowledgement too: the retry of a batch whose commit
        # the lost connection hid finds its deliveries stored (`duplicate`).
        refused_after = [s for s in after if s.status not in ACKNOWLEDGED]
        refused = [s for s in sent if s.status not in ACKNOWLEDGED]
        accepted = {s.delivery_id for s in sent if s.status in ACKNOWLEDGED}
        print(f"\n{len(sent)} deliveries over {len(RESTART_MODES)} restarts: {len(accepted)} accepted, "
              f"{len(refused)} refused while the database was restarting, "
              f"{len(refused_after)} refused after it was back")
        assert not refused_after, [(s.status, round(s.started - first_back, 2)) for s in refused_after[:10]]
        assert all(s.status in (*ACKNOWLEDGED, 503, None) for s in sent), {s.status for s in sent}

        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("SET search_path = boardready")

            def stored() -> dict[str, tuple[int, int]]:
                rows = conn.execute(
                    "SELECT i.idempotency_key, count(DISTINCT i.id), count(j.id) FROM webhook_inbox i"
                    " LEFT JOIN lifecycle_jobs j ON j.inbox_id = i.id GROUP BY i.idempotency_key").fetchall()
                return {key.split(":", 1)[1]: (inboxes, jobs) for key, inboxes, jobs in rows}

            def unfinished() -> int:
                """Jobs not completed, and deliveries whose job the workers have not made yet."""
                return conn.execute("SELECT (SELECT count(*) FROM lifecycle_jobs WHERE status <> 'completed')"
                                    " + (SELECT count(*) FROM webhook_inbox WHERE awaiting_job)").fetchone()[0]

            # The workers resume: every stored delivery gets its job and the job completes.
            wait_for(lambda: unfinished() == 0, seconds=60, on_timeout=lambda: f"{unfinished()} jobs left")
            rows = stored()
            assert accepted <= set(rows), f"{len(accepted - set(rows))} accepted deliveries were lost"
            assert all(counts == (1, 1) for counts in rows.values()), "a delivery was stored or queued twice"
            # Deliveries answered 503 were not acknowledged; whatever of them was stored is complete too.
            assert set(rows) <= {s.delivery_id for s in sent}
    finally:
        service.stop()

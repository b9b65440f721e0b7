"""The service as it runs in production: gunicorn (gthread) and the worker
process, over real HTTP, on a fresh database."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time

import httpx
import pytest

from app import config as config_module
from app.serve import Service
from tests.helpers.paths import webhook_fixture
from tests.helpers.service import (MARKETPLACE_SECRET, WEBHOOK_SECRET, free_port, generated_app_private_key,
                                  post_webhook, wait_for, webhook_headers)
from workers.lifecycle import LifecycleQueue
from workers.queue_worker import QueueWorker


@pytest.fixture
def served(db_url):
    env = {"HOST_WEBHOOK_SECRET": WEBHOOK_SECRET, "HOST_MARKETPLACE_WEBHOOK_SECRET": MARKETPLACE_SECRET,
           "HOST_APP_ID": "4242", "HOST_APP_PRIVATE_KEY": generated_app_private_key(), "HOST_API_URL": "http://127.0.0.1:9", "SERVICE_OIDC_AUDIENCE": "boardready-test",
           "SERVICE_BIND": f"127.0.0.1:{free_port()}", "SERVICE_WEB_CONCURRENCY": "1",
           "SERVICE_WEB_THREADS": "4", "SERVICE_WORKER_POLL_MS": "200"}
    config = config_module.load(env)
    service = Service(config, db_url, extra_env=env).start()
    yield service
    service.stop()


def test_delivery_flows_to_processed_through_the_real_server(served, owner):
    body = webhook_fixture("pull_request.opened.12.json")
    response = httpx.post(f"{served.base_url}/api/host/webhook", content=body,
                          headers=webhook_headers(body, "pull_request", delivery_id="served-1"))
    assert response.status_code == 202
    state = wait_for(lambda: owner.execute("SELECT state FROM ops.inbox").fetchone()["state"] == "processed")
    assert state
    assert owner.execute("SELECT count(*) AS n FROM ops.release_runs").fetchone()["n"] == 1
    ready = httpx.get(f"{served.base_url}/api/health/ready")
    assert ready.status_code == 200 and ready.json()["ok"] is True


def test_chunked_body_above_2_mb_is_cut_off_while_reading(served, owner):
    sent = {"bytes": 0}

    def chunks():
        piece = b"{" + b" " * 65535
        for _ in range(64):  # 4 MiB if the server kept reading
            sent["bytes"] += len(piece)
            yield piece

    headers = webhook_headers(b"{}", "installation", delivery_id="chunked")  # the signature never gets checked
    response = httpx.post(f"{served.base_url}/api/host/webhook", content=chunks(), headers=headers)
    assert response.status_code == 413
    assert response.json()["code"] == "payload_too_large"
    assert owner.execute("SELECT count(*) AS n FROM boardready.webhook_inbox").fetchone()["n"] == 0


def completed_jobs(owner) -> int:
    return owner.execute("SELECT count(*) AS n FROM boardready.lifecycle_jobs WHERE status = 'completed'").fetchone()["n"]


def test_worker_wakes_on_notify_without_polling(client, owner, pool, config, db_url):
    # A poll interval of ten minutes: only the NOTIFY can wake the loop in time.
    worker = QueueWorker(LifecycleQueue(config), pool, db_url, concurrency=2, poll_ms=600_000)
    thread = threading.Thread(target=worker.run)
    thread.start()
    try:
        time.sleep(0.3)  # let the listener subscribe; the poll after LISTEN finds nothing
        post_webhook(client, webhook_fixture("installation.created.1.json"), "installation", delivery_id="n-1")
        wait_for(lambda: completed_jobs(owner) == 1)
    finally:
        worker.stop.set()
        worker.wake.set()
        thread.join(timeout=10)
    assert not thread.is_alive()


def test_worker_process_stops_cleanly_on_sigterm(db_url, client, owner):
    env = dict(os.environ, SERVICE_DATABASE_URL=db_url, HOST_WEBHOOK_SECRET=WEBHOOK_SECRET,
               HOST_MARKETPLACE_WEBHOOK_SECRET=MARKETPLACE_SECRET, SERVICE_WORKER_POLL_MS="100")
    process = subprocess.Popen([sys.executable, "-m", "workers"], env=env, stderr=subprocess.PIPE, text=True)
    try:
        post_webhook(client, webhook_fixture("installation.created.1.json"), "installation", delivery_id="t-1")
        wait_for(lambda: completed_jobs(owner) == 1)
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=20) == 0
    finally:
        if process.poll() is None:
            process.kill()
    logs = process.stderr.read()
    assert '"event":"worker.stopped"' in logs
    assert WEBHOOK_SECRET not in logs and "Codertocat" not in logs  # no secrets, no payload content


def test_chunked_body_under_the_limit_is_read_whole(served, owner):
    body = webhook_fixture("installation.created.1.json")

    def chunks():
        for i in range(0, len(body), 1000):
            yield body[i:i + 1000]

    response = httpx.post(f"{served.base_url}/api/host/webhook", content=chunks(),
                          headers=webhook_headers(body, "installation", delivery_id="chunked-ok"))
    assert response.status_code == 202
    assert owner.execute("SELECT payload_bytes FROM boardready.webhook_inbox").fetchone()["payload_bytes"] == len(body)

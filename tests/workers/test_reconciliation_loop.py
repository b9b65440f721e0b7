"""Reconciliation in the one worker loop: detection scheduled and items
claimed at small intervals until stopped, the failure events, heartbeats that
tell a failed pass from a good one, and the worker process wiring."""
from __future__ import annotations

import threading

import psycopg

from tests.helpers.paths import webhook_fixture
from tests.helpers.service import make_config, make_lifecycle_jobs, post_webhook, wait_for
from tests.helpers.reconciliation import events
from workers.reconcile import Reconciliation
from workers.reconcile_lifecycle import LifecycleReconciler
from workers.queue_worker import QueueWorker
from workers.registry import build_workers
from tests.helpers.drivers import run_once

FAST = {"SERVICE_RECONCILIATION_OBSERVATION_SECONDS": "1", "SERVICE_RECONCILIATION_DEADLINE_SECONDS": "5",
        "SERVICE_RECONCILIATION_DETECT_INTERVAL_MS": "100", "SERVICE_RECONCILIATION_POLL_MS": "100",
        "SERVICE_RECONCILIATION_NEXT_CHECK_SECONDS": "1"}


def heartbeat(owner, name):
    return owner.execute("SELECT * FROM reconciler_heartbeats WHERE reconciler = %s", (name,)).fetchone()


def test_the_loop_repairs_drift_on_its_own_until_stopped(client, owner, db_url):
    config = make_config(**FAST)
    body = webhook_fixture("installation.created.1.json")
    assert post_webhook(client, body, "installation", delivery_id="d-loop").status_code == 202
    owner.execute("INSERT INTO installations (id, status) VALUES (957387, 'active')")
    make_lifecycle_jobs(owner)
    owner.execute("DELETE FROM lifecycle_jobs")  # a lost job: the inbox row no longer awaits one
    stop = threading.Event()
    workers = [w for w in build_workers(config, db_url, stop) if w.queue.name in ("reconcile", "schedules")]
    threads = [threading.Thread(target=w.run) for w in workers]
    for thread in threads:
        thread.start()
    try:
        wait_for(lambda: owner.execute("SELECT count(*) AS n FROM lifecycle_jobs").fetchone()["n"] == 1, 20)
    finally:
        stop.set()
        for thread in threads:
            thread.join(10)
        workers[0].pool.close()
    assert not any(thread.is_alive() for thread in threads)
    beat = heartbeat(owner, "lifecycle")
    assert beat["last_poll_at"] is not None and beat["last_success_at"] is not None


class Broken:
    name = "lifecycle"
    event_prefix = "worker.lifecycle_reconciliation"

    def detect(self, conn, settings, now):
        raise psycopg.OperationalError("the database went away")

    def claim(self, conn, worker_id, limit, now):
        raise psycopg.errors.QueryCanceled("statement timeout")


def test_failed_passes_are_logged_and_not_counted_as_success(pool, owner, capsys):
    loop = Reconciliation(Broken(), pool, make_config().reconciliation)
    assert run_once(loop) == []
    capsys.readouterr()
    assert loop.claim(2) is None
    [claim] = events(capsys, "worker.lifecycle_reconciliation_claim_failed")
    assert claim["errorClass"] == "QueryCanceled" and "message" not in claim
    beat = heartbeat(owner, "lifecycle")
    assert beat["last_poll_at"] is not None and beat["last_success_at"] is None


def test_detection_failure_event(pool, capsys):
    Reconciliation(Broken(), pool, make_config().reconciliation).detect()
    [event] = events(capsys, "worker.lifecycle_reconciliation_detection_failed")
    assert (event["errorClass"], event["level"]) == ("OperationalError", "warning")
    assert "went away" not in str(event)


def test_the_worker_process_runs_every_queue_in_the_one_loop(db_url):
    stop = threading.Event()
    workers = build_workers(make_config(), db_url, stop)
    assert all(type(w) is QueueWorker for w in workers)
    assert {"lifecycle", "reconcile", "schedules"} <= {w.queue.name for w in workers}
    [schedules] = [w.queue for w in workers if w.queue.name == "schedules"]
    assert set(schedules.handlers) == {"reconciliation_detect", "retention_sweep", "slo_evaluate", "board_refresh"}
    workers[0].pool.close()

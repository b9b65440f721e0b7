"""Intake first (workers/intake_first.py): the lifecycle jobs of a burst of
deliveries wait for it to end, or for SERVICE_INTAKE_FIRST_MS; a lone
delivery's job does not wait. The integration tests run a real worker loop
whose listener hears the intake's own wake-ups (app/wakeup.py)."""
from __future__ import annotations

import threading
import time

import psycopg
import pytest
from psycopg.rows import dict_row
from psycopg.types.json import Jsonb

from app import sql_api
from tests.helpers.paths import webhook_fixture
from tests.helpers.service import make_config, post_webhook, wait_for
from workers.intake_first import IntakeBursts
from workers.lifecycle import LifecycleQueue
from workers.queue_worker import QueueWorker


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def wakeups(bursts: IntakeBursts, clock: Clock, count: int, every: float) -> list[float]:
    """`count` wake-ups `every` seconds apart; the hold after each."""
    holds = []
    for _ in range(count):
        bursts.arrived()
        holds.append(bursts.hold_seconds())
        clock.now += every
    return holds


def test_a_lone_wakeup_is_not_a_burst():
    clock = Clock()
    bursts = IntakeBursts(5.0, clock)
    assert bursts.hold_seconds() == 0
    assert wakeups(bursts, clock, 1, 0) == [0]


def test_a_burst_holds_until_the_wakeups_stop():
    clock = Clock()
    bursts = IntakeBursts(5.0, clock)
    wakeups(bursts, clock, 3, 0.05)
    assert bursts.hold_seconds() == pytest.approx(IntakeBursts.QUIET_SECONDS - 0.05)
    clock.now += IntakeBursts.QUIET_SECONDS
    assert bursts.hold_seconds() == 0
    assert wakeups(bursts, clock, 1, 0) == [0]  # the first wake-up after a quiet spell starts a new count


def test_a_burst_without_end_is_waited_for_at_most_the_limit():
    clock = Clock()
    holds = wakeups(IntakeBursts(1.0, clock), clock, 32, 0.0625)  # two seconds, one every 1/16 s
    assert all(h > 0 for h in holds[1:16]) and all(h == 0 for h in holds[16:])


def test_a_limit_of_zero_never_holds():
    clock = Clock()
    assert wakeups(IntakeBursts(0, clock), clock, 5, 0.01) == [0] * 5


def deliver(client, delivery_id: str) -> None:
    result = post_webhook(client, webhook_fixture("installation.created.1.json"), "installation",
                          delivery_id=delivery_id)
    assert result.status_code == 202, result.json


def job_status(owner, delivery_id: str):
    row = owner.execute("SELECT j.status FROM webhook_inbox i LEFT JOIN lifecycle_jobs j ON j.inbox_id = i.id "
                        "WHERE i.delivery_id = %s", (delivery_id,)).fetchone()
    return row and row["status"]


def running(queue, pool, db_url):
    # No polling: the loop wakes on the intake's NOTIFYs only, which reach the
    # queue (`notified`) before they wake the loop.
    worker = QueueWorker(queue, pool, db_url, concurrency=1, poll_ms=600_000)
    thread = threading.Thread(target=worker.run)
    thread.start()
    return worker, thread


def stop(worker, thread):
    worker.stop.set()
    worker.wake.set()
    thread.join(timeout=10)


def test_the_jobs_of_a_burst_wait_for_it_to_end(client, owner, pool, db_url):
    queue = LifecycleQueue(make_config(SERVICE_INTAKE_FIRST_MS="60000"))
    queue.bursts.QUIET_SECONDS = 30  # the burst goes on until the test ends it
    worker, thread = running(queue, pool, db_url)
    try:
        deliver(client, "first")
        wait_for(lambda: job_status(owner, "first") == "completed")  # a lone delivery's job is not held
        wait_for(lambda: worker.processed == 1)
        time.sleep(0.2)  # the loop's claim after the item finished found nothing: it waits for a NOTIFY
        deliver(client, "second")
        wait_for(lambda: queue.claim_hold_seconds() > 0)  # the intake's second wake-up reached the listener
        worker.wake.set()  # as a poll would
        time.sleep(0.5)
        assert job_status(owner, "second") is None  # not even made into a job: no claim ran
        queue.bursts.QUIET_SECONDS = 0.2  # the burst ends
        worker.wake.set()
        wait_for(lambda: job_status(owner, "second") == "completed")
    finally:
        stop(worker, thread)


def test_the_jobs_of_a_burst_run_after_the_limit_even_while_it_goes_on(client, owner, pool, db_url):
    queue = LifecycleQueue(make_config(SERVICE_INTAKE_FIRST_MS="1500"))
    queue.bursts.QUIET_SECONDS = 30
    worker, thread = running(queue, pool, db_url)
    try:
        deliver(client, "first")
        wait_for(lambda: job_status(owner, "first") == "completed")
        deliver(client, "second")
        wait_for(lambda: queue.claim_hold_seconds() > 0)
        wait_for(lambda: job_status(owner, "second") == "completed")  # 1.5 s after the burst's first wake-up
        assert queue.claim_hold_seconds() == 0 and queue.bursts.QUIET_SECONDS == 30  # the burst goes on
    finally:
        stop(worker, thread)


def test_the_job_transactions_do_not_wait_for_the_wal_flush_and_the_intake_does(client, db_url):
    """lifecycle.sql and jobs.sql say why a lost job transaction is run again;
    a stored delivery is what the code host was told, and stays durable."""
    deliver(client, "durable")
    with psycopg.connect(db_url, row_factory=dict_row) as conn:
        def commit_waits_for_flush() -> bool:
            return conn.execute("SHOW synchronous_commit").fetchone()["synchronous_commit"] == "on"

        sql_api.intake_accept_deliveries(conn, provider="github", delivery_ids=["durable-2"], events=["ping"],
                                         actions=[""], installation_ids=[1], normalized=[Jsonb({})],
                                         payload_sha256s=["0" * 64], payload_bytes=[2], acceptance_ms=[1])
        assert commit_waits_for_flush()
        conn.rollback()
        claimed = sql_api.job_claim(conn, worker="w", limit=1, lease_seconds=60, max_attempts=3)
        assert not commit_waits_for_flush()
        conn.commit()
        assert commit_waits_for_flush()  # this transaction's only
        sql_api.lifecycle_job_run(conn, job_id=claimed[0]["job_id"], lease_token=claimed[0]["lease_token"])
        assert not commit_waits_for_flush()
        conn.commit()

"""A live worker renews the leases of the items it holds: an item slower than
its lease is not claimed and run again by another worker meanwhile, and a
renewal never extends a lease that another worker has taken over."""
from __future__ import annotations

import threading
import time


from app import sql_api
from tests.helpers.paths import webhook_fixture
from tests.helpers.service import make_config, post_webhook, wait_for
from workers.lifecycle import LifecycleQueue
from workers.queue_worker import QueueWorker

LEASE_SECONDS = 1


def deliver(client, delivery_id: str) -> None:
    body = webhook_fixture("installation.created.1.json")
    assert post_webhook(client, body, "installation", delivery_id=delivery_id).status_code == 202


def claim(pool, worker: str) -> list[dict]:
    with pool.connection() as conn:
        return sql_api.job_claim(conn, worker=worker, limit=5, lease_seconds=LEASE_SECONDS, max_attempts=3)


def renew(pool, ids, tokens, renewal=sql_api.job_renew_leases) -> list[int]:
    with pool.connection() as conn:
        return renewal(conn, ids=ids, lease_tokens=tokens, lease_seconds=60)


def test_a_renewal_extends_only_the_lease_still_held(client, owner, pool):
    deliver(client, "held")
    [item] = claim(pool, "first")
    leased_until = owner.execute("SELECT leased_until FROM lifecycle_jobs").fetchone()["leased_until"]

    assert renew(pool, [item["job_id"]], [item["lease_token"]]) == [item["job_id"]]
    assert owner.execute("SELECT leased_until FROM lifecycle_jobs").fetchone()["leased_until"] > leased_until

    # Taken over once the lease ran out: the first worker's token extends nothing.
    owner.execute("UPDATE lifecycle_jobs SET leased_until = now() - interval '1 second'")
    [taken] = claim(pool, "second")
    assert taken["job_id"] == item["job_id"] and taken["lease_token"] != item["lease_token"]
    assert renew(pool, [item["job_id"]], [item["lease_token"]]) == []
    assert renew(pool, [taken["job_id"]], [taken["lease_token"]]) == [taken["job_id"]]


def test_a_job_lease_is_renewed_by_the_jobs_renewal_only(client, pool):
    deliver(client, "held")
    [item] = claim(pool, "first")
    # work_items holds no item with the job's token: its renewal extends nothing.
    assert renew(pool, [item["job_id"]], [item["lease_token"]], renewal=sql_api.work_renew_leases) == []
    assert renew(pool, [item["job_id"]], [item["lease_token"]]) == [item["job_id"]]


def test_an_item_slower_than_its_lease_runs_once_while_another_worker_polls(client, owner, pool, db_url):
    config = make_config(SERVICE_JOB_LEASE_SECONDS=str(LEASE_SECONDS))
    runs: list[str] = []
    started = threading.Event()

    class Slow(LifecycleQueue):
        def handle(self, pool, item):
            runs.append(self.name)
            started.set()
            time.sleep(LEASE_SECONDS * 3)  # three leases long: only renewal keeps it
            return super().handle(pool, item)

    deliver(client, "slow")
    first = QueueWorker(Slow(config), pool, db_url, concurrency=1, poll_ms=50)
    second = QueueWorker(Slow(config), pool, db_url, concurrency=1, poll_ms=50)
    threads = [threading.Thread(target=first.run)]
    threads[0].start()
    try:
        assert started.wait(10)
        threads.append(threading.Thread(target=second.run))
        threads[1].start()  # polls every 50 ms for as long as the first one runs
        wait_for(lambda: owner.execute("SELECT status FROM lifecycle_jobs").fetchone()["status"] == "completed")
    finally:
        for worker in (first, second):
            worker.stop.set()
            worker.wake.set()
        for thread in threads:
            thread.join(timeout=10)
    job = owner.execute("SELECT attempts, outcome FROM lifecycle_jobs").fetchone()
    assert (job["attempts"], len(runs)) == (1, 1), (job, runs)
    assert job["outcome"] == "installation_created"

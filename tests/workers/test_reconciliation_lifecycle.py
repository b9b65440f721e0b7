"""Inbox and job drift reconciliation on real payloads: a missing job is
recreated with the delivery's idempotency key and persisted actions, a
drifted inbox state is corrected from its job, terminal inboxes and
deliveries without a persisted installation are left alone, and concurrent
repairs create one job."""
from __future__ import annotations

import threading

from psycopg.types.json import Jsonb

from tests.helpers.paths import webhook_fixture
from tests.helpers.service import make_lifecycle_jobs, post_webhook
from tests.helpers.reconciliation import OBSERVATION, events, items, later, lifecycle_loop
from workers.lifecycle import LifecycleQueue
from workers.queue_worker import QueueWorker
from tests.helpers.drivers import run_once, run_until_idle


def deliver(client, name: str, delivery_id: str):
    result = post_webhook(client, webhook_fixture(name), name.split(".")[0], delivery_id=delivery_id)
    assert result.status_code == 202, result.json


def run_jobs(config, pool, db_url) -> int:
    return run_until_idle(QueueWorker(LifecycleQueue(config), pool, db_url, concurrency=1, poll_ms=50))


def installed(client, config, pool, db_url):
    """Installation 957387 persisted, as a real installation.created delivery leaves it."""
    deliver(client, "installation.created.1.json", "d-installed")
    assert run_jobs(config, pool, db_url) == 1


def lose_job(owner, delivery_id: str) -> dict:
    """The drift a lost write leaves: the inbox row without its job, and not awaiting one."""
    make_lifecycle_jobs(owner)
    inbox = owner.execute("SELECT * FROM webhook_inbox WHERE delivery_id = %s", (delivery_id,)).fetchone()
    assert not inbox["awaiting_job"]
    owner.execute("DELETE FROM lifecycle_jobs WHERE inbox_id = %s", (inbox["id"],))
    return inbox


def test_a_delivery_awaiting_its_job_past_the_window_gets_it_from_reconciliation(client, owner, pool, config,
                                                                                  db_url):
    """No worker claimed since the delivery (they were down): the inbox row is
    a non-terminal inbox without a job, and the repair makes it, once."""
    installed(client, config, pool, db_url)
    deliver(client, "installation_repositories.added.0.json", "d-waiting")
    loop = lifecycle_loop(config, pool)
    assert run_once(loop, later(OBSERVATION - 30)) == []

    [report] = run_once(loop, later(OBSERVATION + 1))
    assert report["outcome"] == "job_recreated"
    inbox = owner.execute("SELECT * FROM webhook_inbox WHERE delivery_id = 'd-waiting'").fetchone()
    assert (inbox["state"], inbox["awaiting_job"]) == ("accepted", False)
    assert make_lifecycle_jobs(owner) == 0
    assert owner.execute("SELECT count(*) AS n FROM lifecycle_jobs WHERE inbox_id = %s",
                         (inbox["id"],)).fetchone()["n"] == 1


def test_missing_job_is_recreated_with_its_key_and_actions(client, owner, pool, config, db_url, capsys):
    installed(client, config, pool, db_url)
    deliver(client, "installation_repositories.added.0.json", "d-added")
    inbox = lose_job(owner, "d-added")
    loop = lifecycle_loop(config, pool)

    # Inside the observation window nothing is detected.
    assert run_once(loop, later(OBSERVATION - 30)) == []
    assert items(owner) == []

    [report] = run_once(loop, later(OBSERVATION + 1))
    assert report["outcome"] == "job_recreated" and report["inbox_id"] == inbox["id"]
    job = owner.execute("SELECT * FROM lifecycle_jobs WHERE inbox_id = %s", (inbox["id"],)).fetchone()
    assert (job["idempotency_key"], job["kind"], job["action"], job["status"]) == \
        ("host:d-added", "installation_repositories", "added", "accepted")
    [item] = items(owner, "lifecycle_inbox")
    assert (item["reason_code"], item["status"], item["outcome"]) == \
        ("lifecycle_job_missing", "completed", "job_recreated")
    detected = events(capsys, "worker.lifecycle_reconciliation_detected")
    assert [(e["itemId"], e["subjectId"], e["reasonCode"]) for e in detected] == \
        [(item["id"], inbox["id"], "lifecycle_job_missing")]

    # The recreated job runs the persisted normalized actions (due at the driven
    # clock, which is ahead of the database's: due now instead).
    owner.execute("UPDATE lifecycle_jobs SET run_after = now() WHERE id = %s", (job["id"],))
    assert run_jobs(config, pool, db_url) == 1
    assert owner.execute("SELECT state FROM webhook_inbox WHERE id = %s", (inbox["id"],)).fetchone()["state"] \
        == "processed"
    assert owner.execute("SELECT count(*) AS n FROM repositories WHERE installation_id = 957387").fetchone()["n"] >= 2
    # Converged: a later pass finds nothing.
    assert run_once(loop, later(2 * OBSERVATION)) == []


def test_inbox_state_drift_is_corrected_from_the_job(client, owner, pool, config, db_url, capsys):
    installed(client, config, pool, db_url)
    inbox = owner.execute("SELECT * FROM webhook_inbox WHERE delivery_id = 'd-installed'").fetchone()
    # A state written behind the trigger's back: the job (completed) is authoritative.
    owner.execute("UPDATE webhook_inbox SET state = 'processing' WHERE id = %s", (inbox["id"],))

    [report] = run_once(lifecycle_loop(config, pool), later(OBSERVATION + 1))
    assert report["outcome"] == "inbox_state_corrected"
    assert owner.execute("SELECT state FROM webhook_inbox WHERE id = %s", (inbox["id"],)).fetchone()["state"] \
        == "processed"
    [item] = items(owner)
    assert (item["reason_code"], item["outcome"]) == ("lifecycle_inbox_state_drift", "inbox_state_corrected")
    [terminal] = events(capsys, "worker.lifecycle_reconciliation_terminal")
    assert (terminal["itemId"], terminal["outcome"], terminal["reasonCode"], terminal["inboxId"]) == \
        (item["id"], "inbox_state_corrected", "lifecycle_inbox_state_drift", inbox["id"])
    assert "actions" not in str(terminal)


def test_terminal_inboxes_and_unknown_installations_are_left_alone(client, owner, pool, config, db_url):
    installed(client, config, pool, db_url)
    # A ping is processed evidence without a job.
    result = post_webhook(client, webhook_fixture("ping.event.0.json"), "ping", delivery_id="d-ping")
    assert result.status_code in (200, 202)
    # A terminal inbox row whose job is gone is not recreated.
    deliver(client, "installation_repositories.added.1.json", "d-done")
    run_jobs(config, pool, db_url)
    lose_job(owner, "d-done")
    # A delivery for an installation the service never persisted.
    deliver(client, "installation_repositories.removed.2.json", "d-unknown")
    owner.execute("UPDATE webhook_inbox SET installation_id = 4242424242 WHERE delivery_id = 'd-unknown'")
    lose_job(owner, "d-unknown")

    assert run_once(lifecycle_loop(config, pool), later(OBSERVATION + 1)) == []
    assert items(owner) == []


def test_concurrent_repairs_create_one_job(client, owner, pool, config, db_url):
    installed(client, config, pool, db_url)
    deliver(client, "installation_repositories.added.0.json", "d-race")
    inbox = lose_job(owner, "d-race")
    at = later(OBSERVATION + 1)
    loops = [lifecycle_loop(config, pool) for _ in range(2)]
    start = threading.Barrier(2)

    def replica(loop):
        start.wait()
        run_once(loop, at)

    threads = [threading.Thread(target=replica, args=(loop,)) for loop in loops]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert owner.execute("SELECT count(*) AS n FROM lifecycle_jobs WHERE inbox_id = %s",
                         (inbox["id"],)).fetchone()["n"] == 1
    assert [(i["status"], i["outcome"]) for i in items(owner)] == [("completed", "job_recreated")]


def test_a_detection_that_read_its_candidates_before_a_repair_finished_opens_nothing(client, owner, pool, config,
                                                                                     db_url):
    """Detection reads its candidates in one snapshot and opens their items
    afterwards. Another replica may detect, claim and repair the same subject
    in between (in test_concurrent_repairs_create_one_job, 1 run of about 40):
    the subject it then opens is no longer drifted. An item of that subject
    completed at or after the detection's instant says so, and nothing opens."""
    installed(client, config, pool, db_url)
    deliver(client, "installation_repositories.added.0.json", "d-stale")
    inbox = lose_job(owner, "d-stale")
    at = later(OBSERVATION + 1)
    [report] = run_once(lifecycle_loop(config, pool), at)
    assert report["outcome"] == "job_recreated"

    stale = [{"subject": inbox["id"], "installation": inbox["installation_id"], "reason": "lifecycle_job_missing",
              "deadline": at.isoformat()}]
    opened = owner.execute("SELECT * FROM boardready_private.reconciliation_open_items('lifecycle_inbox', %s, %s)",
                           (Jsonb(stale), at)).fetchall()
    assert opened == []
    assert [(i["status"], i["outcome"]) for i in items(owner)] == [("completed", "job_recreated")]


def test_a_lost_lease_applies_nothing(client, owner, pool, config, db_url):
    from app import sql_api

    installed(client, config, pool, db_url)
    deliver(client, "installation_repositories.added.0.json", "d-lease")
    lose_job(owner, "d-lease")
    at = later(OBSERVATION + 1)
    lifecycle_loop(config, pool).detect(at)
    with pool.connection() as conn:
        [first] = sql_api.reconciliation_claim(conn, kind="lifecycle_inbox", worker="a", limit=1, lease_seconds=60,
                                               max_attempts=5, now=at)
        # A's lease expires; B takes the item over and repairs it.
        [second] = sql_api.reconciliation_claim(conn, kind="lifecycle_inbox", worker="b", limit=1, lease_seconds=60,
                                                max_attempts=5, now=later(120, at))
        assert second["item_id"] == first["item_id"]
        late = sql_api.reconciliation_report(conn, item_id=first["item_id"], lease_token=first["lease_token"],
                                             now=later(121, at))
        assert late["outcome"] == "lease_lost"
        done = sql_api.reconciliation_report(conn, item_id=second["item_id"], lease_token=second["lease_token"],
                                             now=later(122, at))
        assert done["outcome"] == "job_recreated"
    assert owner.execute("SELECT count(*) AS n FROM lifecycle_jobs").fetchone()["n"] == 2

"""The lifecycle job queue: handlers on real payloads, leases, races, backoff
and dead letters, all through the SQL functions the workers call."""
from __future__ import annotations

import datetime as dt
import threading
import time

import psycopg
import pytest

from app import sql_api
from tests.helpers.paths import webhook_fixture
from tests.helpers.service import make_lifecycle_jobs, post_webhook
from workers.lifecycle import LifecycleQueue
from workers.queue_worker import QueueWorker
from tests.helpers.drivers import run_until_idle

LEASE = 60
MAX_ATTEMPTS = 3


def deliver(client, name: str, delivery_id: str | None = None):
    event = name.split(".")[0]
    result = post_webhook(client, webhook_fixture(name), event, delivery_id=delivery_id or f"d-{name}")
    assert result.status_code == 202, result.json
    return result


def run_worker(config, pool, db_url) -> int:
    worker = QueueWorker(LifecycleQueue(config), pool, db_url, concurrency=2, poll_ms=50)
    return run_until_idle(worker)


def claim(pool, worker="w", limit=10, now=None):
    with pool.connection() as conn:
        return sql_api.job_claim(conn, worker=worker, limit=limit, lease_seconds=LEASE, max_attempts=MAX_ATTEMPTS,
                                 now=now or dt.datetime.now(dt.timezone.utc))


def process(pool, item, now=None):
    with pool.connection() as conn:
        return sql_api.lifecycle_job_run(conn, job_id=item["job_id"], lease_token=item["lease_token"],
                                         now=now or dt.datetime.now(dt.timezone.utc))["outcome"]


def fail(pool, item, now=None, reason="handler_error", error_class="RuntimeError"):
    with pool.connection() as conn:
        return sql_api.job_fail(conn, job_id=item["job_id"], lease_token=item["lease_token"], reason_code=reason,
                                error_class=error_class, max_attempts=MAX_ATTEMPTS,
                                now=now or dt.datetime.now(dt.timezone.utc))


def job(owner, job_id=None):
    if job_id is None:
        return owner.execute("SELECT * FROM lifecycle_jobs ORDER BY id DESC LIMIT 1").fetchone()
    return owner.execute("SELECT * FROM lifecycle_jobs WHERE id = %s", (job_id,)).fetchone()


def inbox_state(owner, job_id):
    return owner.execute("SELECT i.state FROM webhook_inbox i JOIN lifecycle_jobs j ON j.inbox_id = i.id "
                         "WHERE j.id = %s", (job_id,)).fetchone()["state"]


# -- handlers on the real payloads ------------------------------------------

def test_installation_lifecycle(client, owner, pool, config, db_url):
    deliver(client, "installation.created.1.json")
    assert run_worker(config, pool, db_url) == 1
    inst = owner.execute("SELECT * FROM ops.installations").fetchone()
    assert (inst["id"], inst["account"], inst["status"], inst["repositories"]) == (957387, "Codertocat", "active", 1)
    assert owner.execute("SELECT full_name FROM repositories").fetchone()["full_name"] == "Codertocat/Hello-World"
    assert owner.execute("SELECT state FROM webhook_inbox").fetchone()["state"] == "processed"
    assert job(owner)["outcome"] == "installation_created"

    deliver(client, "installation_repositories.added.0.json")
    deliver(client, "installation_repositories.added.1.json")
    run_worker(config, pool, db_url)
    repos = owner.execute("SELECT full_name FROM repositories WHERE installation_id = 957387 AND removed_at IS NULL "
                          "ORDER BY full_name").fetchall()
    assert len(repos) >= 2

    deliver(client, "installation.new_permissions_accepted.4.json")
    run_worker(config, pool, db_url)
    assert job(owner)["outcome"] == "installation_new_permissions_accepted"


def test_suspend_and_unsuspend(client, owner, pool, config, db_url):
    deliver(client, "installation.suspend.5.json")
    run_worker(config, pool, db_url)
    assert owner.execute("SELECT status FROM installations WHERE id = 16598467").fetchone()["status"] == "suspended"
    deliver(client, "installation.unsuspend.6.json")
    run_worker(config, pool, db_url)
    assert owner.execute("SELECT status FROM installations WHERE id = 16598467").fetchone()["status"] == "active"


def test_deleted_installation_removes_its_repositories(client, owner, pool, config, db_url):
    deliver(client, "installation_repositories.removed.2.json")  # installation 2 with a repository
    deliver(client, "installation.deleted.0.json")
    run_worker(config, pool, db_url)
    assert owner.execute("SELECT status FROM installations WHERE id = 2").fetchone()["status"] == "deleted"
    assert owner.execute("SELECT count(*) AS n FROM repositories WHERE installation_id = 2 AND removed_at IS NULL"
                         ).fetchone()["n"] == 0


def test_repositories_removed(client, owner, pool, config, db_url):
    payload_name = "installation_repositories.removed.2.json"
    deliver(client, payload_name)
    run_worker(config, pool, db_url)
    import json
    removed = json.loads(webhook_fixture(payload_name))["repositories_removed"]
    for repo in removed:
        row = owner.execute("SELECT removed_at FROM repositories WHERE id = %s", (repo["id"],)).fetchone()
        assert row is None or row["removed_at"] is not None


@pytest.mark.parametrize("name", ["pull_request.opened.12.json", "pull_request.reopened.18.json",
                                  "pull_request.synchronize.22.json", "pull_request.ready_for_review.16.json"])
def test_pull_request_head_opens_a_release_run(client, owner, pool, config, db_url, name):
    import json
    payload = json.loads(webhook_fixture(name))
    deliver(client, name)
    run_worker(config, pool, db_url)
    outcome = job(owner)["outcome"]
    if payload["pull_request"]["draft"]:
        assert outcome == "skipped_draft"
        assert owner.execute("SELECT count(*) AS n FROM release_runs").fetchone()["n"] == 0
        return
    assert outcome == "release_run_opened"
    run = owner.execute("SELECT * FROM release_runs").fetchone()
    assert run["head_sha"] == payload["pull_request"]["head"]["sha"]
    assert run["pr_number"] == payload["pull_request"]["number"]
    assert run["trigger_action"] == payload["action"]
    assert run["status"] == "queued"
    attempt = owner.execute("SELECT * FROM release_run_attempts").fetchone()
    assert (attempt["id"], attempt["attempt_number"]) == (run["current_attempt_id"], 1)
    assert len(attempt["nonce"]) == 32
    outbox = owner.execute("SELECT kind, status FROM outbox_items").fetchall()
    assert outbox == [{"kind": "check_run_create", "status": "accepted"}]
    # The same head delivered again (another delivery id) is not a second run.
    deliver(client, name, delivery_id="again")
    run_worker(config, pool, db_url)
    assert job(owner)["outcome"] == "release_run_exists"
    assert owner.execute("SELECT count(*) AS n FROM release_runs").fetchone()["n"] == 1


@pytest.mark.parametrize("name", ["pull_request.closed.3.json", "pull_request.labeled.8.json",
                                  "pull_request.assigned.1.json", "pull_request.locked.10.json"])
def test_other_pull_request_actions_only_record_the_pull_request(client, owner, pool, config, db_url, name):
    deliver(client, name)
    run_worker(config, pool, db_url)
    assert job(owner)["status"] == "completed"
    assert job(owner)["outcome"] == "pull_request_recorded"
    assert owner.execute("SELECT count(*) AS n FROM release_runs").fetchone()["n"] == 0


def test_no_release_run_for_a_suspended_installation(client, owner, pool, config, db_url):
    deliver(client, "pull_request.opened.12.json", delivery_id="first")
    run_worker(config, pool, db_url)
    owner.execute("UPDATE installations SET status = 'suspended' WHERE id = 1")
    deliver(client, "pull_request.synchronize.22.json")
    run_worker(config, pool, db_url)
    assert job(owner)["outcome"] == "skipped_inactive_installation"


# -- leases, races, failures ---------------------------------------------------

def test_worker_killed_mid_job_lease_expires_and_the_job_completes_once(client, owner, pool):
    deliver(client, "installation.created.1.json")
    t0 = dt.datetime.now(dt.timezone.utc)
    [first] = claim(pool, worker="killed", now=t0)
    assert job(owner, first["job_id"])["status"] == "leased"
    assert inbox_state(owner, first["job_id"]) == "processing"
    # The worker dies. Before the lease expires nobody else can claim it...
    assert claim(pool, worker="other", now=t0 + dt.timedelta(seconds=LEASE - 1)) == []
    # ...after, another worker does, with a new lease.
    [second] = claim(pool, worker="other", now=t0 + dt.timedelta(seconds=LEASE + 1))
    assert second["job_id"] == first["job_id"] and second["lease_token"] != first["lease_token"]
    assert second["attempts"] == 2
    # The first worker comes back to life: its completion is refused.
    assert process(pool, first) == "lease_lost"
    assert process(pool, second) == "installation_created"
    assert process(pool, second) == "lease_lost"
    row = job(owner, first["job_id"])
    assert row["status"] == "completed" and row["leased_by"] is None
    assert inbox_state(owner, first["job_id"]) == "processed"
    assert owner.execute("SELECT count(*) AS n FROM installations").fetchone()["n"] == 1


def race_two_claims(db_url, limit: int) -> tuple[set, set]:
    barrier = threading.Barrier(2)
    results: dict[str, list] = {}

    def racer(name):
        with psycopg.connect(db_url, row_factory=psycopg.rows.dict_row) as conn:
            barrier.wait()
            results[name] = sql_api.job_claim(conn, worker=name, limit=limit, lease_seconds=LEASE,
                                              max_attempts=MAX_ATTEMPTS)

    threads = [threading.Thread(target=racer, args=(n,)) for n in ("a", "b")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return {r["job_id"] for r in results["a"]}, {r["job_id"] for r in results["b"]}


def test_two_workers_racing_never_share_a_job(client, owner, pool, db_url):
    for i in range(20):
        deliver(client, "pull_request.opened.12.json", delivery_id=f"race-{i}")
    assert make_lifecycle_jobs(owner) == 20
    a, b = race_two_claims(db_url, limit=15)
    assert not a & b
    assert len(a | b) == 20


def test_two_workers_racing_make_each_delivery_one_job(client, owner, pool, db_url):
    """Both claims find the same deliveries awaiting their job: each row is
    taken by one of them (the other skips it), and a job made twice would be
    refused by the unique inbox_id anyway. Whatever neither claimed waits as an
    accepted job for the next claim."""
    for i in range(20):
        deliver(client, "pull_request.opened.12.json", delivery_id=f"race-{i}")
    a, b = race_two_claims(db_url, limit=8)
    assert not a & b
    jobs = owner.execute("SELECT inbox_id, status FROM lifecycle_jobs").fetchall()
    assert len(jobs) == len({j["inbox_id"] for j in jobs}) == 20
    assert sum(j["status"] == "leased" for j in jobs) == len(a | b) > 0
    assert owner.execute("SELECT count(*) AS n FROM webhook_inbox WHERE awaiting_job").fetchone()["n"] == 0
    rest = claim(pool, limit=20)
    assert {r["job_id"] for r in rest}.isdisjoint(a | b) and len(rest) == 20 - len(a | b)


def test_failures_back_off_then_dead_letter_after_the_last_attempt(client, owner, pool):
    deliver(client, "installation.created.1.json")
    now = dt.datetime.now(dt.timezone.utc)
    run_afters = []
    for attempt in range(1, MAX_ATTEMPTS + 1):
        [item] = claim(pool, now=now)
        assert item["attempts"] == attempt
        result = fail(pool, item, now=now, reason="host_unavailable", error_class="ConnectError")
        if attempt < MAX_ATTEMPTS:
            assert result["outcome"] == "retry_scheduled"
            assert result["run_after"] > now
            run_afters.append(result["run_after"] - now)
            assert claim(pool, now=now) == []  # not before its backoff
            now = result["run_after"]
        else:
            assert result["outcome"] == "dead_letter"
    assert run_afters[1] > run_afters[0]  # exponential: 1 s then 2 s, +-25 % jitter
    row = job(owner)
    assert (row["status"], row["reason_code"], row["error_class"], row["attempts"]) == (
        "dead_letter", "host_unavailable", "ConnectError", MAX_ATTEMPTS)
    assert inbox_state(owner, row["id"]) == "dead_letter"
    assert claim(pool, now=now + dt.timedelta(days=1)) == []
    dead = owner.execute("SELECT * FROM ops.dead_letters").fetchone()
    assert (dead["item_type"], dead["reason_code"], dead["attempts"]) == ("job", "host_unavailable", MAX_ATTEMPTS)


def test_expired_lease_on_the_last_attempt_dead_letters(client, owner, pool):
    deliver(client, "installation.created.1.json")
    now = dt.datetime.now(dt.timezone.utc)
    for _ in range(MAX_ATTEMPTS):
        [item] = claim(pool, now=now)
        now += dt.timedelta(seconds=LEASE + 1)  # the worker dies every time
    assert claim(pool, now=now) == []
    row = job(owner)
    assert (row["status"], row["reason_code"], row["error_class"]) == ("dead_letter", "lease_expired", "LeaseExpired")


def test_failure_codes_must_be_stable_codes(client, pool):
    deliver(client, "installation.created.1.json")
    [item] = claim(pool)
    with pytest.raises(psycopg.errors.InvalidParameterValue):
        fail(pool, item, reason='duplicate key value violates unique constraint "x"')


def test_release_gives_the_job_back_without_using_an_attempt(client, owner, pool):
    deliver(client, "installation.created.1.json")
    [item] = claim(pool)
    with pool.connection() as conn:
        assert sql_api.job_release(conn, job_id=item["job_id"],
                                   lease_token=item["lease_token"])["outcome"] == "released"
    row = job(owner)
    assert (row["status"], row["attempts"]) == ("accepted", 0)
    assert inbox_state(owner, row["id"]) == "accepted"


def test_a_failing_handler_is_reported_by_the_worker_loop(client, owner, pool, config, db_url):
    deliver(client, "installation.created.1.json")

    class Exploding(LifecycleQueue):
        def handle(self, pool, item):
            raise ConnectionResetError("peer reset")

    run_until_idle(QueueWorker(Exploding(config), pool, db_url, concurrency=1, poll_ms=50))
    row = job(owner)
    assert (row["status"], row["reason_code"], row["error_class"], row["attempts"]) == (
        "accepted", "handler_error", "ConnectionResetError", 1)


def test_no_release_run_for_a_removed_repository_or_a_canceled_account(client, owner, pool, config, db_url):
    deliver(client, "pull_request.opened.12.json", delivery_id="first")
    run_worker(config, pool, db_url)
    owner.execute("UPDATE release_runs SET status = 'completed'")
    owner.execute("UPDATE repositories SET removed_at = now()")
    deliver(client, "pull_request.synchronize.22.json", delivery_id="removed")
    run_worker(config, pool, db_url)
    assert job(owner)["outcome"] == "skipped_inactive_installation"

    owner.execute("UPDATE repositories SET removed_at = NULL")
    owner.execute("INSERT INTO accounts (id, login, type) VALUES (77, 'acme', 'Organization')")
    owner.execute("UPDATE installations SET account_id = 77 WHERE id = 1")
    owner.execute("INSERT INTO marketplace_accounts (account_id, state, tier, effective_date, last_delivery_id, "
                  "created_at, updated_at) VALUES (77, 'canceled', 'free', now(), 'm-1', now(), now())")
    # A job accepted before the cancellation reached the database:
    owner.execute("INSERT INTO webhook_inbox (provider, delivery_id, idempotency_key, event, action, installation_id, "
                  "actions, payload_sha256, payload_bytes, state, received_at, updated_at) "
                  "SELECT provider, 'late', 'host:late', event, action, installation_id, actions, payload_sha256, "
                  "payload_bytes, 'accepted', now(), now() FROM webhook_inbox WHERE delivery_id = 'removed'")
    owner.execute("INSERT INTO lifecycle_jobs (inbox_id, idempotency_key, installation_id, kind, action, "
                  "status, run_after, created_at, updated_at) SELECT id, idempotency_key, installation_id, event, "
                  "action, 'accepted', now(), now(), now() FROM webhook_inbox WHERE delivery_id = 'late'")
    run_worker(config, pool, db_url)
    assert job(owner)["outcome"] == "skipped_account_canceled"
    assert owner.execute("SELECT count(*) AS n FROM release_runs").fetchone()["n"] == 1


def test_a_job_committed_while_a_claim_runs_is_returned_not_lost(client, owner, pool, db_url):
    """The claim's own snapshot must see what its UPDATE claimed: a job that
    commits after the claim statement started, but before its UPDATE ran,
    used to be leased in the database yet missing from the returned rows,
    and sat unprocessed until its lease expired."""
    deliver(client, "installation.created.1.json", delivery_id="first")
    with psycopg.connect(db_url, autocommit=False) as blocker:
        blocker.execute("LOCK TABLE boardready.lifecycle_jobs IN EXCLUSIVE MODE")  # reads pass, writes wait
        result: dict = {}

        def claimer():
            with psycopg.connect(db_url, row_factory=psycopg.rows.dict_row, autocommit=True) as conn:
                conn.execute("SET application_name = 'racing-claim'")
                result["rows"] = sql_api.job_claim(conn, worker="w", limit=10, lease_seconds=LEASE,
                                                   max_attempts=MAX_ATTEMPTS)

        thread = threading.Thread(target=claimer)
        thread.start()
        deadline = time.monotonic() + 20
        while not owner.execute("SELECT 1 FROM pg_stat_activity WHERE application_name = 'racing-claim' "
                                "AND wait_event_type = 'Lock'").fetchone():
            assert time.monotonic() < deadline, "the claim never waited for the lock"
            time.sleep(0.02)
        # The claim statement has started (its snapshot is taken); a job commits now.
        blocker.execute("INSERT INTO boardready.webhook_inbox (provider, delivery_id, idempotency_key, event, action, "
                        "installation_id, actions, payload_sha256, payload_bytes, state, received_at, updated_at) "
                        "SELECT provider, 'late', 'host:late', event, action, installation_id, actions, "
                        "payload_sha256, payload_bytes, 'accepted', now(), now() FROM boardready.webhook_inbox")
        blocker.execute("INSERT INTO boardready.lifecycle_jobs (inbox_id, idempotency_key, installation_id, kind, "
                        "action, status, run_after, created_at, updated_at) SELECT id, idempotency_key, "
                        "installation_id, event, action, 'accepted', now(), now(), now() "
                        "FROM boardready.webhook_inbox WHERE delivery_id = 'late'")
        blocker.commit()
        thread.join(timeout=20)
    leased = owner.execute("SELECT id FROM lifecycle_jobs WHERE status = 'leased' ORDER BY id").fetchall()
    assert sorted(r["job_id"] for r in result["rows"]) == [r["id"] for r in leased]
    assert len(leased) == 2


def test_a_claim_after_a_burst_looks_at_the_awaiting_index_not_the_whole_inbox(owner, pool):
    """Right after a burst the planner's statistics still count its rows as
    awaiting their job; the claim's first look must still be the partial index."""
    owner.execute("INSERT INTO webhook_inbox (provider, delivery_id, idempotency_key, event, action, installation_id,"
                  " actions, payload_sha256, payload_bytes, state, received_at, updated_at, acceptance_ms,"
                  " awaiting_job) SELECT 'host', 'burst-' || n, 'host:burst-' || n, 'ping', '', 1, '{}', 'x', 2,"
                  " 'processed', now(), now(), 1, true FROM generate_series(1, 3000) AS n")
    owner.execute("ANALYZE webhook_inbox")
    owner.execute("UPDATE webhook_inbox SET awaiting_job = false")  # their jobs made; no ANALYZE since
    with pool.connection() as conn, conn.transaction():
        assert not claim_in(conn)
        scans = conn.execute("SELECT seq_scan, idx_scan FROM pg_stat_xact_user_tables"
                             " WHERE relid = 'boardready.webhook_inbox'::regclass").fetchone()
    assert scans["seq_scan"] == 0 and scans["idx_scan"] >= 1, scans


def claim_in(conn):
    return sql_api.job_claim(conn, worker="w", limit=10, lease_seconds=LEASE, max_attempts=MAX_ATTEMPTS)

"""Release runs through the outbox against the code host emulator: check run
first, then the workflow dispatch, every outcome class of the dispatch, a
superseding push, and a worker that dies between two calls."""
from __future__ import annotations

import datetime as dt

import pytest

from app import sql_api
from tests.helpers.host import (REPOSITORY, assert_requests_match_the_rest_description, make_hostkit,
                                   run_lifecycle, run_outbox)
from app.host.outbox import external_id
from tools.workflow_file import run_name_template


@pytest.fixture
def kit(host):
    return make_hostkit(host, SERVICE_HOST_TIMEOUT_MS="1000")


@pytest.fixture
def client(kit, pool):
    from falcon import testing
    from app.web.wsgi import create_app
    return testing.TestClient(create_app(kit.config, pool))


def open_and_process(kit, client, pool, db_url, pr=None, action="opened"):
    pr = pr or kit.host.open_pull_request(REPOSITORY)
    kit.deliver_pull_request(client, pr, action)
    run_lifecycle(kit, pool, db_url)
    run_outbox(kit, pool, db_url)
    return pr


def release_run(owner, head_sha):
    return owner.execute("SELECT * FROM ops.release_runs WHERE head_sha = %s", (head_sha,)).fetchone()


def outbox(owner, kind):
    return owner.execute("SELECT * FROM outbox_items WHERE kind = %s ORDER BY id DESC LIMIT 1", (kind,)).fetchone()


def skip_backoff(owner):
    owner.execute("UPDATE outbox_items SET run_after = now() WHERE status = 'accepted'")


def test_check_run_then_dispatch(kit, client, pool, db_url, owner):
    pr = open_and_process(kit, client, pool, db_url)
    run = release_run(owner, pr["head"]["sha"])
    assert run["status"] == "dispatched" and run["dispatch_state"] == "dispatched"

    [check_run] = kit.host.check_runs(REPOSITORY)
    assert check_run["head_sha"] == pr["head"]["sha"]
    assert check_run["status"] == "queued"
    assert check_run["external_id"] == external_id(run["id"])
    assert run["check_run_id"] == check_run["id"]

    [dispatch] = kit.host.requests(operation_id="actions/create-workflow-dispatch")
    attempt = owner.execute("SELECT * FROM release_run_attempts WHERE id = (SELECT current_attempt_id FROM "
                            "release_runs WHERE id = %s)", (run["id"],)).fetchone()
    assert dispatch["body"]["inputs"] == {"attempt_id": f"{attempt['id']}-{attempt['nonce']}",
                                          "head_sha": pr["head"]["sha"], "pull_request": str(pr["number"])}
    assert dispatch["body"]["return_run_details"] is True
    assert dispatch["body"]["ref"] == "main"
    [workflow_run] = kit.host.runs(REPOSITORY)
    assert attempt["workflow_run_id"] == workflow_run["id"]
    assert attempt["host_installation_id"] == kit.installation["id"]

    # Order: the check run exists before the workflow is dispatched.
    operations = [e["operation_id"] for e in kit.host.requests() if e["operation_id"]]
    assert operations.index("checks/create") < operations.index("actions/create-workflow-dispatch")
    assert assert_requests_match_the_rest_description(kit) >= 3


def test_synchronize_supersedes_the_open_run(kit, client, pool, db_url, owner):
    pr = open_and_process(kit, client, pool, db_url)
    assert release_run(owner, pr["head"]["sha"])["status"] == "dispatched"
    pushed = kit.host.synchronize_pull_request(REPOSITORY, pr["number"])
    open_and_process(kit, client, pool, db_url, pr=pushed, action="synchronize")
    run_outbox(kit, pool, db_url)  # the superseded check run's completion

    old, new = release_run(owner, pr["head"]["sha"]), release_run(owner, pushed["head"]["sha"])
    assert old["status"] == "superseded" and old["superseded_by"] == new["id"]
    assert new["status"] == "dispatched"
    checks = {c["head_sha"]: c for c in kit.host.check_runs(REPOSITORY)}
    assert checks[pr["head"]["sha"]]["conclusion"] == "cancelled"
    assert checks[pushed["head"]["sha"]]["status"] == "queued"
    assert len(kit.host.requests(operation_id="actions/create-workflow-dispatch")) == 2
    assert assert_requests_match_the_rest_description(kit) >= 5


def test_superseded_before_dispatch_is_never_dispatched(kit, client, pool, db_url, owner):
    pr = kit.host.open_pull_request(REPOSITORY)
    kit.deliver_pull_request(client, pr)
    run_lifecycle(kit, pool, db_url)
    pushed = kit.host.synchronize_pull_request(REPOSITORY, pr["number"])
    kit.deliver_pull_request(client, pushed, "synchronize")
    run_lifecycle(kit, pool, db_url)
    run_outbox(kit, pool, db_url)
    dispatches = kit.host.requests(operation_id="actions/create-workflow-dispatch")
    assert [d["body"]["inputs"]["head_sha"] for d in dispatches] == [pushed["head"]["sha"]]
    assert [c["head_sha"] for c in kit.host.check_runs(REPOSITORY)] == [pushed["head"]["sha"]]


def test_5xx_is_retried(kit, client, pool, db_url, owner):
    kit.host.add_fault(operation_id="actions/create-workflow-dispatch", status=502, count=1)
    pr = open_and_process(kit, client, pool, db_url)
    item = outbox(owner, "workflow_dispatch")
    assert (item["status"], item["reason_code"], item["attempts"]) == ("accepted", "host_unavailable", 1)
    assert item["run_after"] > item["failed_at"]
    skip_backoff(owner)
    run_outbox(kit, pool, db_url)
    assert release_run(owner, pr["head"]["sha"])["status"] == "dispatched"
    assert len(kit.host.requests(operation_id="actions/create-workflow-dispatch")) == 2
    assert len(kit.host.check_runs(REPOSITORY)) == 1


def test_429_retry_after_is_honoured(kit, client, pool, db_url, owner):
    kit.host.add_fault(operation_id="actions/create-workflow-dispatch", status=429,
                       headers={"Retry-After": "120"}, count=1)
    open_and_process(kit, client, pool, db_url)
    item = outbox(owner, "workflow_dispatch")
    assert (item["status"], item["reason_code"]) == ("accepted", "host_rate_limited")
    assert item["run_after"] >= item["failed_at"] + dt.timedelta(seconds=119)


def test_rate_limit_reset_is_honoured(kit, client, pool, db_url, owner):
    reset = int(dt.datetime.now(dt.timezone.utc).timestamp()) + 600
    kit.host.add_fault(operation_id="actions/create-workflow-dispatch", status=403, count=1,
                       headers={"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": str(reset)},
                       body={"message": "API rate limit exceeded"})
    open_and_process(kit, client, pool, db_url)
    item = outbox(owner, "workflow_dispatch")
    assert (item["status"], item["reason_code"]) == ("accepted", "host_rate_limited")
    assert item["run_after"] >= dt.datetime.fromtimestamp(reset, dt.timezone.utc)


def test_missing_workflow_fails_the_run_and_says_why(kit, client, pool, db_url, owner):
    kit.host.set_workflows(REPOSITORY, [])
    pr = open_and_process(kit, client, pool, db_url)
    run_outbox(kit, pool, db_url)  # the check run completion queued by the failure
    run = release_run(owner, pr["head"]["sha"])
    assert (run["status"], run["failure_reason"], run["dispatch_state"]) == ("failed", "workflow_missing", "failed")
    assert outbox(owner, "workflow_dispatch")["status"] == "completed"
    [check_run] = kit.host.check_runs(REPOSITORY)
    assert check_run["conclusion"] == "failure"
    assert "readiness-runner.yml" in check_run["summary"]
    assert run["check_run_published_at"] is not None
    assert assert_requests_match_the_rest_description(kit) >= 4


def test_timeout_after_sending_is_an_uncertain_dispatch(kit, client, pool, db_url, owner):
    kit.host.add_fault(operation_id="actions/create-workflow-dispatch", delay_ms=2500, count=1)
    pr = open_and_process(kit, client, pool, db_url)
    item = outbox(owner, "workflow_dispatch")
    assert (item["status"], item["reason_code"], item["replay_safe"]) == ("dead_letter", "dispatch_uncertain", False)
    run = release_run(owner, pr["head"]["sha"])
    assert run["dispatch_state"] == "uncertain" and run["workflow_run_id"] is None
    dead = owner.execute("SELECT * FROM ops.dead_letters WHERE item_type = 'outbox'").fetchone()
    assert dead is not None and dead["replay_safe"] is False


def test_worker_killed_between_check_run_and_dispatch_creates_no_second_check_run(kit, client, pool, db_url, owner):
    pr = kit.host.open_pull_request(REPOSITORY)
    kit.deliver_pull_request(client, pr)
    run_lifecycle(kit, pool, db_url)
    # A worker claims the item, creates the check run on the host, and dies before reporting.
    with pool.connection() as conn:
        [item] = sql_api.outbox_claim(conn, worker="doomed", limit=1, lease_seconds=60, max_attempts=5)
    host_client = kit.host_client()
    host_client.create_check_run(item["installation_id"], item["repository"], item["head_sha"],
                                 external_id(item["release_run_id"]), "queued")
    host_client.close()
    owner.execute("UPDATE outbox_items SET leased_until = now() - interval '1 second' WHERE id = %s",
                  (item["item_id"],))

    run_outbox(kit, pool, db_url)
    assert len(kit.host.check_runs(REPOSITORY)) == 1
    run = release_run(owner, pr["head"]["sha"])
    assert run["status"] == "dispatched"
    assert run["check_run_id"] == kit.host.check_runs(REPOSITORY)[0]["id"]
    assert len(kit.host.requests(operation_id="checks/create")) == 1


def test_worker_killed_after_dispatching_starts_no_second_workflow_run(kit, client, pool, db_url, owner):
    """Found by bin/load's worker-kill profiles: a worker that sent the
    dispatch and died before reporting left the item to be claimed again when
    its lease ran out, and the next worker dispatched a second run for the
    same attempt. A retried dispatch now looks for the attempt's run first."""
    kit.host.set_run_name(REPOSITORY, run_name_template())   # as readiness-runner.yml names its runs
    # The check run is created and the first dispatch answered 502: the
    # dispatch item waits for its next claim.
    kit.host.add_fault(operation_id="actions/create-workflow-dispatch", status=502, count=1)
    pr = open_and_process(kit, client, pool, db_url)
    skip_backoff(owner)
    with pool.connection() as conn:
        [item] = sql_api.outbox_claim(conn, worker="doomed", limit=1, lease_seconds=60, max_attempts=5)
    assert item["kind"] == "workflow_dispatch"
    host_client = kit.host_client()
    host_client.dispatch_workflow(item["installation_id"], item["repository"], "main",
                                  {"attempt_id": item["attempt_ref"], "head_sha": item["head_sha"],
                                   "pull_request": str(item["pr_number"])})
    host_client.close()
    owner.execute("UPDATE outbox_items SET leased_until = now() - interval '1 second' WHERE id = %s",
                  (item["item_id"],))

    run_outbox(kit, pool, db_url)
    assert len(kit.host.requests(operation_id="actions/create-workflow-dispatch")) == 2   # the 502 and the doomed one
    [workflow_run] = kit.host.runs(REPOSITORY)
    run = release_run(owner, pr["head"]["sha"])
    assert (run["status"], run["dispatch_state"], run["workflow_run_id"]) == (
        "dispatched", "dispatched", workflow_run["id"])


def test_dead_letter_after_the_last_attempt(kit, client, pool, db_url, owner):
    kit.host.add_fault(operation_id="checks/create", status=500)
    pr = kit.host.open_pull_request(REPOSITORY)
    kit.deliver_pull_request(client, pr)
    run_lifecycle(kit, pool, db_url)
    for _ in range(kit.config.job_max_attempts):
        run_outbox(kit, pool, db_url)
        skip_backoff(owner)
    item = outbox(owner, "check_run_create")
    assert (item["status"], item["reason_code"], item["attempts"], item["replay_safe"]) == (
        "dead_letter", "host_unavailable", kit.config.job_max_attempts, True)
    assert kit.host.check_runs(REPOSITORY) == []


def test_a_worker_whose_lease_was_taken_over_sends_no_second_dispatch(kit, client, pool, db_url, owner):
    """Found by bin/load's 20-worker fleet on two cores: a worker starved past
    its lease went on and dispatched while the item's new holder dispatched
    too (two workflow runs for one attempt). The outbox now renews the lease
    right before a call a repeat would double, and stops when it was taken."""
    from app.host.outbox import OutboxQueue
    from app.queueing import LeaseLost

    # The first dispatch is answered 502: the dispatch item waits for its next claim.
    kit.host.add_fault(operation_id="actions/create-workflow-dispatch", status=502, count=1)
    pr = open_and_process(kit, client, pool, db_url)
    skip_backoff(owner)
    with pool.connection() as conn:
        [starved] = sql_api.outbox_claim(conn, worker="starved", limit=1, lease_seconds=60, max_attempts=5)
    # Its lease runs out while it is stalled; another worker takes the item and dispatches.
    owner.execute("UPDATE outbox_items SET leased_until = now() - interval '1 second' WHERE id = %s",
                  (starved["item_id"],))
    run_outbox(kit, pool, db_url)
    assert release_run(owner, pr["head"]["sha"])["status"] == "dispatched"
    assert len(kit.host.requests(operation_id="actions/create-workflow-dispatch")) == 2  # the 502, then the one

    # The stalled worker resumes: it sends nothing.
    host_client = kit.host_client()
    try:
        with pytest.raises(LeaseLost):
            OutboxQueue(kit.config, host_client).handle(pool, starved)
    finally:
        host_client.close()
    assert len(kit.host.requests(operation_id="actions/create-workflow-dispatch")) == 2

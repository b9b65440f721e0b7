"""Workflow-state reconciliation through the code host emulator, every row of
the spec's table with deadlines driven by p_now: a success without the signed
callback, timed_out, other conclusions, 404, a run still pending, a lookup
that fails; attempts dispatched without a run id (204, or a lost answer) found
by their run name; the current-attempt and lease re-checks."""
from __future__ import annotations

import threading

import psycopg
import pytest
from falcon import testing

from app import sql_api
from app.web.wsgi import create_app
from tests.helpers.service import OIDC_AUDIENCE
from tests.helpers.host import REPOSITORY, make_hostkit, run_lifecycle, run_outbox
from tests.helpers.reconciliation import DEADLINE, NEXT_CHECK, OBSERVATION, due_now, events, items, later, workflow_loop
from tests.helpers.results import DispatchedRun, envelope, make_result
from tools.workflow_file import run_name_template
from tests.helpers.drivers import process, run_once

RUN_GET = "actions/get-workflow-run"
DISPATCH = "actions/create-workflow-dispatch"


@pytest.fixture
def kit(host):
    kit = make_hostkit(host, SERVICE_OIDC_ISSUER=host.oidc_issuer, SERVICE_HOST_TIMEOUT_MS="1000")
    host.set_run_name(REPOSITORY, run_name_template())
    return kit


@pytest.fixture
def client(kit, pool):
    return testing.TestClient(create_app(kit.config, pool))


@pytest.fixture
def loop(kit, pool):
    host = kit.host_client()
    yield workflow_loop(kit.config, pool, host)
    host.close()


def release_run(owner, release_run_id):
    return owner.execute("SELECT * FROM ops.release_runs WHERE id = %s", (release_run_id,)).fetchone()


def attempt(owner, release_run_id):
    return owner.execute("SELECT a.* FROM release_run_attempts a JOIN release_runs rr ON a.id = rr.current_attempt_id "
                         "WHERE rr.id = %s", (release_run_id,)).fetchone()


def started(owner, dispatched) -> object:
    """The instant the item's deadline counts from."""
    row = attempt(owner, dispatched.release_run_id)
    return row["dispatched_at"] or row["created_at"]


def check_run(kit, check_run_id):
    return next(c for c in kit.host.check_runs(REPOSITORY) if c["id"] == check_run_id)


def assert_failed_closed(kit, owner, pool, db_url, dispatched, status, reason):
    run = release_run(owner, dispatched.release_run_id)
    assert (run["status"], run["failure_reason"], run["decision"], run["conclusion"]) == \
        (status, reason, "UNKNOWN", "failure")
    due_now(owner)
    run_outbox(kit, pool, db_url)
    shown = check_run(kit, dispatched.check_run_id)
    assert (shown["status"], shown["conclusion"]) == ("completed", "failure")
    assert reason in shown["summary"]


def test_success_without_the_callback_rechecks_then_fails_at_the_deadline(kit, client, pool, db_url, owner, loop,
                                                                          capsys):
    dispatched = DispatchedRun(kit, client, pool, db_url, owner)
    kit.host.complete_run(dispatched.workflow_run_id, "success")
    t0 = started(owner, dispatched)

    # Within the observation window: not a candidate.
    assert run_once(loop, later(OBSERVATION - 10, t0)) == []

    [report] = run_once(loop, later(OBSERVATION + 1, t0))
    assert (report["outcome"], report["reason_code"], report["terminal"]) == \
        ("recheck", "host_result_callback_pending", False)
    [item] = items(owner, "workflow_attempt")
    assert (item["status"], item["reason_code"], item["subject_id"]) == \
        ("accepted", "host_result_callback_pending", attempt(owner, dispatched.release_run_id)["id"])
    assert item["next_check_at"] == later(OBSERVATION + 1 + NEXT_CHECK, t0)
    # A success from the code host never makes the release successful.
    assert release_run(owner, dispatched.release_run_id)["status"] == "dispatched"

    [report] = run_once(loop, later(DEADLINE, t0))
    assert (report["outcome"], report["reason_code"]) == ("failed", "host_result_callback_missing")
    assert_failed_closed(kit, owner, pool, db_url, dispatched, "failed", "host_result_callback_missing")
    [terminal] = events(capsys, "worker.reconciliation_terminal")
    assert (terminal["itemId"], terminal["outcome"], terminal["reasonCode"], terminal["releaseRunId"]) == \
        (item["id"], "failed", "host_result_callback_missing", dispatched.release_run_id)

    # The signed result arriving now is refused: the run failed closed.
    late = dispatched.post(client, envelope(dispatched.attempt_ref, make_result(dispatched.head_sha)))
    assert (late.status_code, late.json["code"]) == (409, "attempt_not_current")


def test_timed_out_run_times_out_before_the_deadline(kit, client, pool, db_url, owner, loop):
    dispatched = DispatchedRun(kit, client, pool, db_url, owner)
    kit.host.complete_run(dispatched.workflow_run_id, "timed_out")
    [report] = run_once(loop, later(OBSERVATION + 1, started(owner, dispatched)))
    assert (report["outcome"], report["reason_code"]) == ("timed_out", "host_workflow_timed_out")
    assert_failed_closed(kit, owner, pool, db_url, dispatched, "timed_out", "host_workflow_timed_out")


@pytest.mark.parametrize("conclusion", ["failure", "cancelled", "action_required"])
def test_other_conclusions_fail_at_once(kit, client, pool, db_url, owner, loop, conclusion):
    dispatched = DispatchedRun(kit, client, pool, db_url, owner)
    kit.host.complete_run(dispatched.workflow_run_id, conclusion)
    [report] = run_once(loop, later(OBSERVATION + 1, started(owner, dispatched)))
    assert (report["outcome"], report["reason_code"]) == ("failed", f"host_workflow_{conclusion}")
    assert_failed_closed(kit, owner, pool, db_url, dispatched, "failed", f"host_workflow_{conclusion}")


@pytest.mark.parametrize("fault, before, status, after", [
    ({"status": 404}, "host_workflow_not_found", "failed", "host_workflow_not_found"),
    ({"preset": "server_error"}, "host_lookup_failed", "failed", "host_workflow_lookup_failed"),
    ({"drop": True}, "host_lookup_failed", "failed", "host_workflow_lookup_failed"),
    (None, "host_workflow_pending", "timed_out", "host_workflow_deadline_exceeded"),
])
def test_rechecked_until_the_deadline(kit, client, pool, db_url, owner, loop, fault, before, status, after):
    dispatched = DispatchedRun(kit, client, pool, db_url, owner)   # the run stays queued (manual mode)
    if fault:
        kit.host.add_fault(operation_id=RUN_GET, **fault)
    t0 = started(owner, dispatched)
    for offset in (OBSERVATION + 1, OBSERVATION + 1 + NEXT_CHECK):
        [report] = run_once(loop, later(offset, t0))
        assert (report["outcome"], report["reason_code"]) == ("recheck", before)
    assert release_run(owner, dispatched.release_run_id)["status"] == "dispatched"
    # Not due before its next check.
    assert run_once(loop, later(OBSERVATION + NEXT_CHECK + 30, t0)) == []
    [report] = run_once(loop, later(DEADLINE + 1, t0))
    assert (report["outcome"], report["reason_code"]) == (status, after)
    [item] = items(owner)
    assert (item["status"], item["outcome"], item["observations"]) == ("completed", status, 3)
    kit.host.clear_faults()
    assert_failed_closed(kit, owner, pool, db_url, dispatched, status, after)


def test_a_result_between_checks_closes_the_item(kit, client, pool, db_url, owner, loop):
    dispatched = DispatchedRun(kit, client, pool, db_url, owner)
    t0 = started(owner, dispatched)
    assert run_once(loop, later(OBSERVATION + 1, t0))[0]["outcome"] == "recheck"
    accepted = dispatched.post(client, envelope(dispatched.attempt_ref, make_result(dispatched.head_sha)))
    assert accepted.status_code == 200, accepted.json
    [report] = run_once(loop, later(DEADLINE + 1, t0))
    assert report["outcome"] == "attempt_closed"
    assert release_run(owner, dispatched.release_run_id)["status"] == "completed"


def test_dispatch_answered_204_is_found_by_its_run_name(kit, client, pool, db_url, owner, loop):
    kit.host.add_fault(operation_id=DISPATCH, status=204, after=True, count=1)
    dispatched = DispatchedRun(kit, client, pool, db_url, owner)
    assert dispatched.workflow_run_id is None
    [workflow_run] = kit.host.runs(REPOSITORY)
    assert dispatched.attempt_ref in workflow_run["display_title"].split()

    [report] = run_once(loop, later(OBSERVATION + 1, started(owner, dispatched)))
    assert (report["outcome"], report["reason_code"], report["workflow_run_id"]) == \
        ("recheck", "host_workflow_pending", workflow_run["id"])
    assert attempt(owner, dispatched.release_run_id)["workflow_run_id"] == workflow_run["id"]
    [listing] = kit.host.requests(operation_id="actions/list-workflow-runs")
    assert "branch=main" in listing["query"] and "event=workflow_dispatch" in listing["query"]

    # The signed callback of the found run is accepted: the attempt is bound to it now.
    token = kit.host.mint_oidc_token(OIDC_AUDIENCE, run_id=workflow_run["id"])
    accepted = dispatched.post(client, envelope(dispatched.attempt_ref, make_result(dispatched.head_sha)), token)
    assert accepted.status_code == 200, accepted.json


def call_back_from_the_started_run(kit, client, owner, dispatched) -> None:
    """The run the code host started sends its signed result with its own
    verified ID token; accepting it binds the run to the attempt."""
    [workflow_run] = kit.host.runs(REPOSITORY)
    token = kit.host.mint_oidc_token(OIDC_AUDIENCE, run_id=workflow_run["id"])
    accepted = dispatched.post(client, envelope(dispatched.attempt_ref, make_result(dispatched.head_sha)), token)
    assert accepted.status_code == 200, accepted.json
    bound = attempt(owner, dispatched.release_run_id)
    assert (bound["workflow_run_id"], bound["dispatch_state"]) == (workflow_run["id"], "dispatched")


def test_a_fast_callback_after_a_204_dispatch_binds_its_run(kit, client, pool, db_url, owner, loop):
    # The workflow calls back before reconciliation looked for its run: the
    # verified ID token of the repository's readiness workflow, for this
    # attempt's nonce, names the run, and acceptance binds it.
    kit.host.add_fault(operation_id=DISPATCH, status=204, after=True, count=1)
    dispatched = DispatchedRun(kit, client, pool, db_url, owner)
    assert dispatched.workflow_run_id is None
    call_back_from_the_started_run(kit, client, owner, dispatched)
    assert release_run(owner, dispatched.release_run_id)["status"] == "completed"
    # A completed run with its run id is nothing reconciliation needs to look at.
    assert run_once(loop, later(OBSERVATION + 1, started(owner, dispatched))) == []


def test_no_run_by_that_name_fails_not_found_at_the_deadline(kit, client, pool, db_url, owner, loop):
    kit.host.set_run_name(REPOSITORY, None)   # a workflow without the run-name: nothing carries the attempt id
    kit.host.add_fault(operation_id=DISPATCH, status=204, after=True, count=1)
    dispatched = DispatchedRun(kit, client, pool, db_url, owner)
    t0 = started(owner, dispatched)
    [report] = run_once(loop, later(OBSERVATION + 1, t0))
    assert (report["outcome"], report["reason_code"]) == ("recheck", "host_workflow_not_found")
    [report] = run_once(loop, later(DEADLINE, t0))
    assert (report["outcome"], report["reason_code"]) == ("failed", "host_workflow_not_found")
    assert_failed_closed(kit, owner, pool, db_url, dispatched, "failed", "host_workflow_not_found")


def test_uncertain_dispatch_is_found_and_its_dead_letter_resolved(kit, client, pool, db_url, owner, loop):
    kit.host.add_fault(operation_id=DISPATCH, drop=True, after=True, count=1)
    dispatched = DispatchedRun(kit, client, pool, db_url, owner)
    [dead] = owner.execute("SELECT * FROM ops.dead_letters").fetchall()
    assert (dead["reason_code"], dead["replay_safe"]) == ("dispatch_uncertain", False)
    assert attempt(owner, dispatched.release_run_id)["dispatch_state"] == "uncertain"

    [report] = run_once(loop, later(OBSERVATION + 1, started(owner, dispatched)))
    [workflow_run] = kit.host.runs(REPOSITORY)
    assert (report["outcome"], report["workflow_run_id"]) == ("recheck", workflow_run["id"])
    found = attempt(owner, dispatched.release_run_id)
    assert (found["workflow_run_id"], found["dispatch_state"]) == (workflow_run["id"], "dispatched")
    assert owner.execute("SELECT * FROM ops.dead_letters").fetchall() == []
    assert owner.execute("SELECT outcome FROM outbox_items WHERE kind = 'workflow_dispatch'").fetchone()["outcome"] \
        == "dispatch_reconciled"


def test_a_fast_callback_after_an_uncertain_dispatch_resolves_its_dead_letter(kit, client, pool, db_url, owner,
                                                                             loop):
    # The dispatch's answer is lost (the host started the run) and the workflow
    # calls back before reconciliation looked: binding the run resolves the
    # dead letter too, since the closed attempt is never looked at again
    # (found by bin/load's github-api-interruption profile).
    kit.host.add_fault(operation_id=DISPATCH, drop=True, after=True, count=1)
    dispatched = DispatchedRun(kit, client, pool, db_url, owner)
    call_back_from_the_started_run(kit, client, owner, dispatched)
    assert owner.execute("SELECT * FROM ops.dead_letters").fetchall() == []
    assert owner.execute("SELECT outcome FROM outbox_items WHERE kind = 'workflow_dispatch'").fetchone()["outcome"] \
        == "dispatch_reconciled"
    assert run_once(loop, later(OBSERVATION + 1, started(owner, dispatched))) == []


def test_a_superseded_attempt_is_never_failed(kit, client, pool, db_url, owner, loop):
    dispatched = DispatchedRun(kit, client, pool, db_url, owner)
    kit.host.complete_run(dispatched.workflow_run_id, "failure")
    at = later(OBSERVATION + 1, started(owner, dispatched))
    loop.detect(at)
    [claimed] = loop.claim(1, at)
    # A push supersedes the run between the lookup and the report.
    pushed = kit.host.synchronize_pull_request(REPOSITORY, dispatched.pr["number"])
    kit.deliver_pull_request(client, pushed, "synchronize")
    run_lifecycle(kit, pool, db_url)
    report = process(loop, claimed, at)
    assert (report["outcome"], report["terminal"]) == ("attempt_closed", True)
    run = release_run(owner, dispatched.release_run_id)
    assert (run["status"], run["failure_reason"]) == ("superseded", None)


def test_two_replicas_apply_one_observation_once(kit, client, pool, db_url, owner):
    dispatched = DispatchedRun(kit, client, pool, db_url, owner)
    kit.host.complete_run(dispatched.workflow_run_id, "failure")
    at = later(OBSERVATION + 1, started(owner, dispatched))
    hosts = [kit.host_client() for _ in range(2)]
    loops = [workflow_loop(kit.config, pool, h) for h in hosts]
    barrier = threading.Barrier(2)
    reports = []

    def replica(loop):
        barrier.wait()
        reports.extend(run_once(loop, at))

    threads = [threading.Thread(target=replica, args=(loop,)) for loop in loops]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    for h in hosts:
        h.close()
    assert [r["outcome"] for r in reports] == ["failed"]
    assert len(items(owner)) == 1
    assert owner.execute("SELECT count(*) AS n FROM outbox_items WHERE kind = 'check_run_complete'").fetchone()["n"] == 1


def test_a_report_under_a_lost_lease_changes_nothing(kit, client, pool, db_url, owner, loop):
    dispatched = DispatchedRun(kit, client, pool, db_url, owner)
    at = later(OBSERVATION + 1, started(owner, dispatched))
    loop.detect(at)
    [first] = loop.claim(1, at)
    [second] = loop.claim(1, later(200, at))   # the first lease (120 s) expired: another replica took it
    assert second["item_id"] == first["item_id"]
    with pool.connection() as conn:
        # Two connections race on one item: the stale lease loses, whatever the order.
        stale = sql_api.reconciliation_report(conn, item_id=first["item_id"], lease_token=first["lease_token"],
                                              observation="completed", conclusion="failure", next_check_seconds=60,
                                              now=later(201, at))
    assert stale["outcome"] == "lease_lost"
    assert release_run(owner, dispatched.release_run_id)["status"] == "dispatched"
    report = process(loop, second, later(202, at))
    assert report["outcome"] == "recheck"


def test_a_report_of_an_unknown_observation_is_refused_and_changes_nothing(kit, client, pool, db_url, owner, loop):
    dispatched = DispatchedRun(kit, client, pool, db_url, owner)
    at = later(OBSERVATION + 1, started(owner, dispatched))
    loop.detect(at)
    [item] = loop.claim(1, at)
    with pool.connection() as conn:
        with pytest.raises(psycopg.errors.InvalidParameterValue, match="reconciliation_invalid_observation"):
            sql_api.reconciliation_report(conn, item_id=item["item_id"], lease_token=item["lease_token"],
                                          observation="looked_sideways", next_check_seconds=60, now=later(1, at))
    row = owner.execute("SELECT status, observations, lease_token FROM reconciliation_items WHERE id = %s",
                        [item["item_id"]]).fetchone()
    assert (row["status"], row["observations"], row["lease_token"]) == ("leased", 0, item["lease_token"])
    assert release_run(owner, dispatched.release_run_id)["status"] == "dispatched"

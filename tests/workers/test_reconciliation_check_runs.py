"""Check-run publication reconciliation through the code host emulator: the
fault test (the final update fails five times, the outbox dead-letters it,
reconciliation converges the check run) and every row of the spec's table
(binding mismatch, already converged, queued or another conclusion, 404,
lookup unavailable, update failing), with deadlines driven by p_now. The
release run's status, decision, conclusion and findings never change."""
from __future__ import annotations

import pytest
from falcon import testing

from app.host.outbox import external_id
from app.web.wsgi import create_app
from tests.helpers.host import REPOSITORY, make_hostkit, run_outbox
from tests.helpers.reconciliation import (DEADLINE, NEXT_CHECK, OBSERVATION, audit, check_run_loop, due_now, events,
                                        items, later)
from tests.helpers.results import DispatchedRun, envelope, finding, make_result
from tests.helpers.drivers import run_once

FAILED_EVENT = "control_plane.host_check_run_reconciliation_failed"


@pytest.fixture
def kit(host):
    return make_hostkit(host, SERVICE_OIDC_ISSUER=host.oidc_issuer, SERVICE_HOST_TIMEOUT_MS="1000",
                        SERVICE_JOB_MAX_ATTEMPTS="5")


@pytest.fixture
def client(kit, pool):
    return testing.TestClient(create_app(kit.config, pool))


@pytest.fixture
def loop(kit, pool):
    host = kit.host_client()
    yield check_run_loop(kit.config, pool, host)
    host.close()


def shown(kit, check_run_id):
    return next(c for c in kit.host.check_runs(REPOSITORY) if c["id"] == check_run_id)


def state(owner, release_run_id) -> dict:
    return owner.execute(
        "SELECT rr.status, rr.decision, rr.conclusion, rr.check_run_published_at, r.published_conclusion, "
        "r.last_publication_error, r.findings_count, rr.completed_at FROM release_runs rr "
        "JOIN run_results r ON r.release_run_id = rr.id WHERE rr.id = %s", (release_run_id,)).fetchone()


def decided(kit, client, pool, db_url, owner, readiness="blocked", publish=True):
    """A release run whose signed result was accepted (FAIL with two findings by default)."""
    dispatched = DispatchedRun(kit, client, pool, db_url, owner)
    findings = {"blocked": [finding(1, line=3), finding(2, "medium", line=9)], "at-risk": [finding(2, "medium", line=9)],
                "ready": []}[readiness]
    result = make_result(dispatched.head_sha, readiness, findings=findings)
    assert dispatched.post(client, envelope(dispatched.attempt_ref, result)).status_code == 200
    if publish:
        run_outbox(kit, pool, db_url)
    return dispatched


def lose_publication(owner, release_run_id):
    """The publication timestamp never written (a worker died before reporting it)."""
    owner.execute("UPDATE release_runs SET check_run_published_at = NULL WHERE id = %s", (release_run_id,))


def updates(kit) -> int:
    return len(kit.host.requests(operation_id="checks/update"))


def test_final_update_failing_five_times_is_dead_lettered_then_reconciled(kit, client, pool, db_url, owner, loop,
                                                                         capsys):
    kit.host.add_fault(operation_id="checks/update", status=502, count=5)
    dispatched = decided(kit, client, pool, db_url, owner, publish=False)
    for _ in range(5):
        due_now(owner)
        run_outbox(kit, pool, db_url)
    [dead] = owner.execute("SELECT * FROM ops.dead_letters").fetchall()
    assert (dead["item_type"], dead["reason_code"], dead["attempts"]) == ("outbox", "host_unavailable", 5)
    before = state(owner, dispatched.release_run_id)
    assert before["last_publication_error"] == "host_unavailable" and before["check_run_published_at"] is None
    assert shown(kit, dispatched.check_run_id)["status"] == "queued"

    t0 = before["completed_at"]
    assert run_once(loop, later(OBSERVATION - 1, t0)) == []   # inside the observation window
    [report] = run_once(loop, later(OBSERVATION + 1, t0))
    assert (report["outcome"], report["reason_code"], report["terminal"]) == \
        ("reconciled", "host_check_run_updated", True)
    check_run = shown(kit, dispatched.check_run_id)
    assert (check_run["status"], check_run["conclusion"]) == ("completed", "failure")
    assert "restored this check run's conclusion (`failure`)" in check_run["summary"]
    assert check_run["external_id"] == external_id(dispatched.release_run_id)

    after = state(owner, dispatched.release_run_id)
    assert (after["status"], after["decision"], after["conclusion"], after["findings_count"]) == \
        (before["status"], before["decision"], before["conclusion"], before["findings_count"]) == \
        ("completed", "FAIL", "failure", 2)
    assert after["check_run_published_at"] is not None
    assert (after["published_conclusion"], after["last_publication_error"]) == ("failure", None)
    [item] = items(owner, "release_run")
    assert (item["reason_code"], item["status"], item["outcome"]) == ("host_check_run_updated", "completed", "reconciled")
    [detected] = events(capsys, "worker.check_run_reconciliation_detected")
    assert (detected["reasonCode"], detected["subjectId"]) == ("reporting_stale", dispatched.release_run_id)
    # Converged: never looked at again.
    assert run_once(loop, later(DEADLINE * 2, t0)) == []


def test_already_converged_marks_it_reconciled_without_an_update(kit, client, pool, db_url, owner, loop):
    dispatched = decided(kit, client, pool, db_url, owner, readiness="at-risk")
    lose_publication(owner, dispatched.release_run_id)
    sent = updates(kit)
    [report] = run_once(loop, later(OBSERVATION + 1, state(owner, dispatched.release_run_id)["completed_at"]))
    assert (report["outcome"], report["reason_code"]) == ("reconciled", "host_check_run_converged")
    assert updates(kit) == sent
    assert state(owner, dispatched.release_run_id)["published_conclusion"] == "neutral"


def test_what_the_reconciler_restores_is_recorded_as_shown(kit, client, pool, db_url, owner, loop):
    """The release decision moved off the result's own (as an approval does)
    while the completion was lost: the reconciler restores the decision's
    conclusion, and records that, not the result's, as what the check run shows."""
    kit.host.add_fault(operation_id="checks/update", status=502, count=5)
    dispatched = decided(kit, client, pool, db_url, owner, readiness="at-risk", publish=False)
    for _ in range(5):
        due_now(owner)
        run_outbox(kit, pool, db_url)
    owner.execute("UPDATE release_runs SET decision = 'PASS', conclusion = 'success' WHERE id = %s",
                  (dispatched.release_run_id,))
    [report] = run_once(loop, later(OBSERVATION + 1, state(owner, dispatched.release_run_id)["completed_at"]))
    assert (report["outcome"], report["reason_code"]) == ("reconciled", "host_check_run_updated")
    assert shown(kit, dispatched.check_run_id)["conclusion"] == "success"
    assert state(owner, dispatched.release_run_id)["published_conclusion"] == "success"
    assert owner.execute("SELECT published_decision FROM release_runs WHERE id = %s",
                         (dispatched.release_run_id,)).fetchone()["published_decision"] == "PASS"


@pytest.mark.parametrize("host_state", [{"status": "in_progress"}, {"status": "completed", "conclusion": "success"}])
def test_in_progress_or_another_conclusion_is_updated_to_the_stored_one(kit, client, pool, db_url, owner, loop,
                                                                        host_state):
    dispatched = decided(kit, client, pool, db_url, owner)
    lose_publication(owner, dispatched.release_run_id)
    host = kit.host_client()
    host.update_check_run(kit.installation["id"], REPOSITORY, dispatched.check_run_id,
                          {**host_state, "output": {"title": "changed", "summary": "changed by someone"}})
    host.close()
    [report] = run_once(loop, later(OBSERVATION + 1, state(owner, dispatched.release_run_id)["completed_at"]))
    assert (report["outcome"], report["reason_code"]) == ("reconciled", "host_check_run_updated")
    assert shown(kit, dispatched.check_run_id)["conclusion"] == "failure"
    assert state(owner, dispatched.release_run_id)["decision"] == "FAIL"


def test_binding_mismatch_is_recorded_and_nothing_sent(kit, client, pool, db_url, owner, loop, capsys):
    dispatched = decided(kit, client, pool, db_url, owner)
    host = kit.host_client()
    other = host.create_check_run(kit.installation["id"], REPOSITORY, dispatched.head_sha, "someone-else:1", "x")
    host.close()
    owner.execute("UPDATE release_runs SET check_run_id = %s, check_run_published_at = NULL WHERE id = %s",
                  (other["id"], dispatched.release_run_id))
    sent = updates(kit)
    [report] = run_once(loop, later(OBSERVATION + 1, state(owner, dispatched.release_run_id)["completed_at"]))
    assert (report["outcome"], report["reason_code"]) == ("failed", "host_check_run_binding_mismatch")
    assert updates(kit) == sent
    assert shown(kit, other["id"])["status"] == "queued"
    after = state(owner, dispatched.release_run_id)
    assert (after["status"], after["decision"], after["last_publication_error"]) == \
        ("completed", "FAIL", "host_check_run_binding_mismatch")
    [event] = audit(owner, FAILED_EVENT)
    assert (event["item_type"], event["item_id"], event["details"]["reasonCode"]) == \
        ("release_run", str(dispatched.release_run_id), "host_check_run_binding_mismatch")
    [terminal] = events(capsys, "worker.check_run_reconciliation_terminal")
    assert (terminal["outcome"], terminal["checkRunId"]) == ("failed", other["id"])


@pytest.mark.parametrize("operation, fault, reason", [
    ("checks/get", {"status": 404}, "host_check_run_not_found"),
    ("checks/get", {"preset": "server_error"}, "host_check_run_lookup_failed"),
    ("checks/update", {"status": 502}, "host_check_run_update_failed"),
])
def test_rechecked_then_recorded_at_the_deadline(kit, client, pool, db_url, owner, loop, operation, fault, reason):
    dispatched = decided(kit, client, pool, db_url, owner, readiness="ready")
    lose_publication(owner, dispatched.release_run_id)
    host = kit.host_client()
    host.update_check_run(kit.installation["id"], REPOSITORY, dispatched.check_run_id,
                          {"status": "in_progress", "output": {"title": "t", "summary": "s"}})
    host.close()
    kit.host.add_fault(operation_id=operation, **fault)
    t0 = state(owner, dispatched.release_run_id)["completed_at"]
    for offset in (OBSERVATION + 1, OBSERVATION + 1 + NEXT_CHECK):
        [report] = run_once(loop, later(offset, t0))
        assert (report["outcome"], report["reason_code"]) == ("recheck", reason)
    assert audit(owner, FAILED_EVENT) == []
    [report] = run_once(loop, later(DEADLINE, t0))
    assert (report["outcome"], report["reason_code"]) == ("failed", reason)
    after = state(owner, dispatched.release_run_id)
    # A failure to publish never turns a successful release into a failure.
    assert (after["status"], after["decision"], after["conclusion"], after["last_publication_error"]) == \
        ("completed", "PASS", "success", reason)
    [event] = audit(owner, FAILED_EVENT)
    assert event["details"]["reasonCode"] == reason
    assert run_once(loop, later(DEADLINE * 2, t0)) == []   # recorded once, never reopened


def test_a_completion_still_in_the_outbox_is_left_to_it(kit, client, pool, db_url, owner, loop):
    kit.host.add_fault(operation_id="checks/update", status=502, count=1)
    dispatched = decided(kit, client, pool, db_url, owner)   # the first update failed: a retry is scheduled
    assert state(owner, dispatched.release_run_id)["check_run_published_at"] is None
    assert run_once(loop, later(OBSERVATION + 1, state(owner, dispatched.release_run_id)["completed_at"])) == []
    assert items(owner) == []


def test_a_run_failed_without_a_result_is_restored_as_failure(kit, client, pool, db_url, owner, loop):
    from tests.helpers.reconciliation import workflow_loop

    dispatched = DispatchedRun(kit, client, pool, db_url, owner)
    kit.host.complete_run(dispatched.workflow_run_id, "cancelled")
    host = kit.host_client()
    started = owner.execute("SELECT dispatched_at FROM release_run_attempts WHERE id = %s",
                            (int(dispatched.attempt_ref.split("-")[0]),)).fetchone()["dispatched_at"]
    run_once(workflow_loop(kit.config, pool, host), later(OBSERVATION + 1, started))
    host.close()
    kit.host.add_fault(operation_id="checks/update", status=502, count=5)
    for _ in range(5):
        due_now(owner)
        run_outbox(kit, pool, db_url)
    run = owner.execute("SELECT * FROM release_runs WHERE id = %s", (dispatched.release_run_id,)).fetchone()
    assert (run["status"], run["check_run_published_at"]) == ("failed", None)

    [report] = run_once(loop, later(OBSERVATION + 1, run["completed_at"]))
    assert (report["outcome"], report["reason_code"]) == ("reconciled", "host_check_run_updated")
    check_run = shown(kit, dispatched.check_run_id)
    assert (check_run["status"], check_run["conclusion"]) == ("completed", "failure")
    assert "host_workflow_cancelled" in check_run["summary"]


def test_a_failure_is_recorded_on_a_run_without_a_result(kit, client, pool, db_url, owner, loop):
    from tests.helpers.reconciliation import workflow_loop

    dispatched = DispatchedRun(kit, client, pool, db_url, owner)
    kit.host.complete_run(dispatched.workflow_run_id, "cancelled")
    host = kit.host_client()
    started = owner.execute("SELECT dispatched_at FROM release_run_attempts WHERE id = %s",
                            (int(dispatched.attempt_ref.split("-")[0]),)).fetchone()["dispatched_at"]
    run_once(workflow_loop(kit.config, pool, host), later(OBSERVATION + 1, started))
    host.close()
    kit.host.add_fault(operation_id="checks/update", status=502)
    for _ in range(5):
        due_now(owner)
        run_outbox(kit, pool, db_url)
    run = owner.execute("SELECT * FROM release_runs WHERE id = %s", (dispatched.release_run_id,)).fetchone()
    assert (run["status"], run["check_run_published_at"]) == ("failed", None)
    assert owner.execute("SELECT count(*) AS n FROM run_results WHERE release_run_id = %s",
                         (run["id"],)).fetchone()["n"] == 0
    [report] = run_once(loop, later(DEADLINE, run["completed_at"]))
    assert (report["outcome"], report["reason_code"]) == ("failed", "host_check_run_update_failed")
    assert owner.execute("SELECT last_publication_error FROM release_runs WHERE id = %s",
                         (run["id"],)).fetchone()["last_publication_error"] == "host_check_run_update_failed"

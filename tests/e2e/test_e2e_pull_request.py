"""End to end through real HTTP: the emulator delivers signed webhooks to the
service under gunicorn, whose workers create the check run and dispatch the
readiness workflow on the emulator."""
from __future__ import annotations

import httpx
import pytest

from emulator import openapi_check
from tests.helpers.service import OIDC_AUDIENCE, served_for_the_emulator, wait_for
from tests.helpers.results import CALLBACK, envelope, finding, make_result

REPOSITORY = "acme-hw/power-module"


@pytest.fixture
def stack(db_url):
    with served_for_the_emulator(db_url) as running:
        yield running


def test_pull_request_to_check_run_and_dispatch(stack, owner):
    host, service = stack
    installation = host.create_installation("acme-hw", account_type="Organization", deliver=True)
    host.create_repository(REPOSITORY, installation_id=installation["id"], deliver=True)
    pr = host.open_pull_request(REPOSITORY, title="Rev C: swap the buck converter", deliver=True)

    deliveries = host.deliveries()
    assert [d["status"] for d in deliveries] == [202] * len(deliveries) and len(deliveries) >= 2

    dispatch = wait_for(lambda: host.requests(operation_id="actions/create-workflow-dispatch"), seconds=30)
    [check_run] = host.check_runs(REPOSITORY)
    assert check_run["head_sha"] == pr["head"]["sha"] and check_run["status"] == "queued"
    assert dispatch[0]["body"]["inputs"]["head_sha"] == pr["head"]["sha"]
    [workflow_run] = host.runs(REPOSITORY)
    attempt = wait_for(lambda: owner.execute(
        "SELECT * FROM ops.release_runs WHERE head_sha = %s AND workflow_run_id IS NOT NULL",
        (pr["head"]["sha"],)).fetchone())
    assert attempt["workflow_run_id"] == workflow_run["id"]
    assert attempt["check_run_id"] == check_run["id"]

    # Every request the service made, validated against the code host's REST description.
    checked = 0
    for entry in host.requests():
        if entry["operation_id"]:
            openapi_check.validate_request(entry["method"], entry["path"], entry["body"])
            checked += 1
    operations = {e["operation_id"] for e in host.requests()}
    assert {"apps/create-installation-access-token", "checks/create", "actions/create-workflow-dispatch"} <= operations
    assert checked >= 4


def dispatched_pull_request(host, owner):
    installation = host.create_installation("acme-hw", account_type="Organization", deliver=True)
    host.create_repository(REPOSITORY, installation_id=installation["id"], deliver=True)
    pr = host.open_pull_request(REPOSITORY, deliver=True)
    row = wait_for(lambda: owner.execute(
        "SELECT a.id, a.nonce, a.workflow_run_id FROM release_runs rr JOIN release_run_attempts a "
        "ON a.id = rr.current_attempt_id WHERE rr.head_sha = %s AND a.workflow_run_id IS NOT NULL",
        (pr["head"]["sha"],)).fetchone(), seconds=30)
    return pr, f"{row['id']}-{row['nonce']}", row["workflow_run_id"]


@pytest.mark.parametrize("readiness, findings, conclusion", [
    ("ready", 0, "success"), ("blocked", 3, "failure"), ("at-risk", 2, "neutral"), ("at-risk", 130, "neutral")])
def test_signed_result_completes_the_check_run(stack, owner, readiness, findings, conclusion):
    host, service = stack
    pr, attempt_ref, workflow_run_id = dispatched_pull_request(host, owner)
    severity = "error" if readiness == "blocked" else "medium"
    result = make_result(pr["head"]["sha"], readiness, [finding(i, severity, line=i + 1) for i in range(findings)])
    token = host.mint_oidc_token(OIDC_AUDIENCE, run_id=workflow_run_id)
    answer = httpx.post(f"{service.base_url}{CALLBACK}", json=envelope(attempt_ref, result),
                        headers={"Authorization": f"Bearer {token}"}, timeout=30)
    assert answer.status_code == 200, answer.text
    assert answer.json()["conclusion"] == conclusion

    # The check run completes with the first batch; wait until the outbox has sent them all.
    published = wait_for(lambda: owner.execute(
        "SELECT count(*) AS n FROM outbox_items WHERE kind IN ('check_run_complete', 'pr_comment') "
        "AND status = 'completed'").fetchone()["n"] == 2, seconds=60, on_timeout=lambda: owner.execute(
        "SELECT id, kind, status, attempts, progress, reason_code, run_after, leased_until FROM outbox_items"
    ).fetchall())
    assert published
    [check_run] = [c for c in host.check_runs(REPOSITORY) if c["status"] == "completed"]
    assert len(host.comments(REPOSITORY)) == 1
    assert check_run["conclusion"] == conclusion
    annotations = host.annotations(check_run["id"])
    assert len(annotations) == findings
    assert len({a["start_line"] for a in annotations}) == findings
    updates = host.requests(operation_id="checks/update")
    assert len(updates) == max(1, -(-findings // 50))
    for entry in host.requests():
        if entry["operation_id"] and not entry["path"].startswith(("/oidc/", "/login/")):
            openapi_check.validate_request(entry["method"], entry["path"], entry["body"])
    for update in updates:
        assert len(update["body"]["output"]["annotations"]) <= 50

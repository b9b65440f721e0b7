"""The judge is the default branch's (issue 36), end to end: the emulator delivers a pull
request into a branch its author controls; the service under gunicorn dispatches the
readiness workflow on the repository's default branch, and the result callback accepts only
an OIDC token whose job ran readiness-runner.yml as it is on that branch."""
from __future__ import annotations

import httpx
import pytest

from tests.helpers.results import CALLBACK, envelope, make_result
from tests.helpers.service import OIDC_AUDIENCE, served_for_the_emulator, wait_for

REPOSITORY = "acme-hw/power-module"
WORKFLOW = ".github/workflows/readiness-runner.yml"


@pytest.fixture
def stack(db_url):
    with served_for_the_emulator(db_url) as running:
        yield running


def test_a_pull_request_into_its_authors_branch_is_judged_by_the_default_branchs_workflow(stack, owner):
    host, service = stack
    installation = host.create_installation("acme-hw", account_type="Organization", deliver=True)
    host.create_repository(REPOSITORY, installation_id=installation["id"], default_branch="trunk", deliver=True)
    host.push(REPOSITORY, branch="authors-own")          # a branch the pull request's author controls
    pr = host.open_pull_request(REPOSITORY, base_ref="authors-own", deliver=True)

    dispatch = wait_for(lambda: host.requests(operation_id="actions/create-workflow-dispatch"), seconds=30)
    assert dispatch[0]["body"]["ref"] == "trunk"
    row = wait_for(lambda: owner.execute(
        "SELECT a.id, a.nonce, a.workflow_run_id FROM release_runs rr JOIN release_run_attempts a "
        "ON a.id = rr.current_attempt_id WHERE rr.head_sha = %s AND a.workflow_run_id IS NOT NULL",
        (pr["head"]["sha"],)).fetchone(), seconds=30)
    attempt_ref, run_id = f"{row['id']}-{row['nonce']}", row["workflow_run_id"]
    body = envelope(attempt_ref, make_result(pr["head"]["sha"], "ready"))

    # A token of that run whose job ran the workflow file of the author's branch: refused.
    forged = host.mint_oidc_token(OIDC_AUDIENCE, run_id=run_id, claims={
        "job_workflow_ref": f"{REPOSITORY}/{WORKFLOW}@refs/heads/authors-own"})
    refused = httpx.post(f"{service.base_url}{CALLBACK}", json=body, headers={"Authorization": f"Bearer {forged}"},
                         timeout=30)
    assert refused.status_code == 403 and refused.json()["code"] == "workflow_ref_mismatch", refused.text
    missing = host.mint_oidc_token(OIDC_AUDIENCE, run_id=run_id, claims={"job_workflow_ref": None})
    assert httpx.post(f"{service.base_url}{CALLBACK}", json=body, headers={"Authorization": f"Bearer {missing}"},
                      timeout=30).json()["code"] == "workflow_ref_mismatch"
    assert owner.execute("SELECT count(*) AS n FROM run_results").fetchone()["n"] == 0

    # The run as the code host issues its token (the default branch's workflow): accepted.
    token = host.mint_oidc_token(OIDC_AUDIENCE, run_id=run_id)
    accepted = httpx.post(f"{service.base_url}{CALLBACK}", json=body, headers={"Authorization": f"Bearer {token}"},
                          timeout=30)
    assert accepted.status_code == 200 and accepted.json()["conclusion"] == "success", accepted.text

"""Token-published verdicts: a `runs:write` token and the attempt id (visible
in the repository's Actions log) cannot decide a release; only the signed,
attempt-bound workflow callback does, unless the repository opted in, audited,
and even then the signed result is never locked out."""
from __future__ import annotations

import pytest
from falcon import testing

from app.web.wsgi import create_app
from contracts import openapi_response_validator
from tests.helpers.access import bearer, create_token
from tests.helpers.service import count
from tests.helpers.host import REPOSITORY, run_outbox
from tests.helpers.results import DispatchedRun, envelope, finding, make_result
from tests.helpers.sessions import Session

RESULT = "/api/v1/runs/result"
SETTINGS = "/api/v1/repositories/{repositoryId}/settings"


@pytest.fixture
def client(kit, pool):
    return testing.TestClient(create_app(kit.config, pool))


@pytest.fixture
def dispatched(kit, client, pool, db_url, owner):
    return DispatchedRun(kit, client, pool, db_url, owner)


def check_run(kit, check_run_id):
    return next(c for c in kit.host.check_runs(REPOSITORY) if c["id"] == check_run_id)


def settings_path(kit) -> str:
    return SETTINGS.replace("{repositoryId}", str(kit.repository["id"]))


def publish_by_token(client, dispatched, token, readiness="ready"):
    return client.simulate_post(RESULT, headers=bearer(token), json={
        "attemptId": dispatched.attempt_ref, "result": make_result(dispatched.head_sha, readiness)})


def test_a_token_cannot_decide_a_release_and_the_signed_result_still_can(kit, client, pool, db_url, owner,
                                                                           dispatched):
    token, _ = create_token(pool, kit.repository["id"])   # the default scopes include runs:write
    refused = publish_by_token(client, dispatched, token)
    assert (refused.status_code, refused.json["code"]) == (409, "oidc_result_required")
    openapi_response_validator(RESULT, "post", 409).validate(refused.json)
    assert count(owner, "run_results") == 0
    assert owner.execute("SELECT status FROM release_runs").fetchone()["status"] == "dispatched"

    signed = dispatched.post(client, envelope(dispatched.attempt_ref, make_result(dispatched.head_sha, "ready")))
    assert (signed.status_code, signed.json["outcome"], signed.json["conclusion"]) == (200, "accepted", "success")
    run_outbox(kit, pool, db_url)
    published = check_run(kit, dispatched.check_run_id)
    assert (published["status"], published["conclusion"]) == ("completed", "success")
    assert "API token" not in published["summary"]


def test_opting_in_is_admin_only_and_audited(kit, client, pool, owner, dispatched):
    path = settings_path(kit)
    writer, _ = create_token(pool, kit.repository["id"], scopes=["runs:write"])
    admin, admin_id = create_token(pool, kit.repository["id"], scopes=["admin"])
    assert client.simulate_get(path, headers=bearer(admin)).json["tokenPublishedResults"] is False
    forbidden = client.simulate_put(path, headers=bearer(writer), json={"tokenPublishedResults": True})
    assert (forbidden.status_code, forbidden.json["code"]) == (403, "insufficient_scope")
    for body, code in (({"tokenPublishedResults": "yes"}, "invalid_token_published_results"),):
        invalid = client.simulate_put(path, headers=bearer(admin), json=body)
        assert (invalid.status_code, invalid.json["code"]) == (400, code)
        assert len(invalid.json["message"]) < 120   # a short, escaped prefix at most
    changed = client.simulate_put(path, headers=bearer(admin), json={"tokenPublishedResults": True})
    assert (changed.status_code, changed.json["outcome"], changed.json["tokenPublishedResults"]) == (
        200, "updated", True)
    openapi_response_validator(SETTINGS, "put", 200).validate(changed.json)
    # An unknown property is dropped, as the spec's versioning section says.
    again = client.simulate_put(path, headers=bearer(admin), json={"tokenPublishedResults": True, "x" * 5000: 1})
    assert (again.json["outcome"], again.json["auditEventId"]) == ("unchanged", None)
    [audit] = owner.execute("SELECT * FROM audit_events WHERE event_type = 'repository.settings_changed'").fetchall()
    assert (audit["actor"], audit["item_id"], audit["details"]["tokenPublishedResults"]) == (
        f"token:{admin_id}", str(kit.repository["id"]), True)
    assert str(audit["id"]) == changed.json["auditEventId"]


def test_opted_in_a_token_result_says_so_and_the_signed_one_supersedes_it(kit, client, pool, db_url, owner,
                                                                           dispatched):
    admin, _ = create_token(pool, kit.repository["id"], scopes=["admin"])
    client.simulate_put(settings_path(kit), headers=bearer(admin), json={"tokenPublishedResults": True})
    token, token_id = create_token(pool, kit.repository["id"], scopes=["runs:write"])

    by_token = publish_by_token(client, dispatched, token, readiness="ready")
    assert (by_token.status_code, by_token.json["conclusion"], by_token.json["published"]) == (200, "success", True)
    published = check_run(kit, dispatched.check_run_id)
    assert f"Published with API token `{token_id}`" in published["summary"]
    # The run page says both: the repository accepts token results, and this run was decided by one.
    viewer = Session(pool, [kit.repository["id"]])
    page = client.simulate_get(f"/release-runs/{dispatched.release_run_id}", headers=viewer.headers(csrf=False))
    assert page.status_code == 200
    assert "decided by a result published with a token" in page.text
    assert "this repository accepts token-published results" in page.text

    # The genuine result arrives afterwards: accepted, it decides, and the check run follows it.
    signed = dispatched.post(client, envelope(dispatched.attempt_ref, make_result(
        dispatched.head_sha, "blocked", [finding(1, "error", line=3)])))
    assert signed.status_code == 200, signed.json
    assert (signed.json["outcome"], signed.json["decision"]) == ("accepted", "FAIL")
    rows = owner.execute("SELECT source, superseded_at IS NOT NULL AS superseded FROM run_results ORDER BY id").fetchall()
    assert rows == [{"source": "bearer_result", "superseded": True}, {"source": "workflow_callback", "superseded": False}]
    run = owner.execute("SELECT status, decision, conclusion FROM release_runs").fetchone()
    assert run == {"status": "completed", "decision": "FAIL", "conclusion": "failure"}
    run_outbox(kit, pool, db_url)
    published = check_run(kit, dispatched.check_run_id)
    assert (published["status"], published["conclusion"]) == ("completed", "failure")
    assert "API token" not in published["summary"]
    page = client.simulate_get(f"/release-runs/{dispatched.release_run_id}", headers=viewer.headers(csrf=False))
    assert "decided by a result published with a token" not in page.text
    assert "this repository accepts token-published results" in page.text

    # A token cannot take the decision back, and the signed result is not repeated.
    late = publish_by_token(client, dispatched, token, readiness="ready")
    assert (late.status_code, late.json["code"]) == (409, "result_conflict")

"""POST /api/v1/runs (ingest for the review pages) and POST /api/v1/runs/result
(a release run's result from CI, check run completed before the answer)."""
from __future__ import annotations

import emulator
import pytest
from falcon import testing

from app.web.wsgi import create_app
from contracts import openapi_response_validator
from tests.helpers.access import bearer, create_token, seed_repository
from tests.helpers.service import count
from tests.helpers.host import REPOSITORY, make_hostkit
from tests.helpers.results import DispatchedRun, finding, make_result
from app.host import publication

REPO_ID = 7001


@pytest.fixture
def repo(owner):
    seed_repository(owner, account_id=11, installation_id=21, repository_id=REPO_ID)
    seed_repository(owner, account_id=12, installation_id=22, repository_id=REPO_ID + 1)
    return REPO_ID


def ingest_body(**extra):
    body = make_result("b" * 40, "blocked", [finding(1, "error", line=5), finding(2, "low")])
    body["repositoryId"] = str(REPO_ID)
    body.update(extra)
    return body


def post(client, body, token):
    return client.simulate_post("/api/v1/runs", json=body, headers=bearer(token))


def test_ingest_stores_the_run_and_its_findings(client, owner, pool, repo):
    token, _ = create_token(pool, REPO_ID, scopes=["runs:write"])
    answer = post(client, ingest_body(), token)
    assert answer.status_code == 201, answer.json
    assert answer.json["decision"] == "FAIL" and answer.json["findings"] == 2
    openapi_response_validator("/api/v1/runs", "post", 201).validate(answer.json)
    stored = owner.execute("SELECT * FROM run_results").fetchone()
    assert (stored["source"], stored["repository_id"], stored["release_run_id"]) == ("ingest", REPO_ID, None)
    assert count(owner, "run_findings") == 2
    assert count(owner, "outbox_items") == 0  # no check run is touched


def test_ingest_strips_unknown_properties(client, owner, pool, repo):
    token, _ = create_token(pool, REPO_ID, scopes=["runs:write"])
    body = ingest_body(pipeline={"id": 3}, findings=[finding(1, "medium", line=2, fixHint="x", owner="me")])
    assert post(client, body, token).status_code == 201
    assert count(owner, "run_findings") == 1


@pytest.mark.parametrize("mutate, code", [
    (lambda b: b.update(triggerKind="cron"), "invalid_trigger_kind"),
    (lambda b: b["findings"][0].update(severity="critical"), "invalid_finding_severity"),
    (lambda b: b.update(score=101), "invalid_run_result"),
    (lambda b: b["findings"][0].update(path="../../etc/passwd"), "invalid_run_result"),
    (lambda b: b.pop("repositoryId"), "missing_repository_id"),
    (lambda b: b.update(schemaVersion=2), "invalid_run_result"),
])
def test_ingest_refusals_store_nothing(client, owner, pool, repo, mutate, code):
    token, _ = create_token(pool, REPO_ID, scopes=["runs:write"])
    body = ingest_body()
    mutate(body)
    answer = post(client, body, token)
    assert answer.status_code == 400 and answer.json["code"] == code, answer.json
    assert count(owner, "run_results") == 0


def test_ingest_for_another_repository_is_forbidden(client, owner, pool, repo):
    token, _ = create_token(pool, REPO_ID, scopes=["runs:write"])
    answer = post(client, ingest_body(repositoryId=str(REPO_ID + 1)), token)
    assert answer.status_code == 403 and answer.json["code"] == "repository_mismatch"
    assert count(owner, "run_results") == 0


def test_ingest_needs_runs_write(client, owner, pool, repo):
    token, _ = create_token(pool, REPO_ID, scopes=["reviews:read"])
    answer = post(client, ingest_body(), token)
    assert answer.status_code == 403 and answer.json["code"] == "insufficient_scope"


# -- POST /api/v1/runs/result ---------------------------------------------------

@pytest.fixture
def host():
    with emulator.start() as handle:
        yield handle


def test_bearer_result_completes_the_check_run_before_answering(host, pool, db_url, owner):
    kit = make_hostkit(host)
    client = testing.TestClient(create_app(kit.config, pool))
    run = DispatchedRun(kit, client, pool, db_url, owner)
    # Token-published results decide only where the repository opted in (test_hostile_token_results.py).
    owner.execute("UPDATE repositories SET token_published_results = true WHERE id = %s", (kit.repository["id"],))
    token, _ = create_token(pool, kit.repository["id"], scopes=["runs:write"])
    findings = [finding(i, "high", line=i + 1) for i in range(60)]
    answer = client.simulate_post("/api/v1/runs/result", headers=bearer(token), json={
        "attemptId": run.attempt_ref, "result": make_result(run.head_sha, "blocked", findings)})
    assert answer.status_code == 200, answer.json
    assert (answer.json["decision"], answer.json["conclusion"], answer.json["published"]) == ("FAIL", "failure", True)
    openapi_response_validator("/api/v1/runs/result", "post", 200).validate(answer.json)
    [check_run] = host.check_runs(REPOSITORY)
    assert (check_run["status"], check_run["conclusion"], check_run["annotations_count"]) == (
        "completed", "failure", 60)


def test_bearer_result_for_another_repository_is_refused(host, pool, db_url, owner):
    kit = make_hostkit(host)
    client = testing.TestClient(create_app(kit.config, pool))
    run = DispatchedRun(kit, client, pool, db_url, owner)
    seed_repository(owner, account_id=99, installation_id=98, repository_id=97)
    token, _ = create_token(pool, 97, scopes=["runs:write"])
    answer = client.simulate_post("/api/v1/runs/result", headers=bearer(token), json={
        "attemptId": run.attempt_ref, "result": make_result(run.head_sha)})
    assert answer.status_code == 403 and answer.json["code"] == "repository_mismatch"
    assert count(owner, "run_results") == 0


# -- publication limits ----------------------------------------------------------

def test_long_text_is_truncated_at_a_line_with_a_link():
    findings = [finding(i, "medium", line=i + 1) | {"message": "m" * 400} for i in range(400)]
    result = {"decision": "CONDITIONAL", "readiness": "at-risk", "score": 60, "tool_name": "t", "tool_version": "1",
              "kicad_version": "9", "head_sha": "c" * 40, "findings": findings}
    output = publication.check_run_output(result, "http://svc/release-runs/1")
    assert len(output["text"]) <= 65535
    assert output["text"].endswith("_Truncated: the full list is on the review page: http://svc/release-runs/1_")
    body_lines = output["text"].split("\n\n_Truncated")[0].split("\n")
    assert all(line.startswith("|") and line.endswith("|") for line in body_lines)  # no line cut in the middle
    assert len(output["title"]) <= 255


def test_annotation_title_is_at_most_255_characters():
    [annotation] = publication.annotations([finding(1, "error", line=3, title="t" * 400)])
    assert len(annotation["title"]) == 255

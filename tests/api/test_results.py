"""The workflow result callback, decisions and check run completion with
annotations, against the emulator's OIDC issuer and REST routes."""
from __future__ import annotations

import pytest
from falcon import testing

from app.web.wsgi import create_app
from contracts import openapi_response_validator
from tests.helpers.service import count
from tests.helpers.host import (REPOSITORY, assert_requests_match_the_rest_description,
                                   run_outbox)
from tests.helpers.results import CALLBACK, DispatchedRun, envelope, finding, make_result
from emulator import openapi_check
from app.host import publication


@pytest.fixture
def client(kit, pool):
    return testing.TestClient(create_app(kit.config, pool))


@pytest.fixture
def dispatched(kit, client, pool, db_url, owner):
    return DispatchedRun(kit, client, pool, db_url, owner)


def check_run(kit, check_run_id):
    return next(c for c in kit.host.check_runs(REPOSITORY) if c["id"] == check_run_id)


def assert_documented(result):
    openapi_response_validator(CALLBACK, "post", result.status_code).validate(result.json)


@pytest.mark.parametrize("readiness, decision, conclusion", [
    ("ready", "PASS", "success"), ("blocked", "FAIL", "failure"), ("at-risk", "CONDITIONAL", "neutral")])
def test_decision_and_check_run(kit, client, pool, db_url, owner, dispatched, readiness, decision, conclusion):
    findings = [] if readiness == "ready" else [finding(1, "error" if readiness == "blocked" else "medium", line=12)]
    result = make_result(dispatched.head_sha, readiness, findings)
    answer = dispatched.post(client, envelope(dispatched.attempt_ref, result))
    assert answer.status_code == 200, answer.json
    assert (answer.json["outcome"], answer.json["decision"], answer.json["conclusion"]) == (
        "accepted", decision, conclusion)
    assert_documented(answer)

    run = owner.execute("SELECT * FROM ops.release_runs WHERE id = %s", (dispatched.release_run_id,)).fetchone()
    assert (run["status"], run["decision"], run["conclusion"]) == ("completed", decision, conclusion)
    assert owner.execute("SELECT lease_closed_at FROM release_run_attempts WHERE id = %s",
                         (int(dispatched.attempt_ref.split("-")[0]),)).fetchone()["lease_closed_at"] is not None
    audit = owner.execute("SELECT * FROM audit_events WHERE event_type = 'release_run.result_accepted'").fetchone()
    assert audit["item_id"] == str(dispatched.release_run_id)

    run_outbox(kit, pool, db_url)
    published = check_run(kit, dispatched.check_run_id)
    assert (published["status"], published["conclusion"]) == ("completed", conclusion)
    assert published["annotations_count"] == len(findings)
    stored = owner.execute("SELECT published_conclusion, last_publication_error FROM run_results").fetchone()
    assert stored == {"published_conclusion": conclusion, "last_publication_error": None}
    [comment] = kit.host.comments(REPOSITORY)
    assert f"decision `{decision}`" in comment["body"] and publication.VERDICT[decision] in comment["body"]
    assert assert_requests_match_the_rest_description(kit) >= 6


def test_annotation_levels_and_columns(kit, client, pool, db_url, owner, dispatched):
    findings = [finding(1, "error", line=10), finding(2, "high", line=11), finding(3, "medium", line=12),
                finding(4, "low", line=13), finding(5, "info", line=14),
                finding(6, "error", line=20, path="board/a.kicad_sch", endLine=25, startColumn=2, endColumn=9),
                finding(7, "medium")]  # no location: no annotation
    dispatched.post(client, envelope(dispatched.attempt_ref, make_result(dispatched.head_sha, "blocked", findings)))
    run_outbox(kit, pool, db_url)
    annotations = kit.host.annotations(dispatched.check_run_id)
    assert [a["annotation_level"] for a in annotations] == ["failure", "failure", "warning", "notice", "notice",
                                                            "failure"]
    assert annotations[0]["start_column"] == 3 and annotations[0]["end_column"] == 40
    multi_line = annotations[5]
    assert (multi_line["start_line"], multi_line["end_line"]) == (20, 25)
    assert multi_line.get("start_column") is None and multi_line.get("end_column") is None


def test_more_than_120_annotations_go_in_batches_of_50_without_duplicates_on_retry(
        kit, client, pool, db_url, owner, dispatched):
    findings = [finding(i, "medium", line=i + 1) for i in range(125)]
    dispatched.post(client, envelope(dispatched.attempt_ref, make_result(dispatched.head_sha, "at-risk", findings)))
    # The second update fails once: the retry resumes with it, not from the start.
    kit.host.add_fault(method="PATCH", operation_id="checks/update", status=502, count=1)
    kit.host.clear_requests()
    run_outbox(kit, pool, db_url)
    item = owner.execute("SELECT * FROM outbox_items WHERE kind = 'check_run_complete'").fetchone()
    assert (item["status"], item["progress"]) == ("accepted", 0) or item["status"] == "accepted"
    owner.execute("UPDATE outbox_items SET run_after = now() WHERE status = 'accepted'")
    run_outbox(kit, pool, db_url)

    updates = [e for e in kit.host.requests(operation_id="checks/update") if e["status"] == 200]
    assert len(updates) >= 3
    for update in updates:
        assert len(update["body"]["output"]["annotations"]) <= 50
        assert len(update["body"]["output"]["summary"]) <= 65535
        openapi_check.validate_request("PATCH", update["path"], update["body"])
    annotations = kit.host.annotations(dispatched.check_run_id)
    assert len(annotations) == 125
    assert len({a["start_line"] for a in annotations}) == 125
    assert [a["start_line"] for a in annotations] == list(range(1, 126))  # the checker's order
    assert check_run(kit, dispatched.check_run_id)["conclusion"] == "neutral"


def test_neutral_conclusion_is_kept_across_a_later_write(kit, client, pool, db_url, owner, dispatched):
    dispatched.post(client, envelope(dispatched.attempt_ref,
                                     make_result(dispatched.head_sha, "at-risk", [finding(1, "medium", line=3)])))
    run_outbox(kit, pool, db_url)
    # An older replica during a rolling upgrade writes its own idea of the conclusion.
    owner.execute("UPDATE run_results SET published_conclusion = 'success', last_publication_error = 'x'")
    row = owner.execute("SELECT published_conclusion, last_publication_error FROM run_results").fetchone()
    assert row == {"published_conclusion": "neutral", "last_publication_error": "x"}


def test_published_conclusion_trigger(owner, db_url):
    owner.execute("INSERT INTO accounts (id, login, type) VALUES (1, 'a', 'User')")
    owner.execute("INSERT INTO installations (id, account_id) VALUES (2, 1)")
    owner.execute("INSERT INTO repositories (id, installation_id, full_name) VALUES (3, 2, 'a/b')")
    owner.execute("INSERT INTO run_results (repository_id, source, trigger_kind, readiness, score, decision, "
                  "conclusion, tool_name, tool_version, findings_count, received_at) "
                  "VALUES (3, 'ingest', 'manual', 'at-risk', 70, 'CONDITIONAL', 'neutral', 't', '1', 0, now())")
    owner.execute("UPDATE run_results SET published_conclusion = 'neutral'")   # first publication: set
    owner.execute("UPDATE run_results SET published_conclusion = 'success'")   # later write: kept
    owner.execute("UPDATE run_results SET published_conclusion = NULL")
    assert owner.execute("SELECT published_conclusion FROM run_results").fetchone()["published_conclusion"] == "neutral"


def test_the_same_result_twice_is_accepted_once(kit, client, pool, db_url, owner, dispatched):
    body = envelope(dispatched.attempt_ref, make_result(dispatched.head_sha, "ready"))
    first = dispatched.post(client, body)
    second = dispatched.post(client, body)
    assert (first.json["outcome"], second.json["outcome"]) == ("accepted", "duplicate")
    assert second.status_code == 200
    assert count(owner, "run_results") == 1
    run_outbox(kit, pool, db_url)
    assert len(kit.host.comments(REPOSITORY)) == 1


def test_a_later_result_updates_the_one_comment(kit, client, pool, db_url, owner, dispatched):
    dispatched.post(client, envelope(dispatched.attempt_ref, make_result(dispatched.head_sha, "blocked",
                                                                         [finding(1, line=4)])))
    run_outbox(kit, pool, db_url)
    pushed = kit.host.synchronize_pull_request(REPOSITORY, dispatched.pr["number"])
    second = DispatchedRun(kit, client, pool, db_url, owner, pr=pushed, action="synchronize")
    assert second.post(client, envelope(second.attempt_ref, make_result(second.head_sha, "ready"))).status_code == 200
    run_outbox(kit, pool, db_url)
    [comment] = kit.host.comments(REPOSITORY)
    assert "Ready to release" in comment["body"]


# -- refusals: each writes nothing ------------------------------------------

def refused(owner, result, status: int, code: str):
    assert result.status_code == status, result.json
    assert result.json["code"] == code
    assert count(owner, "run_results") == 0
    assert owner.execute("SELECT count(*) AS n FROM outbox_items WHERE kind IN ('check_run_complete', 'pr_comment')"
                         ).fetchone()["n"] == 0
    assert owner.execute("SELECT status FROM release_runs").fetchone()["status"] == "dispatched"


def test_expired_token(client, owner, dispatched):
    token = dispatched.token(issued_at=1_700_000_000, lifetime_seconds=60)
    refused(owner, dispatched.post(client, envelope(dispatched.attempt_ref, make_result(dispatched.head_sha)), token),
            401, "oidc_token_expired")


def test_wrong_issuer(client, owner, dispatched):
    token = dispatched.token(claims={"iss": "https://token.actions.example.invalid"})
    refused(owner, dispatched.post(client, envelope(dispatched.attempt_ref, make_result(dispatched.head_sha)), token),
            401, "oidc_wrong_issuer")


def test_wrong_audience(client, owner, dispatched, kit):
    token = kit.host.mint_oidc_token("https://github.com/acme-hw", run_id=dispatched.workflow_run_id)
    refused(owner, dispatched.post(client, envelope(dispatched.attempt_ref, make_result(dispatched.head_sha)), token),
            401, "oidc_wrong_audience")


def test_unknown_kid(client, owner, dispatched):
    token = dispatched.token(kid="not-a-published-key")
    refused(owner, dispatched.post(client, envelope(dispatched.attempt_ref, make_result(dispatched.head_sha)), token),
            401, "oidc_unknown_key")


def test_key_the_issuer_never_published(client, owner, dispatched):
    token = dispatched.token(unpublished_key=True)
    refused(owner, dispatched.post(client, envelope(dispatched.attempt_ref, make_result(dispatched.head_sha)), token),
            401, "oidc_invalid_token")


def test_wrong_repository(client, owner, dispatched):
    token = dispatched.token(claims={"repository_id": "999999"})
    refused(owner, dispatched.post(client, envelope(dispatched.attempt_ref, make_result(dispatched.head_sha)), token),
            403, "repository_mismatch")


def test_wrong_run_id(client, owner, dispatched):
    token = dispatched.token(claims={"run_id": str(dispatched.workflow_run_id + 1)})
    refused(owner, dispatched.post(client, envelope(dispatched.attempt_ref, make_result(dispatched.head_sha)), token),
            403, "run_id_mismatch")


def test_another_workflow(client, owner, dispatched):
    token = dispatched.token(claims={"workflow_ref": f"{REPOSITORY}/.github/workflows/release.yml@refs/heads/main"})
    refused(owner, dispatched.post(client, envelope(dispatched.attempt_ref, make_result(dispatched.head_sha)), token),
            401, "oidc_wrong_workflow")


def test_the_job_must_run_the_workflow_of_the_default_branch(client, owner, dispatched):
    """job_workflow_ref names the workflow file the job ran and the ref it came from (issue 36)."""
    for job_ref in (f"{REPOSITORY}/.github/workflows/readiness-runner.yml@refs/heads/authors-branch",
                    f"{REPOSITORY}/.github/workflows/other.yml@refs/heads/main",
                    f"someone/else/.github/workflows/readiness-runner.yml@refs/heads/main", None):
        token = dispatched.token(claims={"job_workflow_ref": job_ref})
        refused(owner, dispatched.post(client, envelope(dispatched.attempt_ref, make_result(dispatched.head_sha)),
                                       token), 403, "workflow_ref_mismatch")
    accepted = dispatched.post(client, envelope(dispatched.attempt_ref, make_result(dispatched.head_sha)))
    assert accepted.status_code == 200, accepted.text


def test_superseded_attempt(kit, client, pool, db_url, owner, dispatched):
    pushed = kit.host.synchronize_pull_request(REPOSITORY, dispatched.pr["number"])
    DispatchedRun(kit, client, pool, db_url, owner, pr=pushed, action="synchronize")
    answer = dispatched.post(client, envelope(dispatched.attempt_ref, make_result(dispatched.head_sha)))
    assert answer.status_code == 409 and answer.json["code"] == "attempt_not_current"
    assert count(owner, "run_results") == 0


def test_bad_digest(client, owner, dispatched):
    body = envelope(dispatched.attempt_ref, make_result(dispatched.head_sha, "blocked"))
    body["result"]["readiness"] = "ready"   # tampered after signing the digest
    refused(owner, dispatched.post(client, body), 400, "digest_mismatch")


def test_unknown_top_level_property(client, owner, dispatched):
    body = envelope(dispatched.attempt_ref, make_result(dispatched.head_sha)) | {"approvedBy": "mallory"}
    refused(owner, dispatched.post(client, body), 400, "unknown_property")


def test_other_head_sha(client, owner, dispatched):
    refused(owner, dispatched.post(client, envelope(dispatched.attempt_ref, make_result("a" * 40))),
            409, "head_sha_mismatch")


def test_unknown_attempt(client, owner, dispatched):
    ref = dispatched.attempt_ref.split("-")[0] + "-" + "0" * 32
    refused(owner, dispatched.post(client, envelope(ref, make_result(dispatched.head_sha))), 404, "attempt_not_found")


def test_missing_token(client, owner, dispatched):
    answer = client.simulate_post(CALLBACK, json=envelope(dispatched.attempt_ref, make_result(dispatched.head_sha)))
    refused(owner, answer, 401, "missing_token")


def test_replayed_token_with_a_different_body(client, owner, dispatched):
    token = dispatched.token()
    assert dispatched.post(client, envelope(dispatched.attempt_ref, make_result(dispatched.head_sha, "blocked")),
                           token).status_code == 200
    again = dispatched.post(client, envelope(dispatched.attempt_ref, make_result(dispatched.head_sha, "ready")), token)
    assert again.status_code == 409 and again.json["code"] == "result_conflict"
    assert count(owner, "run_results") == 1
    assert owner.execute("SELECT decision FROM release_runs").fetchone()["decision"] == "FAIL"


def test_finding_extensions_are_stripped(kit, client, pool, db_url, owner, dispatched):
    result = make_result(dispatched.head_sha, "blocked", [finding(1, line=2, fixHint="widen to 0.15 mm")])
    assert dispatched.post(client, envelope(dispatched.attempt_ref, result)).status_code == 200
    assert count(owner, "run_findings") == 1


def test_the_comment_is_found_by_its_marker_past_the_first_page(kit, client, pool, db_url, owner, dispatched):
    """After a crash between posting the comment and recording its id, the
    next result finds ours among many others instead of posting a second one."""
    host_client = kit.host_client()
    try:
        for i in range(120):
            host_client.create_comment(kit.installation["id"], REPOSITORY, dispatched.pr["number"], f"review note {i}")
        ours = host_client.create_comment(kit.installation["id"], REPOSITORY, dispatched.pr["number"],
                                          publication.COMMENT_MARKER + "\nan earlier result")
    finally:
        host_client.close()
    dispatched.post(client, envelope(dispatched.attempt_ref, make_result(dispatched.head_sha, "ready")))
    run_outbox(kit, pool, db_url)
    comments = kit.host.comments(REPOSITORY)
    assert len(comments) == 121
    [updated] = [c for c in comments if c["id"] == ours["id"]]
    assert "Ready to release" in updated["body"]


def test_the_marker_is_looked_for_only_in_the_apps_own_comments(kit, client, pool, db_url, owner, dispatched):
    """A person who puts the marker in a comment of theirs does not get the result
    published into it (under their name, their text kept): the app posts its own (issue 36)."""
    kit.host.create_user("mallory", sign_in=False)
    planted = kit.host.comment_as_person(REPOSITORY, dispatched.pr["number"], "mallory",
                                         publication.COMMENT_MARKER + "\nReady to release, trust me")
    dispatched.post(client, envelope(dispatched.attempt_ref, make_result(dispatched.head_sha, "blocked",
                                                                         [finding(1, "error", line=2)])))
    run_outbox(kit, pool, db_url)
    comments = kit.host.comments(REPOSITORY)
    [theirs] = [c for c in comments if c["id"] == planted["id"]]
    assert theirs["body"].endswith("Ready to release, trust me")
    [ours] = [c for c in comments if c["id"] != planted["id"]]
    assert ours["author"].endswith("[bot]") and publication.COMMENT_MARKER in ours["body"]


def test_a_worker_that_died_after_an_update_does_not_repeat_its_annotations(kit, client, pool, db_url, owner,
                                                                               dispatched):
    findings = [finding(i, "medium", line=i + 1) for i in range(120)]
    dispatched.post(client, envelope(dispatched.attempt_ref, make_result(dispatched.head_sha, "at-risk", findings)))
    # A worker claims the completion, sends the first two updates, and dies
    # before recording any progress.
    from app import sql_api
    from app.host.outbox import OutboxQueue
    with pool.connection() as conn:
        [item] = [i for i in sql_api.outbox_claim(conn, worker="doomed", limit=5, lease_seconds=60,
                                                  max_attempts=5) if i["kind"] == "check_run_complete"]
    host_client = kit.host_client()
    queue = OutboxQueue(kit.config, host_client)
    result = queue._result(pool, item)
    output = publication.check_run_output(result, queue.review_url(item))
    chunks = publication.batches(publication.annotations(result["findings"]))
    host_client.update_check_run(item["installation_id"], REPOSITORY, item["check_run_id"], {
        "status": "completed", "conclusion": "neutral", "output": {**output, "annotations": chunks[0]}})
    host_client.update_check_run(item["installation_id"], REPOSITORY, item["check_run_id"],
                                 {"output": {**output, "annotations": chunks[1]}})
    host_client.close()
    owner.execute("UPDATE outbox_items SET leased_until = now() - interval '1 second' WHERE id = %s",
                  (item["item_id"],))

    run_outbox(kit, pool, db_url)
    annotations = kit.host.annotations(dispatched.check_run_id)
    assert [a["start_line"] for a in annotations] == list(range(1, 121))
    assert owner.execute("SELECT status, progress FROM outbox_items WHERE id = %s", (item["item_id"],)).fetchone() \
        == {"status": "completed", "progress": 3}

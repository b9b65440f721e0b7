"""Reviews, approvals and the release decision: the review opened with the
result, self-approval refused and break-glass, idempotent repeats, the
decision table, check run updates through the outbox, and every refusal."""
from __future__ import annotations

import pytest

from contracts import openapi_response_validator
from tests.helpers.access import bearer, create_token
from tests.helpers.service import count
from tests.helpers.sessions import (AUTHOR_ID, Session, decided_run, decision_items, finding, publish_completion,
                                      seed_repositories)

APPROVALS = "/api/v1/reviews/{id}/approvals"


def validate(path: str, method: str, response) -> None:
    openapi_response_validator(path, method, response.status_code).validate(response.json)


def approve(client, session_or_token, review_id, status="approved", **extra):
    headers = session_or_token.headers() if isinstance(session_or_token, Session) else bearer(session_or_token)
    response = client.simulate_post(APPROVALS.format(id=review_id), json={"status": status, **extra},
                                    headers=headers)
    if response.status_code < 500:
        validate(APPROVALS, "post", response)
    return response


@pytest.fixture
def repos(owner):
    return seed_repositories(owner, 2)


def test_a_review_opens_with_the_result_created_by_the_pull_request_author(owner, pool, repos):
    run = decided_run(owner, pool, repos[0])
    review = owner.execute("SELECT * FROM reviews WHERE id = %s", (run["review_id"],)).fetchone()
    assert review["created_by"] == f"host-user:{AUTHOR_ID}" and review["decision"] == "pending"
    no_author = decided_run(owner, pool, repos[0], pr_number=2, author_id=None)
    assert owner.execute("SELECT created_by FROM reviews WHERE id = %s",
                         (no_author["review_id"],)).fetchone()["created_by"] == "system"
    audit = owner.execute("SELECT actor FROM audit_events WHERE event_type = 'release_run.result_accepted'").fetchall()
    assert {a["actor"] for a in audit} == {"system"}


def test_approval_by_another_viewer_turns_an_at_risk_run_to_pass_and_updates_the_check_run(client, owner, pool, repos):
    run = decided_run(owner, pool, repos[0], findings=[finding(1, "medium")])
    assert owner.execute("SELECT decision FROM release_runs WHERE id = %s", (run["id"],)).fetchone()["decision"] == "CONDITIONAL"
    reviewer = Session(pool, repos)
    response = approve(client, reviewer, run["review_id"])
    assert response.status_code == 201, response.json
    body = response.json
    assert body["outcome"] == "recorded" and body["approval"]["approverId"] == reviewer.actor
    assert body["review"]["decision"] == "approved" and body["releaseRun"]["decision"] == "PASS"
    items = decision_items(owner, run["id"])
    assert [i["status"] for i in items] == ["accepted"]
    # The first publication stays as it was.
    assert owner.execute("SELECT published_conclusion FROM run_results WHERE release_run_id = %s",
                         (run["id"],)).fetchone()["published_conclusion"] == "neutral"
    again = approve(client, reviewer, run["review_id"])
    assert again.status_code == 200 and again.json["outcome"] == "already_applied"
    assert again.json["approval"]["id"] == body["approval"]["id"]
    assert len(decision_items(owner, run["id"])) == 1
    assert count(owner, "review_approvals") == 1
    events = owner.execute("SELECT event_type, actor FROM audit_events WHERE item_type = 'review'").fetchall()
    assert events == [{"event_type": "review.approval_recorded", "actor": reviewer.actor}]


def test_the_author_cannot_approve_without_break_glass(client, owner, pool, repos):
    run = decided_run(owner, pool, repos[0])
    author = Session(pool, repos, viewer_id=AUTHOR_ID, login="author")
    refused = approve(client, author, run["review_id"])
    assert refused.status_code == 409 and refused.json["code"] == "self_approval_not_allowed"
    assert count(owner, "review_approvals") == 0
    short = approve(client, author, run["review_id"], breakGlass=True, reason="too short")
    assert short.status_code == 400 and short.json["code"] == "invalid_break_glass_reason"
    # Changes requested by the author are never blocked.
    changes = approve(client, author, run["review_id"], status="changes_requested")
    assert changes.status_code == 201 and changes.json["releaseRun"]["decision"] == "FAIL"
    glass = approve(client, author, run["review_id"], breakGlass=True, reason="hotfix for the fab deadline")
    assert glass.status_code == 201 and glass.json["approval"]["breakGlass"] is True
    stored = owner.execute("SELECT break_glass, break_glass_reason, status FROM review_approvals").fetchone()
    assert stored == {"break_glass": True, "break_glass_reason": "hotfix for the fab deadline", "status": "approved"}
    audit = owner.execute("SELECT actor, details FROM audit_events WHERE event_type = 'control_plane.review_break_glass'"
                          ).fetchall()
    assert len(audit) == 1 and audit[0]["actor"] == author.actor
    assert "hotfix" not in str(audit[0]["details"])


def test_a_bearer_token_with_no_person_behind_it_never_approves(client, owner, pool, repos):
    run = decided_run(owner, pool, repos[0])
    value, token_id = create_token(pool, repos[0], scopes=["reviews:write"])
    response = approve(client, value, run["review_id"])
    assert response.status_code == 403 and response.json["code"] == "person_required"
    assert count(owner, "review_approvals") == 0
    read_only, _ = create_token(pool, repos[0], scopes=["reviews:read"])
    assert approve(client, read_only, run["review_id"]).json["code"] == "insufficient_scope"


def test_changes_requested_wins_over_approvals(client, owner, pool, repos):
    run = decided_run(owner, pool, repos[0])
    approve(client, Session(pool, repos, viewer_id=1), run["review_id"])
    other = Session(pool, repos, viewer_id=2)
    assert approve(client, other, run["review_id"], status="changes_requested").json["review"]["decision"] == \
        "changes_requested"
    assert approve(client, other, run["review_id"]).json["releaseRun"]["decision"] == "PASS"


def test_another_installations_review_is_404_and_nothing_is_disclosed(client, owner, pool, repos):
    run = decided_run(owner, pool, repos[0])
    outsider = Session(pool, [repos[1]])
    for review_id in (run["review_id"], 999_999_999, "abc", "0"):
        response = approve(client, outsider, review_id)
        assert response.status_code == 404 and response.json["code"] == "not_found", review_id
    other_repo_token, _ = create_token(pool, repos[1], scopes=["reviews:write"])
    assert approve(client, other_repo_token, run["review_id"]).status_code == 404
    assert count(owner, "review_approvals") == 0


@pytest.mark.parametrize("body, code", [
    ({"status": "yes"}, "invalid_status"),
    ({}, "invalid_status"),
    ({"status": "approved", "breakGlass": "true", "reason": "x" * 20}, "invalid_break_glass"),
    ({"status": "approved", "reason": "x" * 20}, "invalid_break_glass_reason"),
    ({"status": "approved", "breakGlass": True, "reason": "x" * 1001}, "invalid_break_glass_reason"),
])
def test_bad_approval_bodies_are_refused_and_store_nothing(client, owner, pool, repos, body, code):
    run = decided_run(owner, pool, repos[0])
    response = client.simulate_post(APPROVALS.format(id=run["review_id"]), json=body,
                                    headers=Session(pool, repos).headers())
    assert response.status_code == 400 and response.json["code"] == code
    assert count(owner, "review_approvals") == 0


def test_an_approver_in_the_body_is_dropped_never_believed(client, owner, pool, repos):
    run = decided_run(owner, pool, repos[0])
    session = Session(pool, repos)
    response = client.simulate_post(APPROVALS.format(id=run["review_id"]),
                                    json={"status": "approved", "approverId": "host-user:1"}, headers=session.headers())
    assert response.status_code == 201 and response.json["approval"]["approverId"] == session.actor
    assert [r["approver_id"] for r in owner.execute("SELECT approver_id FROM review_approvals")] == [session.actor]


def test_csrf_is_required_for_a_session_approval(client, owner, pool, repos):
    run = decided_run(owner, pool, repos[0])
    session = Session(pool, repos)
    for csrf in (False, "wrong-token", Session(pool, repos).csrf):
        response = client.simulate_post(APPROVALS.format(id=run["review_id"]), json={"status": "approved"},
                                        headers=session.headers(csrf=csrf))
        assert response.status_code == 403 and response.json["code"] == "csrf_failed"
        validate(APPROVALS, "post", response)
    assert count(owner, "review_approvals") == 0


def test_decision_updates_wait_for_the_first_completion(client, owner, pool, repos):
    run = decided_run(owner, pool, repos[0], published=False)
    approve(client, Session(pool, repos), run["review_id"])
    assert decision_items(owner, run["id"]) == []  # the completion is still to be sent
    publish_completion(owner, pool, run["id"])
    assert [i["status"] for i in decision_items(owner, run["id"])] == ["accepted"]


def test_a_run_that_is_no_longer_current_gets_no_check_run_update(client, owner, pool, repos):
    run = decided_run(owner, pool, repos[0])
    decided_run(owner, pool, repos[0], head_sha="b" * 40, published=False)  # a newer head of the same pull request
    response = approve(client, Session(pool, repos), run["review_id"])
    assert response.json["releaseRun"]["decision"] == "PASS"
    assert decision_items(owner, run["id"]) == []


@pytest.mark.parametrize("readiness, review, blocking, unwaived, expected", [
    ("PASS", "pending", 0, 0, "PASS"),
    ("PASS", "changes_requested", 0, 0, "FAIL"),
    ("PASS", "pending", 1, 1, "FAIL"),
    ("CONDITIONAL", "pending", 0, 0, "CONDITIONAL"),
    ("CONDITIONAL", "approved", 0, 0, "PASS"),
    ("CONDITIONAL", "changes_requested", 0, 0, "FAIL"),
    ("FAIL", "pending", 2, 1, "FAIL"),
    ("FAIL", "approved", 2, 1, "FAIL"),
    ("FAIL", "pending", 2, 0, "CONDITIONAL"),
    ("FAIL", "approved", 2, 0, "PASS"),
    ("FAIL", "approved", 0, 0, "FAIL"),
    ("UNKNOWN", "approved", 0, 0, "UNKNOWN"),
])
def test_the_decision_table(owner, readiness, review, blocking, unwaived, expected):
    row = owner.execute("SELECT boardready_private.release_decision(%s, %s, %s, %s) AS d", (readiness, review, blocking, unwaived))
    assert row.fetchone()["d"] == expected

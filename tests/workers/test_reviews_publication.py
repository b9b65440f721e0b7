"""A decision change reaches the check run through the outbox, against the
emulator: an at-risk run approved turns from neutral to success, changes
requested turn it to failure, a waiver of the blocking finding to neutral;
the first published conclusion stays stored; the review's creator is the
pull request's author from the webhook."""
from __future__ import annotations

import json
import uuid

import pytest
from falcon import testing

from app.web.wsgi import create_app
from tests.helpers.service import post_webhook
from tests.helpers.host import REPOSITORY, assert_requests_match_the_rest_description, run_outbox
from tests.helpers.results import DispatchedRun, envelope, finding, make_result
from tests.helpers.sessions import Session

AUTHOR = {"id": 9_100_001, "login": "octo-author"}


@pytest.fixture
def client(kit, pool):
    """The service configured for the emulator (conftest's host and kit)."""
    return testing.TestClient(create_app(kit.config, pool))


class AuthoredKit:
    """The kit's pull request webhooks with the author the code host sends (pull_request.user)."""

    def __init__(self, kit):
        self.kit = kit

    def __getattr__(self, name):
        return getattr(self.kit, name)

    def deliver_pull_request(self, client, pr, action="opened"):
        payload = self.kit.pull_request_payload(pr, action)
        payload["pull_request"]["user"] = {"id": AUTHOR["id"], "login": AUTHOR["login"], "type": "User"}
        answer = post_webhook(client, json.dumps(payload).encode(), "pull_request", delivery_id=str(uuid.uuid4()))
        assert answer.status_code == 202, answer.json


def decided(kit, client, pool, db_url, owner, readiness, findings):
    run = DispatchedRun(AuthoredKit(kit), client, pool, db_url, owner)
    answer = run.post(client, envelope(run.attempt_ref, make_result(run.head_sha, readiness, findings)))
    assert answer.status_code == 200, answer.json
    run_outbox(kit, pool, db_url)
    return run


def check_run(kit, run) -> dict:
    return next(c for c in kit.host.check_runs(REPOSITORY) if c["id"] == run.check_run_id)


def review_id(owner, run) -> int:
    return owner.execute("SELECT id FROM reviews WHERE release_run_id = %s", (run.release_run_id,)).fetchone()["id"]


def test_approval_turns_the_check_run_from_neutral_to_success(kit, client, pool, db_url, owner):
    run = decided(kit, client, pool, db_url, owner, "at-risk", [finding(1, "medium", line=4)])
    assert check_run(kit, run)["conclusion"] == "neutral"
    assert owner.execute("SELECT created_by FROM reviews").fetchone()["created_by"] == f"host-user:{AUTHOR['id']}"
    repository_id = kit.repository["id"]

    # The author may not approve; another person may.
    author = Session(pool, [repository_id], viewer_id=AUTHOR["id"], login=AUTHOR["login"])
    refused = client.simulate_post(f"/api/v1/reviews/{review_id(owner, run)}/approvals", json={"status": "approved"},
                                   headers=author.headers())
    assert refused.status_code == 409 and refused.json["code"] == "self_approval_not_allowed"
    reviewer = Session(pool, [repository_id], viewer_id=9_100_002, login="reviewer")
    approved = client.simulate_post(f"/api/v1/reviews/{review_id(owner, run)}/approvals",
                                    json={"status": "approved"}, headers=reviewer.headers())
    assert approved.status_code == 201 and approved.json["releaseRun"]["decision"] == "PASS"
    run_outbox(kit, pool, db_url)
    updated = check_run(kit, run)
    assert (updated["status"], updated["conclusion"]) == ("completed", "success")
    assert "review: approved" in updated["title"] and updated["annotations_count"] == 1
    stored = owner.execute("SELECT published_conclusion FROM run_results").fetchone()
    assert stored["published_conclusion"] == "neutral"  # the first publication, kept as it was
    assert owner.execute("SELECT published_decision FROM release_runs").fetchone()["published_decision"] == "PASS"

    # Someone requests changes: failure.
    other = Session(pool, [repository_id], viewer_id=9_100_003, login="other")
    client.simulate_post(f"/api/v1/reviews/{review_id(owner, run)}/approvals",
                         json={"status": "changes_requested"}, headers=other.headers())
    run_outbox(kit, pool, db_url)
    assert check_run(kit, run)["conclusion"] == "failure"
    assert assert_requests_match_the_rest_description(kit) >= 6


def test_a_waiver_of_the_blocking_finding_turns_failure_to_neutral(kit, client, pool, db_url, owner):
    blocking = finding(1, "error", line=7)
    run = decided(kit, client, pool, db_url, owner, "blocked", [blocking])
    assert check_run(kit, run)["conclusion"] == "failure"
    session = Session(pool, [kit.repository["id"]])
    made = client.simulate_post(f"/api/v1/repositories/{kit.repository['id']}/waivers",
                                json={"fingerprint": blocking["fingerprint"], "reason": "false positive: net tie"},
                                headers=session.headers())
    assert made.status_code == 201
    run_outbox(kit, pool, db_url)
    assert check_run(kit, run)["conclusion"] == "neutral"
    items = owner.execute("SELECT kind, status, outcome FROM outbox_items WHERE kind = 'check_run_decision'").fetchall()
    assert items == [{"kind": "check_run_decision", "status": "completed", "outcome": "decision_published"}]


def test_an_approval_before_the_completion_is_published_after_it(kit, client, pool, db_url, owner):
    run = DispatchedRun(AuthoredKit(kit), client, pool, db_url, owner)
    answer = run.post(client, envelope(run.attempt_ref, make_result(run.head_sha, "at-risk",
                                                                    [finding(1, "low", line=2)])))
    assert answer.status_code == 200
    reviewer = Session(pool, [kit.repository["id"]], viewer_id=9_100_002)
    approved = client.simulate_post(f"/api/v1/reviews/{review_id(owner, run)}/approvals",
                                    json={"status": "approved"}, headers=reviewer.headers())
    assert approved.json["releaseRun"]["decision"] == "PASS"
    run_outbox(kit, pool, db_url)  # the completion (neutral), then the decision update it queued
    assert check_run(kit, run)["conclusion"] == "success"
    assert owner.execute("SELECT published_conclusion FROM run_results").fetchone()["published_conclusion"] == "neutral"

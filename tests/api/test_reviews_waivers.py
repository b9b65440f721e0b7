"""Waivers: create, list, delete; a waived finding still shows, marked, and
no longer counts toward the decision of this and later runs until it expires
or is deleted; expiry recomputes the decision on time; every refusal."""
from __future__ import annotations

import datetime as dt

import pytest

from contracts import openapi_response_validator
from tests.helpers.access import bearer, create_token
from tests.helpers.service import count
from tests.helpers.sessions import Session, decided_run, decision_items, finding, seed_repositories

WAIVERS = "/api/v1/repositories/{repositoryId}/waivers"
BLOCKING = finding(0, "high")


def path(repository_id) -> str:
    return WAIVERS.format(repositoryId=repository_id)


def validate(method: str, response) -> None:
    openapi_response_validator(WAIVERS, method, response.status_code).validate(response.json)


def waive(client, session, repository_id, **body):
    response = client.simulate_post(path(repository_id), json={"fingerprint": BLOCKING["fingerprint"],
                                                               "reason": "accepted by the layout review", **body},
                                    headers=session.headers())
    if response.status_code < 500:
        validate("post", response)
    return response


def decision(owner, run) -> str:
    return owner.execute("SELECT decision FROM release_runs WHERE id = %s", (run["id"],)).fetchone()["decision"]


@pytest.fixture
def repos(owner):
    return seed_repositories(owner, 2)


def test_a_waiver_turns_a_blocked_run_conditional_and_marks_the_finding(client, owner, pool, repos):
    run = decided_run(owner, pool, repos[0], readiness="blocked", findings=[BLOCKING, finding(1, "medium")])
    assert decision(owner, run) == "FAIL"
    session = Session(pool, repos)
    created = waive(client, session, repos[0])
    assert created.status_code == 201, created.json
    assert created.json["decisionsChanged"] == 1 and created.json["waiver"]["createdBy"] == session.actor
    assert decision(owner, run) == "CONDITIONAL"
    assert len(decision_items(owner, run["id"])) == 1  # the check run goes from failure to neutral
    findings = client.simulate_get(f"/api/v1/runs/{run['id']}/findings", headers=session.headers()).json["items"]
    assert [(f["severity"], f["waived"]) for f in findings] == [("high", True), ("medium", False)]
    assert findings[0]["waiverId"] == created.json["waiver"]["id"]
    only_waived = client.simulate_get(f"/api/v1/runs/{run['id']}/findings", params={"waived": "true"},
                                      headers=session.headers()).json["items"]
    assert [f["fingerprint"] for f in only_waived] == [BLOCKING["fingerprint"]]
    detail = client.simulate_get(f"/api/v1/runs/{run['id']}", headers=session.headers()).json
    assert detail["decision"] == "CONDITIONAL" and detail["counts"]["waived"] == 1
    assert detail["counts"]["unwaivedBlocking"] == 0
    # An approval on top makes it PASS.
    approved = client.simulate_post(f"/api/v1/reviews/{run['review_id']}/approvals", json={"status": "approved"},
                                    headers=session.headers())
    assert approved.json["releaseRun"]["decision"] == "PASS"


def test_later_runs_of_the_repository_start_with_the_waiver(client, owner, pool, repos):
    session = Session(pool, repos)
    assert waive(client, session, repos[0]).status_code == 201
    later = decided_run(owner, pool, repos[0], pr_number=7, readiness="blocked", findings=[BLOCKING])
    assert decision(owner, later) == "CONDITIONAL"
    elsewhere = decided_run(owner, pool, repos[1], readiness="blocked", findings=[BLOCKING])
    assert decision(owner, elsewhere) == "FAIL"  # waivers are per repository


def test_deleting_a_waiver_makes_the_finding_count_again(client, owner, pool, repos):
    run = decided_run(owner, pool, repos[0], readiness="blocked", findings=[BLOCKING])
    session = Session(pool, repos)
    waiver_id = waive(client, session, repos[0]).json["waiver"]["id"]
    listed = client.simulate_get(path(repos[0]), headers=session.headers())
    validate("get", listed)
    assert [w["id"] for w in listed.json["items"]] == [waiver_id]
    deleted = client.simulate_delete(path(repos[0]), params={"waiverId": waiver_id}, headers=session.headers())
    assert deleted.status_code == 200 and deleted.json["outcome"] == "deleted"
    validate("delete", deleted)
    assert decision(owner, run) == "FAIL"
    again = client.simulate_delete(path(repos[0]), params={"waiverId": waiver_id}, headers=session.headers())
    assert again.json["outcome"] == "already_deleted"
    assert client.simulate_get(path(repos[0]), headers=session.headers()).json["items"] == []
    kinds = [e["event_type"] for e in owner.execute("SELECT event_type FROM audit_events WHERE item_type = 'waiver' "
                                                    "ORDER BY occurred_at").fetchall()]
    assert kinds == ["review.waiver_created", "review.waiver_deleted"]
    # The fingerprint may be waived again.
    assert waive(client, session, repos[0]).status_code == 201


def test_an_expiring_waiver_queues_the_recomputation_for_its_expiry(client, owner, pool, repos):
    run = decided_run(owner, pool, repos[0], readiness="blocked", findings=[BLOCKING])
    expires = (dt.datetime.now(dt.timezone.utc) + dt.timedelta(hours=2)).replace(microsecond=0)
    created = waive(client, Session(pool, repos), repos[0], expiresAt=expires.isoformat())
    assert created.status_code == 201 and created.json["waiver"]["expiresAt"] == expires.isoformat().replace(
        "+00:00", "Z")
    items = decision_items(owner, run["id"])
    assert sorted(i["run_after"] for i in items)[-1] == expires
    # At the expiry, the recomputation finds the finding counting again.
    row = owner.execute("SELECT * FROM boardready_private.release_decision_refresh(%s, %s)",
                        (run["id"], expires + dt.timedelta(seconds=1))).fetchone()
    assert (row["decision"], row["changed"]) == ("FAIL", True)
    # An expired waiver is shown as such and may be replaced.
    owner.execute("UPDATE waivers SET expires_at = now() - interval '1 second'")
    listed = client.simulate_get(path(repos[0]), headers=Session(pool, repos).headers()).json["items"]
    assert listed[0]["standing"] is False
    assert waive(client, Session(pool, repos), repos[0]).status_code == 201
    assert owner.execute("SELECT count(*) AS n FROM waivers WHERE deleted_at IS NULL").fetchone()["n"] == 1


def test_a_standing_waiver_for_the_fingerprint_is_a_conflict(client, owner, pool, repos):
    session = Session(pool, repos)
    assert waive(client, session, repos[0]).status_code == 201
    again = waive(client, session, repos[0])
    assert again.status_code == 409 and again.json["code"] == "waiver_exists"
    assert count(owner, "waivers") == 1


def test_a_check_incomplete_finding_is_never_waived(client, owner, pool, repos):
    # checker.rule-failed: a rule did not run. The checker refuses to let .boardready.toml lower it;
    # a reviewer cannot waive it either, in this run or any later one.
    incomplete = {**finding(2, "error"), "ruleId": "checker.rule-failed"}
    run = decided_run(owner, pool, repos[0], readiness="blocked", findings=[incomplete])
    refused = waive(client, Session(pool, repos), repos[0], fingerprint=incomplete["fingerprint"])
    assert refused.status_code == 409 and refused.json["code"] == "finding_not_waivable"
    assert count(owner, "waivers") == 0 and decision(owner, run) == "FAIL"
    elsewhere = waive(client, Session(pool, repos), repos[1], fingerprint=incomplete["fingerprint"])
    assert elsewhere.status_code == 201      # another repository's runs never reported it


def test_bearer_tokens_need_the_review_scopes_of_the_repository(client, owner, pool, repos):
    writer, token_id = create_token(pool, repos[0], scopes=["reviews:write"])
    made = client.simulate_post(path(repos[0]), json={"fingerprint": "abc", "reason": "known issue"},
                                headers=bearer(writer))
    # A token with no person behind it never waives (issue 36): only people decide.
    assert made.status_code == 403 and made.json["code"] == "person_required"
    reader, _ = create_token(pool, repos[0], scopes=["reviews:read"])
    assert client.simulate_get(path(repos[0]), headers=bearer(reader)).status_code == 200
    refused = client.simulate_post(path(repos[0]), json={"fingerprint": "abd", "reason": "x"}, headers=bearer(reader))
    assert refused.status_code == 403 and refused.json["code"] == "insufficient_scope"
    runs_only, _ = create_token(pool, repos[0], scopes=["runs:write"])
    assert client.simulate_get(path(repos[0]), headers=bearer(runs_only)).json["code"] == "insufficient_scope"


def test_another_tenants_repository_and_waivers_are_404(client, owner, pool, repos):
    session = Session(pool, repos)
    waiver_id = waive(client, session, repos[0]).json["waiver"]["id"]
    outsider = Session(pool, [repos[1]])
    for response in (client.simulate_get(path(repos[0]), headers=outsider.headers()),
                     waive(client, outsider, repos[0]),
                     client.simulate_delete(path(repos[0]), params={"waiverId": waiver_id}, headers=outsider.headers()),
                     client.simulate_delete(path(repos[1]), params={"waiverId": waiver_id}, headers=outsider.headers()),
                     client.simulate_get(path("nope"), headers=outsider.headers()),
                     client.simulate_get(path(999_999), headers=outsider.headers())):
        assert response.status_code == 404 and response.json["code"] == "not_found"
    other_token, _ = create_token(pool, repos[1], scopes=["reviews:write", "reviews:read"])
    assert client.simulate_get(path(repos[0]), headers=bearer(other_token)).status_code == 404
    assert waive(client, type("T", (), {"headers": lambda self, csrf=True: bearer(other_token)})(),
                 repos[0]).status_code == 404
    assert owner.execute("SELECT deleted_at FROM waivers").fetchone()["deleted_at"] is None


@pytest.mark.parametrize("body, code", [
    ({"fingerprint": "has space", "reason": "r"}, "invalid_fingerprint"),
    ({"fingerprint": "", "reason": "r"}, "invalid_fingerprint"),
    ({"fingerprint": 5, "reason": "r"}, "invalid_fingerprint"),
    ({"fingerprint": "f" * 201, "reason": "r"}, "invalid_fingerprint"),
    ({"fingerprint": "abc", "reason": "   "}, "invalid_reason"),
    ({"fingerprint": "abc"}, "invalid_reason"),
    ({"fingerprint": "abc", "reason": "r" * 1001}, "invalid_reason"),
    ({"fingerprint": "abc", "reason": "r", "expiresAt": "2001-01-01T00:00:00Z"}, "invalid_expires_at"),
    ({"fingerprint": "abc", "reason": "r", "expiresAt": "2099-01-01T00:00:00"}, "invalid_expires_at"),
    ({"fingerprint": "abc", "reason": "r", "expiresAt": "tomorrow"}, "invalid_expires_at"),
    ({"fingerprint": "abc", "reason": "r", "expiresAt": "9999-12-31T23:59:59-14:00"}, "invalid_expires_at"),
    ({"fingerprint": "abc", "reason": "r", "expiresAt": "2099-01-01T00:00:00Z"}, "invalid_expires_at"),
])
def test_bad_waiver_bodies_store_nothing(client, owner, pool, repos, body, code):
    response = client.simulate_post(path(repos[0]), json=body, headers=Session(pool, repos).headers())
    assert response.status_code == 400 and response.json["code"] == code
    validate("post", response)
    assert count(owner, "waivers") == 0


def test_waiver_requests_need_csrf_with_a_session(client, owner, pool, repos):
    session = Session(pool, repos)
    response = client.simulate_post(path(repos[0]), json={"fingerprint": "abc", "reason": "r"},
                                    headers=session.headers(csrf=False))
    assert response.status_code == 403 and response.json["code"] == "csrf_failed"
    bad_id = client.simulate_delete(path(repos[0]), params={"waiverId": "x"}, headers=session.headers())
    assert bad_id.status_code == 400 and bad_id.json["code"] == "invalid_waiver_id"
    assert count(owner, "waivers") == 0

"""The gate's integrity (issue 36): rights stay current for every credential, and no
request without a credential locks anyone out. Each attack of the issue is driven
through the emulator (the code host: permissions, webhooks, OIDC tokens) and the real
service on a real HTTP server, and shown refused."""
from __future__ import annotations

import httpx
import pytest

from app.web.pages.artifacts import UPLOAD_PATH
from tests.api.test_authority import ORG, _deliver, _stack, approve, bearer
from tests.helpers.access import OPERATOR_ENV, create_token
from tests.helpers.paths import webhook_fixture_json
from tests.helpers.service import count
from tests.helpers.sessions import decided_run


ARTIFACT_KEY = "artifact-signing-key-for-the-integrity-tests-0123"


@pytest.fixture
def stack(pool, owner):
    yield from _stack(pool, owner, SERVICE_ARTIFACT_SIGNING_KEY=ARTIFACT_KEY, **OPERATOR_ENV)


# ---- no request without a credential counts ------------------------------------------------------

@pytest.mark.parametrize("method, path, content_type", [
    ("POST", "/api/v1/runs/github-actions-result", "application/json"),
    ("POST", UPLOAD_PATH + "?attemptId=1-" + "a" * 32, "text/html; charset=utf-8"),
    ("GET", "/metrics", "application/json"),
])
def test_credential_less_requests_never_lock_out_a_valid_credential(stack, owner, pool, method, path, content_type):
    repo = stack.repos[0]["id"]
    for _ in range(25):   # what a cross-site form or image tag can make a browser send
        answer = httpx.request(method, stack.base + path, timeout=10, content=b"{}",
                               headers={"Content-Type": content_type})
        assert answer.status_code == 401, answer.text
    assert count(owner, "auth_failures") == 0
    token, _ = create_token(pool, repo, scopes=["reviews:read"])
    assert httpx.get(f"{stack.base}/api/v1/runs", headers=bearer(token), timeout=10).status_code == 200
    metrics = httpx.get(f"{stack.base}/metrics", headers=bearer(OPERATOR_ENV["SERVICE_OPERATOR_API_TOKEN"]),
                        timeout=10)
    assert metrics.status_code == 200, metrics.text


# ---- every credential as current as a session ------------------------------------------------------

def test_a_demoted_admins_token_loses_what_the_person_lost(stack, owner, pool):
    """The default SERVICE_PERMISSION_TTL_SECONDS: a session would not be re-read yet; a token is."""
    repo, full_name = stack.repos[0]["id"], stack.repos[0]["full_name"]
    ada = stack.sign_in("ada", default_role="admin")
    token = ada.mint(repo, scopes=["admin"]).json()["token"]
    settings = f"{stack.base}/api/v1/repositories/{repo}/settings"
    assert httpx.put(settings, json={"tokenPublishedResults": True}, headers=bearer(token),
                     timeout=10).status_code == 200
    stack.host.set_permission("ada", repository=full_name, role="push")
    changed = httpx.put(settings, json={"tokenPublishedResults": False}, headers=bearer(token), timeout=10)
    assert changed.status_code == 403 and changed.json()["code"] == "insufficient_scope"
    minted = httpx.post(f"{stack.base}/api/v1/tokens", json={"repositoryId": str(repo), "name": "fresh",
                                                              "scopes": ["admin"]}, headers=bearer(token), timeout=10)
    assert minted.status_code == 403 and minted.json()["code"] == "insufficient_scope"
    assert owner.execute("SELECT token_published_results FROM repositories WHERE id = %s",
                         (repo,)).fetchone()["token_published_results"] is True
    assert count(owner, "api_tokens") == 1
    # Asked by the person's durable id, then their permission on the repository.
    assert stack.host.requests(operation_id="users/get-by-id")
    assert stack.host.requests(operation_id="repos/get-collaborator-permission-level")


def test_a_member_demoted_to_read_no_longer_approves_with_an_earlier_token(stack, owner, pool):
    repo, full_name = stack.repos[0]["id"], stack.repos[0]["full_name"]
    max_ = stack.sign_in("max", default_role="push")
    token = max_.mint(repo, scopes=["reviews:read", "reviews:write"]).json()["token"]
    run = decided_run(owner, pool, repo)
    stack.host.set_permission("max", repository=full_name, role="pull")
    refused = approve(stack, bearer(token), run["review_id"])
    assert refused.status_code == 403 and refused.json()["code"] == "insufficient_scope"
    assert count(owner, "review_approvals") == 0
    # Reading is what pull gives: still allowed.
    assert httpx.get(f"{stack.base}/api/v1/runs", headers=bearer(token), timeout=10).status_code == 200
    # Out of the organization (no webhook sent): the next change finds no access and revokes the token.
    stack.host.set_permission("max", organizations=[])
    gone = approve(stack, bearer(token), run["review_id"])
    assert gone.status_code == 403
    assert owner.execute("SELECT revoked_reason FROM api_tokens").fetchone()["revoked_reason"] == "access_removed"
    assert httpx.get(f"{stack.base}/api/v1/runs", headers=bearer(token), timeout=10).json()["code"] == \
        "token_revoked"


def test_a_token_with_no_person_behind_it_reads_and_publishes_but_never_decides(stack, owner, pool):
    repo = stack.repos[0]["id"]
    token, _ = create_token(pool, repo, scopes=["admin", "reviews:read", "reviews:write", "runs:write"])
    run = decided_run(owner, pool, repo)
    for body in ({"status": "approved"}, {"status": "changes_requested"},
                 {"status": "approved", "breakGlass": True, "reason": "the operator says it is fine"}):
        refused = approve(stack, bearer(token), run["review_id"], **{k: v for k, v in body.items() if k != "status"},
                          status=body["status"])
        assert refused.status_code == 403 and refused.json()["code"] == "person_required", body
    waived = httpx.post(f"{stack.base}/api/v1/repositories/{repo}/waivers", headers=bearer(token), timeout=10,
                        json={"fingerprint": "ab" * 16, "reason": "known"})
    assert waived.status_code == 403 and waived.json()["code"] == "person_required"
    assert count(owner, "review_approvals") == 0 and count(owner, "waivers") == 0
    assert httpx.get(f"{stack.base}/api/v1/runs", headers=bearer(token), timeout=10).status_code == 200


def test_a_suspended_installation_is_out_of_reach_for_every_credential(stack, owner, pool):
    repo = stack.repos[0]["id"]
    person = stack.sign_in("sue", default_role="admin")
    operator_token, _ = create_token(pool, repo, scopes=["admin", "reviews:read"])
    run = decided_run(owner, pool, repo)
    suspended = stack.host.suspend_installation(stack.installation["id"], deliver=True)
    assert suspended["delivery"]["status"] in (200, 202), suspended
    # A fresh sign-in reaches nothing there.
    again = stack.sign_in("sue", default_role="admin")
    assert again.get("/api/v1/runs").json()["items"] == []
    assert again.mint(repo, scopes=["admin"]).status_code == 404
    assert again.send("POST", f"/api/v1/reviews/{run['review_id']}/approvals",
                      {"status": "approved"}).status_code == 404
    assert again.send("POST", f"/api/v1/repositories/{repo}/waivers",
                      {"fingerprint": "ab" * 16, "reason": "known"}).status_code == 404
    assert again.get(f"/release-runs/{run['id']}/board.json").status_code == 404
    assert again.get(f"/release-runs/{run['id']}", follow_redirects=False).status_code == 404
    # A token with no person behind it (never revoked by the webhook) is refused too.
    refused = httpx.get(f"{stack.base}/api/v1/runs", headers=bearer(operator_token), timeout=10)
    assert refused.status_code == 403 and refused.json()["code"] == "repository_unavailable"
    assert count(owner, "review_approvals") == 0 and count(owner, "waivers") == 0
    # Unsuspended: in reach again.
    stack.host.suspend_installation(stack.installation["id"], suspended=False, deliver=True)
    assert httpx.get(f"{stack.base}/api/v1/runs", headers=bearer(operator_token), timeout=10).status_code == 200
    assert stack.sign_in("sue", default_role="admin").get("/api/v1/runs").json()["items"]


# ---- membership from the code host, not from the order of deliveries ----------------------------------

def test_a_redelivered_old_removal_leaves_a_person_added_back_since(stack, owner, pool):
    repo = stack.repos[0]["id"]
    person = stack.sign_in("boomerang")
    delivered = stack.host.remove_organization_member(stack.installation["id"], "boomerang")
    assert person.get("/api/v1/runs").status_code == 401
    # Added back, signed in again, a token minted: then the old removal arrives again.
    again = stack.sign_in("boomerang")
    token = again.mint(repo, scopes=["reviews:read"]).json()["token"]
    redelivered = stack.host.redeliver(delivered["delivery_id"])
    assert redelivered["status"] in (200, 202), redelivered
    assert again.get("/api/v1/runs").status_code == 200
    assert httpx.get(f"{stack.base}/api/v1/runs", headers=bearer(token), timeout=10).status_code == 200


def test_a_permission_edit_on_the_code_host_ends_what_was_lost(stack, owner, pool):
    """member edited (a repository permission change): the person's sessions take the new permission at once."""
    repo, full_name = stack.repos[0]["id"], stack.repos[0]["full_name"]
    person = stack.sign_in("edith", default_role="admin")
    stack.host.set_permission("edith", repository=full_name, role="pull")
    payload = webhook_fixture_json("member.added.0.json")
    payload.update(action="edited", changes={"permission": {"from": "admin", "to": "read"}})
    payload["member"].update(id=person.user_id, login="edith")
    payload["repository"].update(id=repo, full_name=full_name)
    payload["installation"] = {"id": stack.installation["id"]}
    assert _deliver(stack, "member", payload).status_code == 202
    stored = owner.execute("SELECT admin_repository_ids, write_repository_ids FROM sessions").fetchone()
    assert repo not in stored["admin_repository_ids"] and repo not in stored["write_repository_ids"]
    refused = person.send("PUT", f"/api/v1/repositories/{repo}/settings", {"tokenPublishedResults": True})
    assert refused.status_code == 403 and refused.json()["code"] == "insufficient_scope"


# ---- sign-in and the session cookie ------------------------------------------------------------------

def test_cross_site_image_loads_of_sign_in_cannot_lock_a_victim_out(stack, owner):
    image = {"Sec-Fetch-Dest": "image", "Sec-Fetch-Mode": "no-cors", "Sec-Fetch-Site": "cross-site"}
    for path in ("/auth/sign-in", "/auth/callback?code=x&state=" + "y" * 20):
        for _ in range(15):   # 30 in all, past SERVICE_SIGN_IN_PER_MINUTE (20)
            answer = httpx.get(stack.base + path, headers=image, follow_redirects=False, timeout=10)
            assert answer.status_code == 403 and answer.json()["code"] == "sign_in_not_navigation"
    assert count(owner, "sign_in_attempts") == 0
    # The victim, from the same address, signs in (a navigation) as usual.
    victim = stack.sign_in("victim")
    assert victim.get("/api/v1/session").status_code == 200


def test_over_https_the_session_cookie_is_host_prefixed_and_a_duplicate_never_wins(pool, owner):
    from falcon import testing
    from app.web.session_auth import SECURE_SESSION_COOKIE, SESSION_COOKIE
    from app.web.wsgi import create_app
    from tests.helpers.service import make_config
    from tests.helpers.sessions import Session
    client = testing.TestClient(create_app(make_config(SERVICE_PUBLIC_URL="https://boardready.example"), pool))
    mine, planted = Session(pool, [], viewer_id=11), Session(pool, [], viewer_id=12)
    who = lambda cookie: client.simulate_get("/api/v1/session", headers={"Cookie": cookie})
    assert who(f"{SECURE_SESSION_COOKIE}={mine.value}").json["viewer"]["id"] == 11
    # The unprefixed name, which any sibling host could set, is no session over HTTPS.
    assert who(f"{SESSION_COOKIE}={mine.value}").status_code == 401
    # Two values (one planted on a narrower path comes first): neither is taken.
    both = who(f"{SECURE_SESSION_COOKIE}={planted.value}; {SECURE_SESSION_COOKIE}={mine.value}")
    assert both.status_code == 401
    # Signing out clears it with the attributes a __Host- cookie needs.
    out = client.simulate_post("/auth/sign-out", headers={"Cookie": f"{SECURE_SESSION_COOKIE}={mine.value}",
                                                          "X-CSRF-Token": mine.csrf})
    cleared = out.headers["set-cookie"]
    assert out.status_code == 204 and cleared.startswith(f"{SECURE_SESSION_COOKIE}=")
    assert "Secure" in cleared and "Path=/" in cleared and "Domain" not in cleared


@pytest.fixture
def rereading_stack(pool, owner):
    yield from _stack(pool, owner, SERVICE_PERMISSION_TTL_SECONDS="0")


def test_the_watched_board_routes_read_rights_again_before_a_change(rereading_stack, owner):
    stack = rereading_stack
    repo, full_name = stack.repos[0]["id"], stack.repos[0]["full_name"]
    person = stack.sign_in("wanda", default_role="admin")
    path = f"/api/v1/repositories/{repo}/watched-board"
    assert person.send("POST", path, {"path": "power/power.kicad_pro"}).status_code == 201
    asked = len(stack.host.requests(operation_id="repos/get-collaborator-permission-level"))
    assert asked == 1
    stack.host.set_permission("wanda", repository=full_name, role="push")
    for method, body in (("POST", {"path": "other/other.kicad_pro"}), ("DELETE", None)):
        refused = person.send(method, path, body)
        assert refused.status_code == 403 and refused.json()["code"] == "insufficient_scope", method


def test_a_team_membership_change_ends_what_the_person_lost(stack, owner, pool):
    """membership removed (out of a team that gave the access): read again, ended where lost, kept elsewhere."""
    lost, kept = stack.repos
    person = stack.sign_in("theo", default_role="push")
    token = person.mint(lost["id"], scopes=["reviews:read"]).json()["token"]
    stack.host.set_permission("theo", repository=lost["full_name"], role="pull")   # what the team gave is gone
    payload = {"action": "removed", "scope": "team", "member": {"id": person.user_id, "login": "theo"},
               "team": {"id": 1, "name": "hardware", "slug": "hardware"},
               "organization": {"id": lost["owner"]["id"], "login": ORG},
               "installation": {"id": stack.installation["id"]}, "sender": {"id": 1, "login": ORG}}
    assert _deliver(stack, "membership", payload).status_code == 202
    stored = owner.execute("SELECT write_repository_ids FROM sessions").fetchone()["write_repository_ids"]
    assert lost["id"] not in stored and kept["id"] in stored
    assert httpx.get(f"{stack.base}/api/v1/runs", headers=bearer(token), timeout=10).status_code == 200


def test_a_teams_repository_permission_change_makes_sessions_read_their_rights_again(stack, owner, pool):
    """team edited names no person: every session on the repository re-reads before its next change,
    without waiting SERVICE_PERMISSION_TTL_SECONDS (300 here)."""
    repo = stack.repos[0]
    person = stack.sign_in("tess", default_role="admin")
    settings = f"/api/v1/repositories/{repo['id']}/settings"
    assert person.send("PUT", settings, {"tokenPublishedResults": True}).status_code == 200
    stack.host.set_permission("tess", repository=repo["full_name"], role="push")   # the team's grant lowered
    payload = {"action": "edited", "changes": {"repository": {"permissions": {"from": {"admin": True}}}},
               "team": {"id": 1, "name": "hardware", "slug": "hardware"},
               "repository": {"id": repo["id"], "full_name": repo["full_name"]},
               "organization": {"id": repo["owner"]["id"], "login": ORG},
               "installation": {"id": stack.installation["id"]}, "sender": {"id": 1, "login": ORG}}
    assert _deliver(stack, "team", payload).status_code == 202
    refused = person.send("PUT", settings, {"tokenPublishedResults": False})
    assert refused.status_code == 403 and refused.json()["code"] == "insufficient_scope"

"""Sessions at the API: GET /api/v1/session, expiry, forged cookies, CSRF,
token endpoints with a session, a canceled account failing closed, cookies
on https."""
from __future__ import annotations

import datetime as dt

import pytest
from falcon import testing

from app.web.session_auth import SESSION_COOKIE, new_secret_value
from app.web.wsgi import create_app
from contracts import openapi_response_validator
from tests.helpers.access import bearer, create_token, install_clock, marketplace_body, post_marketplace
from tests.helpers.service import count, make_config
from tests.helpers.sessions import REVIEWS_ACCOUNT, Session, decided_run, seed_repositories

TOKENS = "/api/v1/tokens"


def validate(path: str, method: str, response) -> None:
    openapi_response_validator(path, method, response.status_code).validate(response.json)


@pytest.fixture
def repos(owner):
    return seed_repositories(owner, 3)


def test_session_answers_who_is_signed_in(client, pool, repos):
    session = Session(pool, repos[:1], login="ada")
    answer = client.simulate_get("/api/v1/session", headers=session.headers(csrf=False))
    assert answer.status_code == 200
    validate("/api/v1/session", "get", answer)
    assert answer.json["viewer"] == {"id": session.viewer_id, "login": "ada"}
    assert answer.json["actor"] == session.actor and answer.json["csrfToken"] == session.csrf
    missing = client.simulate_get("/api/v1/session")
    assert missing.status_code == 401 and missing.json["code"] == "session_required"
    validate("/api/v1/session", "get", missing)


def test_expired_and_forged_sessions(client, owner, pool, repos, monkeypatch):
    start = dt.datetime(2030, 1, 1, tzinfo=dt.timezone.utc)
    clock = install_clock(monkeypatch, start)
    session = Session(pool, repos, ttl_hours=1, now=start)
    assert client.simulate_get("/api/v1/session", headers=session.headers()).status_code == 200
    clock.advance(hours=1)
    expired = client.simulate_get("/api/v1/session", headers=session.headers())
    assert expired.status_code == 401 and expired.json["code"] == "session_expired"
    forged = client.simulate_get("/api/v1/session", headers={"Cookie": f"{SESSION_COOKIE}={new_secret_value()}"})
    assert forged.status_code == 401 and forged.json["code"] == "invalid_session"
    # A forged cookie counts as a failed authentication, like a wrong bearer token; an expired one does not.
    assert owner.execute("SELECT sum(failures) AS n FROM auth_failures").fetchone()["n"] == 1
    # Not a cookie of ours at all: no session, no lookup.
    odd = client.simulate_get("/api/v1/session", headers={"Cookie": f"{SESSION_COOKIE}=<script>"})
    assert odd.status_code == 401 and odd.json["code"] == "session_required"


def test_too_many_forged_cookies_are_throttled(pool, owner, repos):
    client = testing.TestClient(create_app(make_config(SERVICE_AUTH_RATE_LIMIT_PER_MINUTE="2"), pool))
    for _ in range(2):
        client.simulate_get("/api/v1/session", headers={"Cookie": f"{SESSION_COOKIE}={new_secret_value()}"})
    limited = client.simulate_get("/api/v1/session", headers={"Cookie": f"{SESSION_COOKIE}={new_secret_value()}"})
    assert limited.status_code == 429 and limited.json["code"] == "too_many_auth_failures"
    # A valid session is never refused because of other clients' failures.
    good = Session(pool, repos)
    assert client.simulate_get("/api/v1/session", headers=good.headers()).status_code == 200


def test_token_endpoints_accept_a_session_for_its_repositories(client, owner, pool, repos):
    session = Session(pool, repos[:2])
    created = client.simulate_post(TOKENS, json={"repositoryId": str(repos[0]), "name": "ci"}, headers=session.headers())
    assert created.status_code == 201, created.json
    validate(TOKENS, "post", created)
    token_id = created.json["tokenRecord"]["id"]
    assert owner.execute("SELECT created_by FROM api_tokens WHERE id = %s", (token_id,)).fetchone()["created_by"] == \
        session.actor
    listed = client.simulate_get(TOKENS, params={"repositoryId": str(repos[0])}, headers=session.headers(csrf=False))
    assert listed.status_code == 200 and [t["id"] for t in listed.json["tokens"]] == [token_id]
    # A repository the viewer cannot reach does not exist for them.
    hidden = client.simulate_post(TOKENS, json={"repositoryId": str(repos[2]), "name": "ci"}, headers=session.headers())
    assert hidden.status_code == 404 and hidden.json["code"] == "not_found"
    assert client.simulate_get(TOKENS, params={"repositoryId": str(repos[2])},
                               headers=session.headers()).status_code == 404
    _, other_token = create_token(pool, repos[2])
    gone = client.simulate_delete(TOKENS, params={"tokenId": other_token}, headers=session.headers())
    assert gone.status_code == 404
    revoked = client.simulate_delete(TOKENS, params={"tokenId": token_id}, headers=session.headers())
    assert revoked.status_code == 200 and revoked.json["outcome"] == "revoked"
    validate(TOKENS, "delete", revoked)


def test_unsafe_session_requests_need_the_csrf_token(client, owner, pool, repos):
    session = Session(pool, repos)
    for csrf in (False, "", "nope", Session(pool, repos).csrf):
        refused = client.simulate_post(TOKENS, json={"repositoryId": str(repos[0]), "name": "ci"},
                                       headers=session.headers(csrf=csrf))
        assert refused.status_code == 403 and refused.json["code"] == "csrf_failed", csrf
    _, token_id = create_token(pool, repos[0])
    refused = client.simulate_delete(TOKENS, params={"tokenId": token_id}, headers=session.headers(csrf=False))
    assert refused.status_code == 403 and refused.json["code"] == "csrf_failed"
    assert count(owner, "api_tokens") == 1
    assert owner.execute("SELECT revoked_at FROM api_tokens").fetchone()["revoked_at"] is None


def test_a_bearer_token_wins_over_a_session_cookie(client, pool, repos):
    session = Session(pool, repos)
    value, _ = create_token(pool, repos[0], scopes=["reviews:read"])
    # The token speaks: no CSRF needed, and its scopes apply (no admin here).
    answer = client.simulate_post(TOKENS, json={"repositoryId": str(repos[0]), "name": "ci"},
                                  headers={**session.headers(csrf=False), **bearer(value)})
    assert answer.status_code == 403 and answer.json["code"] == "insufficient_scope"


def test_sign_out_with_a_form(client, owner, pool, repos):
    session = Session(pool, repos)
    refused = client.simulate_post("/auth/sign-out", body="csrf_token=wrong",
                                   headers={**session.headers(csrf=False),
                                            "Content-Type": "application/x-www-form-urlencoded"})
    assert refused.status_code == 403 and count(owner, "sessions") == 1
    done = client.simulate_post("/auth/sign-out", body=f"csrf_token={session.csrf}",
                                headers={**session.headers(csrf=False),
                                         "Content-Type": "application/x-www-form-urlencoded"})
    assert done.status_code == 303 and done.headers["Location"] == "/" and count(owner, "sessions") == 0
    # Signing out without a live session only clears the cookie.
    again = client.simulate_post("/auth/sign-out", headers=session.headers(csrf=False))
    assert again.status_code == 204 and f"{SESSION_COOKIE}=" in again.headers["Set-Cookie"]


def test_a_canceled_accounts_repositories_are_invisible(client, owner, pool, repos):
    run = decided_run(owner, pool, repos[0])
    session = Session(pool, repos)
    assert client.simulate_get(f"/api/v1/runs/{run['id']}", headers=session.headers()).status_code == 200
    body = marketplace_body("marketplace_purchase.cancelled.1.json", account_id=REVIEWS_ACCOUNT,
                            effective_date="2030-01-01T00:00:00Z")
    assert post_marketplace(client, body).status_code in (200, 202)
    assert owner.execute("SELECT state FROM marketplace_accounts").fetchone()["state"] == "canceled"
    assert client.simulate_get(f"/api/v1/runs/{run['id']}", headers=session.headers()).status_code == 404
    assert client.simulate_get("/api/v1/runs", headers=session.headers()).json["items"] == []
    approval = client.simulate_post(f"/api/v1/reviews/{run['review_id']}/approvals", json={"status": "approved"},
                                    headers=session.headers())
    assert approval.status_code == 404 and count(owner, "review_approvals") == 0
    token = client.simulate_post(TOKENS, json={"repositoryId": str(repos[0]), "name": "ci"}, headers=session.headers())
    assert token.status_code == 404


def test_cookies_are_secure_on_https(pool):
    config = make_config(HOST_OAUTH_CLIENT_ID="Iv1.abc", HOST_OAUTH_CLIENT_SECRET="s3cret",
                         SERVICE_PUBLIC_URL="https://boardready.example")
    client = testing.TestClient(create_app(config, pool))
    answer = client.simulate_get("/auth/sign-in")
    assert answer.status_code == 302
    cookie = answer.headers["Set-Cookie"]
    assert "Secure" in cookie and "HttpOnly" in cookie and "SameSite=Lax" in cookie
    assert answer.headers["Location"].startswith("https://github.com/login/oauth/authorize?")
    assert "redirect_uri=https%3A%2F%2Fboardready.example%2Fauth%2Fcallback" in answer.headers["Location"]


@pytest.mark.parametrize("env, missing", [
    ({"HOST_OAUTH_CLIENT_ID": "Iv1.abc"}, "HOST_OAUTH_CLIENT_SECRET"),
    ({"HOST_OAUTH_CLIENT_SECRET": "s3cret"}, "HOST_OAUTH_CLIENT_ID"),
    ({"HOST_WEB_URL": "github.com"}, "HOST_WEB_URL"),
    ({"SERVICE_SESSION_TTL_HOURS": "0"}, "SERVICE_SESSION_TTL_HOURS"),
    ({"SERVICE_SESSION_TTL_HOURS": "721"}, "SERVICE_SESSION_TTL_HOURS"),
])
def test_half_or_invalid_sign_in_configuration_is_not_ready(env, missing):
    config = make_config(**env)
    assert missing in config.missing and not config.sign_in.enabled


def test_the_client_secret_may_come_from_a_file(tmp_path):
    secret = tmp_path / "oauth-secret"
    secret.write_text("s3cret-from-file\n")
    config = make_config(HOST_OAUTH_CLIENT_ID="Iv1.abc", HOST_OAUTH_CLIENT_SECRET_FILE=str(secret))
    assert config.sign_in.enabled and config.sign_in.client_secret.reveal() == "s3cret-from-file"
    assert "s3cret" not in repr(config)
    unreadable = make_config(HOST_OAUTH_CLIENT_ID="Iv1.abc", HOST_OAUTH_CLIENT_SECRET_FILE=str(tmp_path / "none"))
    assert "HOST_OAUTH_CLIENT_SECRET" in unreadable.missing

"""The bearer middleware: 401/403 codes, fail-closed canceled accounts, routes
that declare their own auth, the paid endpoints, and the failed-authentication
limiter at its edges (windows driven by a fixed clock, never by sleeping)."""
from __future__ import annotations

import datetime as dt

import falcon
import pytest
from falcon import testing

from app.web.bearer_auth import BearerAuth, require
from app.web.errors import install as install_errors
from contracts import openapi_response_validator
from tests.helpers.access import (bearer, create_token, install_clock, marketplace_body, post_marketplace,
                                          seed_repository)
from tests.helpers.service import make_config

CHECKOUT = "/api/v1/billing/checkout"
REPO = 9001
START = dt.datetime(2024, 5, 1, 12, 0, 5, tzinfo=dt.timezone.utc)   # 55 s left in its minute


@pytest.fixture
def clock(monkeypatch):
    return install_clock(monkeypatch, START)


@pytest.fixture
def repo(owner):
    return seed_repository(owner, account_id=18404719, installation_id=501, repository_id=REPO, login="username")


def call(client, headers=None, path=CHECKOUT, client_ip="203.0.113.7"):
    return client.simulate_post(path, headers={"X-Forwarded-For": f"{client_ip}, 10.0.0.1", **(headers or {})})


def failures(owner, limiter="bearer"):
    return {(r["client_key"]): r["failures"] for r in
            owner.execute("SELECT * FROM auth_failures WHERE limiter = %s", (limiter,)).fetchall()}


# -- outcomes ------------------------------------------------------------------

@pytest.mark.parametrize("path", ["/api/v1/billing/checkout", "/api/v1/billing/portal"])
def test_paid_endpoints_answer_410_to_any_valid_token(client, pool, repo, clock, path):
    value, _ = create_token(pool, REPO, scopes=("reviews:read",))
    result = call(client, bearer(value), path=path)
    assert (result.status_code, result.json["code"]) == (410, "marketplace_free_only")
    openapi_response_validator(path, "post", 410).validate(result.json)
    unauthenticated = call(client, path=path)
    assert (unauthenticated.status_code, unauthenticated.json["code"]) == (401, "missing_token")


def test_unauthorized_codes(client, pool, owner, repo, clock):
    expiring, _ = create_token(pool, REPO, duration_days=1, now=START - dt.timedelta(days=2))
    revoked, revoked_id = create_token(pool, REPO)
    owner.execute("UPDATE api_tokens SET revoked_at = now(), revoked_reason = 'api' WHERE id = %s", (revoked_id,))
    unknown = "svc_live_" + "A" * 43
    cases = [
        ({}, "missing_token"),
        ({"Authorization": ""}, "missing_token"),
        ({"Authorization": f"Basic {unknown}"}, "malformed_token"),
        ({"Authorization": "Bearer svc_live_short"}, "malformed_token"),
        ({"Authorization": "Bearer " + "x" * 52}, "malformed_token"),
        (bearer(unknown), "invalid_token"),
        (bearer(expiring), "token_expired"),
        (bearer(revoked), "token_revoked"),
    ]
    for headers, code in cases:
        result = call(client, headers)
        assert (result.status_code, result.json["code"]) == (401, code), code
        assert result.headers["WWW-Authenticate"].startswith("Bearer")
        openapi_response_validator(CHECKOUT, "post", 401).validate(result.json)
    # Every 401 that presented a credential counts; one without any does not (strangers cannot lock anyone out).
    assert failures(owner) == {"203.0.113.7": len(cases) - 2}


def test_a_canceled_account_fails_closed(client, pool, owner, repo, clock):
    value, token_id = create_token(pool, REPO)
    assert call(client, bearer(value)).status_code == 410
    post_marketplace(client, marketplace_body("marketplace_purchase.cancelled.1.json", account_id=18404719,
                                              effective_date="2024-04-01T00:00:00+00:00"))
    result = call(client, bearer(value))
    assert (result.status_code, result.json["code"]) == (403, "account_canceled")
    # Even a token the cancellation somehow missed is refused.
    owner.execute("UPDATE api_tokens SET revoked_at = NULL, revoked_reason = NULL WHERE id = %s", (token_id,))
    assert call(client, bearer(value)).json["code"] == "account_canceled"


def test_a_removed_repository_fails_closed(client, pool, owner, repo, clock):
    value, _ = create_token(pool, REPO)
    owner.execute("UPDATE repositories SET removed_at = now() WHERE id = %s", (REPO,))
    result = call(client, bearer(value))
    assert (result.status_code, result.json["code"]) == (403, "repository_unavailable")


# -- routes and require() -----------------------------------------------------

class _Resource:
    def __init__(self, auth_kind=None, **needs):
        if auth_kind is not None:
            self.auth = auth_kind
        self.needs = needs

    def on_get(self, req, resp):
        auth = require(req, **self.needs)
        resp.media = {"repositoryId": auth.repository_id, "scopes": sorted(auth.scopes), "tokenId": auth.token_id}


def _app(config, pool, routes: dict):
    app = falcon.App(middleware=[BearerAuth(config, pool)])
    install_errors(app)
    for path, resource in routes.items():
        app.add_route(path, resource)
    return testing.TestClient(app)


def test_require_checks_scope_and_repository(config, pool, repo, clock):
    value, token_id = create_token(pool, REPO, scopes=("runs:write",))
    client = _app(config, pool, {
        "/api/v1/ok": _Resource(scope="runs:write", repository_id=str(REPO)),
        "/api/v1/int-id": _Resource(repository_id=REPO),
        "/api/v1/scope": _Resource(scope="reviews:write"),
        "/api/v1/other": _Resource(scope="runs:write", repository_id="9002"),
    })
    ok = client.simulate_get("/api/v1/ok", headers=bearer(value))
    assert ok.json == {"repositoryId": str(REPO), "scopes": ["runs:write"], "tokenId": token_id}
    assert client.simulate_get("/api/v1/int-id", headers=bearer(value)).status_code == 200
    assert client.simulate_get("/api/v1/scope", headers=bearer(value)).json["code"] == "insufficient_scope"
    other = client.simulate_get("/api/v1/other", headers=bearer(value))
    assert (other.status_code, other.json["code"]) == (403, "repository_mismatch")


def test_routes_that_declare_their_own_auth_are_skipped_and_require_fails_closed(config, pool, owner, clock):
    client = _app(config, pool, {"/api/v1/callback": _Resource("oidc"), "/api/v1/typo": _Resource("bearr")})
    # No bearer check ran (nothing counted), and require() without a bearer identity is a 401.
    result = client.simulate_get("/api/v1/callback")
    assert (result.status_code, result.json["code"]) == (401, "missing_token")
    assert failures(owner) == {}
    # An unknown auth kind is a programming error: refused, never let through.
    assert client.simulate_get("/api/v1/typo").status_code == 500


# -- the limiter -----------------------------------------------------------------

def test_the_20th_failure_is_401_and_the_21st_request_is_429(client, pool, owner, repo, clock):
    value, _ = create_token(pool, REPO)
    bad = bearer("svc_live_" + "B" * 43)
    for n in range(1, 21):
        result = call(client, bad)
        assert result.status_code == 401, n
    assert failures(owner) == {"203.0.113.7": 20}
    limited = call(client, bad)
    assert (limited.status_code, limited.json["code"]) == (429, "too_many_auth_failures")
    assert limited.headers["Retry-After"] == "55"        # to the end of the minute
    openapi_response_validator(CHECKOUT, "post", 429).validate(limited.json)
    # The correct token while limited: refused before it is looked at, and not counted.
    correct = call(client, bearer(value))
    assert (correct.status_code, correct.headers["Retry-After"]) == (429, "55")
    assert owner.execute("SELECT last_used_at FROM api_tokens").fetchone()["last_used_at"] is None
    assert failures(owner) == {"203.0.113.7": 20}
    # Another client (first X-Forwarded-For hop) is not affected.
    assert call(client, bearer(value), client_ip="198.51.100.2").status_code == 410

    clock.advance(seconds=54)
    assert call(client, bearer(value)).headers["Retry-After"] == "1"
    clock.advance(seconds=1)                             # the next window
    assert call(client, bearer(value)).status_code == 410
    assert call(client, bad).status_code == 401


def test_valid_requests_are_never_counted(client, pool, owner, repo, clock, config):
    value, _ = create_token(pool, REPO)
    for _ in range(50):
        assert call(client, bearer(value)).status_code == 410
    assert failures(owner) == {}
    for _ in range(config.auth_rate_limit_per_minute):
        assert call(client, {}).status_code == 401      # no credential: neither counted nor limited
    assert call(client, bearer(value)).status_code == 410
    for _ in range(config.auth_rate_limit_per_minute):
        assert call(client, bearer("svc_live_" + "A" * 43)).status_code == 401
    assert call(client, bearer(value)).status_code == 429


def test_the_limit_is_configurable_and_keyed_by_peer_without_forwarded_for(pool, owner, repo, clock):
    client = testing.TestClient(__import__("app.web.wsgi", fromlist=["create_app"]).create_app(
        make_config(SERVICE_AUTH_RATE_LIMIT_PER_MINUTE="2"), pool))
    unknown = bearer("svc_live_" + "A" * 43)
    for _ in range(2):
        assert client.simulate_post(CHECKOUT, remote_addr="192.0.2.9", headers=unknown).status_code == 401
    assert client.simulate_post(CHECKOUT, remote_addr="192.0.2.9", headers=unknown).status_code == 429
    assert failures(owner) == {"192.0.2.9": 2}


def test_windows_and_sweeping_in_sql(pool, owner):
    t = dt.datetime(2024, 5, 1, 12, 0, 59, 999999, tzinfo=dt.timezone.utc)
    with pool.connection() as conn:
        from app import sql_api
        check = lambda at: sql_api.auth_throttle_check(conn, limiter="bearer", client_key="c",  # noqa: E731
                                                       limit=1, now=at)
        sql_api.auth_throttle_record_failure(conn, limiter="bearer", client_key="c", now=t)
        assert check(t)["limited"] is True and check(t)["retry_after_seconds"] == 1
        assert check(t + dt.timedelta(microseconds=1))["limited"] is False       # 12:01:00 is a new window
        # Ended windows are swept by later failures.
        sql_api.auth_throttle_record_failure(conn, limiter="bearer", client_key="d", now=t + dt.timedelta(minutes=10))
    assert {r["client_key"] for r in owner.execute("SELECT client_key FROM auth_failures")} == {"d"}

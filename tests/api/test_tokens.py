"""POST/GET/DELETE /api/v1/tokens and the token state table: values returned
once, only hashes stored, expiry, revocation, cross-repository probes, and
every bad input refused with nothing stored."""
from __future__ import annotations

import datetime as dt
import hashlib
import re

import psycopg
import pytest

from app import api_tokens, sql_api
from contracts import openapi_response_validator
from tests.helpers.access import bearer, create_token, seed_repository
from tests.helpers.service import count

PATH = "/api/v1/tokens"
REPO, OTHER_REPO = 9001, 9002


@pytest.fixture
def repos(owner):
    seed_repository(owner, account_id=101, installation_id=501, repository_id=REPO, login="acme")
    seed_repository(owner, account_id=202, installation_id=502, repository_id=OTHER_REPO, login="rival")


@pytest.fixture
def admin(pool, repos):
    value, _ = create_token(pool, REPO, scopes=("admin",), name="bootstrap")
    return value


def documented(result, method):
    openapi_response_validator(PATH, method, result.status_code).validate(result.json)
    return result


def create(client, token, body: dict):
    return documented(client.simulate_post(PATH, json=body, headers=bearer(token)), "post")


def test_create_returns_the_value_once_and_stores_only_its_hash(client, owner, admin):
    result = create(client, admin, {"repositoryId": str(REPO), "name": "ci runner"})
    assert result.status_code == 201
    value, record = result.json["token"], result.json["tokenRecord"]
    assert re.fullmatch(r"svc_live_[A-Za-z0-9_-]{43}", value)          # 32 random bytes: 256 bits
    assert record["tokenPrefix"] == value[:12] and len(record["tokenPrefix"]) < len(value)
    assert record["scopes"] == list(api_tokens.DEFAULT_SCOPES)
    assert record["expiresAt"] is None and record["name"] == "ci runner"
    row = owner.execute("SELECT * FROM api_tokens WHERE id = %s", (record["id"],)).fetchone()
    assert bytes(row["token_sha256"]) == hashlib.sha256(value.encode()).digest()
    assert row["repository_id"] == REPO and row["created_by"].startswith("token:")
    # The new token works, with exactly its scopes.
    listing = client.simulate_get(PATH, params={"repositoryId": str(REPO)}, headers=bearer(value))
    assert (listing.status_code, listing.json["code"]) == (403, "insufficient_scope")


def test_scopes_and_duration(client, admin):
    result = create(client, admin, {"repositoryId": str(REPO), "name": "short", "scopes": ["admin", "reviews:read"],
                                    "durationDays": 7})
    record = result.json["tokenRecord"]
    assert record["scopes"] == ["reviews:read", "admin"]
    created = dt.datetime.fromisoformat(record["createdAt"].replace("Z", "+00:00"))
    expires = dt.datetime.fromisoformat(record["expiresAt"].replace("Z", "+00:00"))
    assert expires - created == dt.timedelta(days=7)
    for days in (1, 365):
        assert create(client, admin, {"repositoryId": str(REPO), "name": f"d{days}",
                                      "durationDays": days}).status_code == 201
    # An admin token mints any scopes, those it lacks itself too; no person behind it, no life limit.
    reader = create(client, admin, {"repositoryId": str(REPO), "name": "reader", "scopes": ["reviews:read"]})
    assert reader.status_code == 201 and reader.json["tokenRecord"]["expiresAt"] is None


def test_listing_shows_metadata_and_last_use_never_the_value(client, pool, admin):
    value, token_id = create_token(pool, REPO, name="used")
    client.simulate_post("/api/v1/billing/checkout", headers=bearer(value))   # a use
    result = documented(client.simulate_get(PATH, params={"repositoryId": str(REPO)}, headers=bearer(admin)), "get")
    assert result.status_code == 200
    assert value not in result.text and admin not in result.text
    by_name = {t["name"]: t for t in result.json["tokens"]}
    assert set(by_name) == {"used", "bootstrap"}
    assert by_name["used"]["id"] == token_id and by_name["used"]["lastUsedAt"] is not None
    assert by_name["used"]["status"] == "active" and by_name["used"]["tokenPrefix"] == value[:12]


def test_revocation_is_immediate_and_permanent(client, pool, admin):
    value, token_id = create_token(pool, REPO, duration_days=30)
    assert client.simulate_post("/api/v1/billing/portal", headers=bearer(value)).status_code == 410
    result = documented(client.simulate_delete(PATH, params={"tokenId": token_id}, headers=bearer(admin)), "delete")
    assert (result.status_code, result.json["outcome"]) == (200, "revoked")
    refused = client.simulate_post("/api/v1/billing/portal", headers=bearer(value))
    assert (refused.status_code, refused.json["code"]) == (401, "token_revoked")   # before its expiry
    again = documented(client.simulate_delete(PATH, params={"tokenId": token_id}, headers=bearer(admin)), "delete")
    assert (again.status_code, again.json["outcome"]) == (200, "already_revoked")
    listing = client.simulate_get(PATH, params={"repositoryId": str(REPO)}, headers=bearer(admin))
    assert {t["id"]: t["status"] for t in listing.json["tokens"]}[token_id] == "revoked"


def test_a_token_can_revoke_itself(client, admin, owner):
    token_id = owner.execute("SELECT id FROM api_tokens").fetchone()["id"]
    assert client.simulate_delete(PATH, params={"tokenId": str(token_id)}, headers=bearer(admin)).status_code == 200
    assert client.simulate_get(PATH, params={"repositoryId": str(REPO)}, headers=bearer(admin)).status_code == 401


def test_expiry(pool, repos):
    created = dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc)
    value, _ = create_token(pool, REPO, duration_days=1, now=created)
    with pool.connection() as conn:
        verify = lambda at: sql_api.token_verify_v2(conn, token_sha256=api_tokens.digest(value),  # noqa: E731
                                                    now=at)["outcome"]
        assert verify(created + dt.timedelta(days=1, microseconds=-1)) == "valid"
        assert verify(created + dt.timedelta(days=1)) == "expired"


def test_last_used_is_written_at_most_once_a_minute(pool, owner, repos):
    value, token_id = create_token(pool, REPO)
    t0 = dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc)
    last_used = lambda: owner.execute("SELECT last_used_at FROM api_tokens").fetchone()["last_used_at"]  # noqa: E731
    with pool.connection() as conn:
        for seconds, expected in ((0, 0), (30, 0), (59, 0), (60, 60), (61, 60), (125, 125)):
            sql_api.token_verify_v2(conn, token_sha256=api_tokens.digest(value), now=t0 + dt.timedelta(seconds=seconds))
            assert last_used() == t0 + dt.timedelta(seconds=expected), seconds


# -- cross-repository probes -------------------------------------------------

def test_another_repositorys_tokens_are_out_of_reach(client, pool, admin):
    theirs, their_id = create_token(pool, OTHER_REPO, scopes=("admin",))
    probes = [
        create(client, admin, {"repositoryId": str(OTHER_REPO), "name": "x"}),
        documented(client.simulate_get(PATH, params={"repositoryId": str(OTHER_REPO)}, headers=bearer(admin)), "get"),
    ]
    assert [(p.status_code, p.json["code"]) for p in probes] == [(403, "repository_mismatch")] * 2
    # Revoking another repository's token id is not_found, exactly like a made-up id.
    for token_id in (their_id, "00000000-0000-4000-8000-000000000000"):
        result = documented(client.simulate_delete(PATH, params={"tokenId": token_id}, headers=bearer(admin)), "delete")
        assert (result.status_code, result.json["code"]) == (404, "not_found")
    assert client.simulate_post("/api/v1/billing/checkout", headers=bearer(theirs)).status_code == 410  # still valid


def test_the_token_endpoints_require_admin(client, pool, repos):
    value, token_id = create_token(pool, REPO, scopes=("runs:write", "reviews:read", "reviews:write"))
    results = [
        client.simulate_post(PATH, json={"repositoryId": str(REPO), "name": "x"}, headers=bearer(value)),
        client.simulate_get(PATH, params={"repositoryId": str(REPO)}, headers=bearer(value)),
        client.simulate_delete(PATH, params={"tokenId": token_id}, headers=bearer(value)),
    ]
    assert [(r.status_code, r.json["code"]) for r in results] == [(403, "insufficient_scope")] * 3


def test_repositories_that_cannot_get_a_token(pool, owner, repos):
    seed_repository(owner, account_id=101, installation_id=501, repository_id=9003, removed=True)
    outcomes = {}
    for repository_id in (9003, 424242):
        new = api_tokens.generate()
        with pool.connection() as conn:
            outcomes[repository_id] = sql_api.token_create(conn, repository_id=repository_id, name="x",
                                                           scopes=["admin"], duration_days=None,
                                                           token_sha256=new.sha256, token_prefix=new.prefix,
                                                           created_by="test")["outcome"]
    assert outcomes == {9003: "repository_removed", 424242: "repository_not_found"}
    assert count(owner, "api_tokens") == 0


# -- bad input: 400 with a stable code, nothing stored -----------------------

GOOD = {"repositoryId": str(REPO), "name": "ok"}


@pytest.mark.parametrize("body,code", [
    ({"name": "x"}, "invalid_repository_id"),
    ({**GOOD, "repositoryId": REPO}, "invalid_repository_id"),
    ({**GOOD, "repositoryId": "0"}, "invalid_repository_id"),
    ({**GOOD, "repositoryId": "12a"}, "invalid_repository_id"),
    ({"repositoryId": str(REPO)}, "invalid_name"),
    ({**GOOD, "name": ""}, "invalid_name"),
    ({**GOOD, "name": "x" * 101}, "invalid_name"),
    ({**GOOD, "name": "tab\there"}, "invalid_name"),
    ({**GOOD, "scopes": []}, "invalid_scopes"),
    ({**GOOD, "scopes": ["root"]}, "invalid_scopes"),
    ({**GOOD, "scopes": "admin"}, "invalid_scopes"),
    ({**GOOD, "durationDays": 0}, "invalid_duration_days"),
    ({**GOOD, "durationDays": 366}, "invalid_duration_days"),
    ({**GOOD, "durationDays": "30"}, "invalid_duration_days"),
    ({**GOOD, "durationDays": True}, "invalid_duration_days"),
    ({**GOOD, "durationDays": 1.5}, "invalid_duration_days"),
])
def test_invalid_create_requests(client, owner, admin, body, code):
    result = create(client, admin, body)
    assert (result.status_code, result.json["code"]) == (400, code)
    assert count(owner, "api_tokens") == 1   # the admin token only


@pytest.mark.parametrize("raw,content_type,status,code", [
    (b"{oops", "application/json", 400, "malformed_json"),
    (b"[]", "application/json", 400, "malformed_json"),
    (b'{"repositoryId": "9001", "name": "x"}', "text/plain", 415, "invalid_content_type"),
])
def test_unreadable_create_bodies(client, owner, admin, raw, content_type, status, code):
    result = client.simulate_post(PATH, body=raw, headers=bearer(admin, **{"Content-Type": content_type}))
    assert (result.status_code, result.json["code"]) == (status, code)
    documented(result, "post")
    assert count(owner, "api_tokens") == 1


def test_invalid_list_and_revoke_parameters(client, owner, admin):
    for params in ({}, {"repositoryId": "abc"}):
        result = documented(client.simulate_get(PATH, params=params, headers=bearer(admin)), "get")
        assert (result.status_code, result.json["code"]) == (400, "invalid_repository_id")
    for params in ({}, {"tokenId": "not-a-uuid"}):
        result = documented(client.simulate_delete(PATH, params=params, headers=bearer(admin)), "delete")
        assert (result.status_code, result.json["code"]) == (400, "invalid_token_id")
    assert owner.execute("SELECT count(*) AS n FROM api_tokens WHERE revoked_at IS NOT NULL").fetchone()["n"] == 0


def test_the_api_role_cannot_write_api_tokens_directly(pool, repos, admin):
    with pool.connection() as conn:
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("UPDATE boardready.api_tokens SET revoked_at = NULL, scopes = ARRAY['admin']")
    with pool.connection() as conn:
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("SELECT token_sha256 FROM boardready.api_tokens")

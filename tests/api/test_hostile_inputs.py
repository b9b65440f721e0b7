"""Every bad input a 4xx with a stable code, nothing stored: deep JSON, NUL and
lone surrogates, huge numbers, foreign charsets, echoed property names, on
each endpoint that takes a body (the signed ones validly signed)."""
from __future__ import annotations

import json

import emulator
import pytest
from falcon import testing

from app.web.bodies import parse_json_object
from app.web.errors import ApiError
from app.web.wsgi import create_app
from tests.helpers.paths import webhook_fixture_json
from tests.helpers.access import (MARKETPLACE_PATH, bearer, create_token, marketplace_body, post_marketplace,
                                          seed_repository)
from tests.helpers.service import count, post_webhook, webhook_headers
from tests.helpers.host import make_hostkit
from tests.helpers.results import DispatchedRun, envelope, finding, make_result

REPO = 7001
NUL = "\u0000"
LONE_SURROGATE = b'"\\ud800"'   # an escape JSON allows and no UTF-8 text can hold


@pytest.fixture
def repo(owner):
    return seed_repository(owner, account_id=11, installation_id=21, repository_id=REPO)


def deep(levels: int) -> bytes:
    return b'{"a": ' + b"[" * levels + b"]" * levels + b"}"


def with_raw_value(payload: dict, key: str, raw_value: bytes) -> bytes:
    """The payload's JSON with `key`'s value replaced by raw JSON text."""
    marker = "__raw_value__"
    payload = {**payload, key: marker}
    return json.dumps(payload).encode().replace(json.dumps(marker).encode(), raw_value)


def assert_refused(result, status: int, code: str):
    assert (result.status_code, result.json["code"]) == (status, code), result.json
    assert len(result.json["message"]) < 200


# -- the parser on its own ------------------------------------------------------------

@pytest.mark.parametrize("raw, code", [
    (deep(5000), "too_deep"),
    (deep(64), "too_deep"),                                  # 65 levels with the object around it
    (b'{"a": "x\\u0000y"}', "invalid_text"),
    (b'{"x\\u0000": 1}', "invalid_text"),
    (b'{"a": [' + LONE_SURROGATE + b"]}", "invalid_text"),
    (b'{"a": 1099511627776000000}', "number_out_of_range"),
    (b'{"a": 1e300}', "number_out_of_range"),
    (b'{"a": NaN}', "malformed_json"),
    (b'{"a": "\xff"}', "malformed_json"),
])
def test_the_parser_refuses_with_a_stable_code(raw, code):
    with pytest.raises(ApiError) as refused:
        parse_json_object(raw)
    assert (refused.value.status, refused.value.code) == (400, code)


def test_the_parser_keeps_what_is_fine():
    assert parse_json_object(deep(63)) and parse_json_object(b'{"a": "\\\\u0000 is text", "n": 9007199254740991}')


# -- the lifecycle webhook: validly signed, never 500 or 503 --------------------------------

def _pull_request(**changes) -> dict:
    payload = webhook_fixture_json("pull_request.opened.12.json")
    payload.update(changes)
    return payload


@pytest.mark.parametrize("body, code", [
    (deep(5000), "too_deep"),
    (json.dumps(_pull_request(action="opened" + NUL)).encode(), "invalid_text"),
    (with_raw_value(_pull_request(), "action", LONE_SURROGATE), "invalid_text"),
    (json.dumps({**_pull_request(), "pull_request": {**_pull_request()["pull_request"], "number": 2**40}}).encode(),
     "number_out_of_range"),
    (json.dumps({**_pull_request(), "repository": {**_pull_request()["repository"], "id": 2**60}}).encode(),
     "number_out_of_range"),
    (json.dumps({**_pull_request(), "pull_request": {**_pull_request()["pull_request"],
                                                      "head": {"sha": "a" * 40, "ref": "main" + NUL}}}).encode(),
     "invalid_text"),
])
def test_signed_webhooks_that_cannot_be_stored_are_400(client, owner, body, code):
    assert_refused(post_webhook(client, body, "pull_request"), 400, code)
    assert count(owner, "webhook_inbox") == 0


def test_the_lifecycle_webhook_judges_only_the_fields_it_keeps(client, owner):
    """The inbox keeps the normalized actions, never the payload: a NUL, a huge
    number or deep nesting in a field nobody reads is no reason to lose the
    event (the code host does not send it again)."""
    payload = _pull_request(number=2**70)
    payload["pull_request"]["body"] = "pasted from a terminal" + NUL
    payload["extra"] = json.loads(deep(200))
    result = post_webhook(client, json.dumps(payload).encode(), "pull_request")
    assert result.status_code == 202, result.json
    stored = owner.execute("SELECT actions FROM webhook_inbox").fetchone()["actions"]
    assert stored["pullRequest"]["number"] == payload["pull_request"]["number"]
    assert "body" not in stored["pullRequest"]


def test_foreign_charsets_are_415(client, owner):
    body = json.dumps(_pull_request()).encode("utf-16")
    headers = webhook_headers(body, "pull_request") | {"Content-Type": "application/json; charset=utf-16"}
    assert_refused(client.simulate_post("/api/host/webhook", body=body, headers=headers), 415, "invalid_content_type")
    headers["Content-Type"] = "application/json; boundary=x"
    assert_refused(client.simulate_post("/api/host/webhook", body=body, headers=headers), 415, "invalid_content_type")
    assert count(owner, "webhook_inbox") == 0


# -- the marketplace webhook -----------------------------------------------------------------

@pytest.mark.parametrize("mutate, code", [
    (lambda p: p["marketplace_purchase"]["account"].update(login="acme" + NUL), "invalid_text"),
    (lambda p: p.update(effective_date="2024-01-01T00:00:00" + NUL), "invalid_text"),
    (lambda p: p["marketplace_purchase"]["account"].update(id=2**70), "number_out_of_range"),
])
def test_marketplace_fields_that_cannot_be_stored_are_400(client, owner, mutate, code):
    payload = json.loads(marketplace_body("marketplace_purchase.purchased.0.json"))
    mutate(payload)
    assert_refused(post_marketplace(client, json.dumps(payload).encode()), 400, code)
    assert count(owner, "marketplace_deliveries") == 0


def test_marketplace_lone_surrogate_is_400(client, owner):
    payload = json.loads(marketplace_body("marketplace_purchase.purchased.0.json"))
    body = with_raw_value(payload, "action", LONE_SURROGATE)
    assert_refused(post_marketplace(client, body), 400, "invalid_text")
    assert MARKETPLACE_PATH


# -- bearer endpoints ------------------------------------------------------------------

def _ingest(**extra) -> dict:
    body = make_result("b" * 40, "blocked", [finding(1, "error", line=5)])
    return {**body, "repositoryId": str(REPO), **extra}


@pytest.mark.parametrize("body, code", [
    (json.dumps(_ingest(findings=[finding(1, "error", line=2**40)])).encode(), "invalid_run_result"),
    (json.dumps(_ingest(findings=[finding(1, "error", line=5.0)])).encode(), "invalid_run_result"),
    (json.dumps(_ingest(findings=[finding(1, "error", message="bad" + NUL)])).encode(), "invalid_text"),
    (with_raw_value(_ingest(), "headSha", LONE_SURROGATE), "invalid_text"),
    (json.dumps({**_ingest(), "nested": json.loads(deep(200))}).encode(), "too_deep"),
])
def test_ingest_refuses_what_the_database_could_not_store(client, pool, owner, repo, body, code):
    token, _ = create_token(pool, REPO, scopes=["runs:write"])
    answer = client.simulate_post("/api/v1/runs", body=body, headers=bearer(token, **{
        "Content-Type": "application/json"}))
    assert_refused(answer, 400, code)
    assert count(owner, "run_results") == 0


@pytest.mark.parametrize("body, code", [
    (json.dumps({"attemptId": "1-" + "0" * 32, "result": _ingest(score=2**40)}).encode(), "invalid_run_result"),
    (json.dumps({"attemptId": "1-" + "0" * 32 + NUL, "result": {}}).encode(), "invalid_text"),
    # An unknown property is dropped (the spec's versioning section): what is left lacks the result.
    (json.dumps({"attemptId": "1-" + "0" * 32, "x" * 200_000: 1}).encode(), "invalid_run_result"),
])
def test_the_bearer_result_refuses_with_4xx(client, pool, owner, repo, body, code):
    token, _ = create_token(pool, REPO, scopes=["runs:write"])
    answer = client.simulate_post("/api/v1/runs/result", body=body, headers=bearer(token, **{
        "Content-Type": "application/json"}))
    assert_refused(answer, 400, code)


def test_an_unknown_property_is_dropped_never_echoed(client, pool, repo):
    token, _ = create_token(pool, REPO, scopes=["runs:write"])
    answer = client.simulate_post("/api/v1/runs/result", headers=bearer(token), json={
        "attemptId": "1-" + "0" * 32, "<script>" + "y" * 200_000: 1})
    assert_refused(answer, 400, "invalid_run_result")
    assert "<script>" not in answer.json["message"]


# -- the OIDC result ------------------------------------------------------------------------

@pytest.fixture
def host():
    with emulator.start() as handle:
        yield handle


def test_the_oidc_result_refuses_bad_text_and_checks_its_token_first(host, pool, db_url, owner):
    kit = make_hostkit(host, SERVICE_OIDC_ISSUER=host.oidc_issuer)
    client = testing.TestClient(create_app(kit.config, pool))
    run = DispatchedRun(kit, client, pool, db_url, owner)
    result = make_result(run.head_sha, "ready", [finding(1, "low", message="fine" + NUL)])
    assert_refused(run.post(client, envelope(run.attempt_ref, result)), 400, "invalid_text")
    surrogate = with_raw_value(envelope(run.attempt_ref, make_result(run.head_sha)), "digest", LONE_SURROGATE)
    answer = client.simulate_post("/api/v1/runs/github-actions-result", body=surrogate, headers=bearer(
        run.token(), **{"Content-Type": "application/json"}))
    assert_refused(answer, 400, "invalid_text")
    # A body the contract cannot need, without a valid token: refused for the token, not read.
    unauthenticated = client.simulate_post("/api/v1/runs/github-actions-result", body=b"{" + b" " * 9_000_000,
                                           headers=bearer("not.a.token", **{"Content-Type": "application/json"}))
    assert_refused(unauthenticated, 401, "oidc_malformed_token")
    assert count(owner, "run_results") == 0

"""The operator API: enablement, token check, its own failure limiter, and
the bounded dead-letter listing resolved through one installation."""
from __future__ import annotations

import datetime as dt

import pytest
from falcon import testing

from app.web.wsgi import create_app
from contracts import openapi_response_validator
from tests.helpers.access import (OPERATOR_ACTOR, OPERATOR_ENV, OPERATOR_TOKEN, bearer, dead_letter,
                                          install_clock, marketplace_body, post_marketplace, seed_repository)
from tests.helpers.service import make_config

LIST = "/api/v1/operator/installations/{installationId}/dead-letters"
START = dt.datetime(2024, 5, 1, 12, 0, 0, tzinfo=dt.timezone.utc)


@pytest.fixture
def clock(monkeypatch):
    return install_clock(monkeypatch, START)


@pytest.fixture
def ops(pool):
    return testing.TestClient(create_app(make_config(**OPERATOR_ENV), pool))


def listing(client, installation_id, token=OPERATOR_TOKEN, **params):
    path = LIST.replace("{installationId}", str(installation_id))
    result = client.simulate_get(path, params=params, headers=bearer(token, **{"X-Forwarded-For": "198.51.100.4"}))
    openapi_response_validator(LIST, "get", result.status_code).validate(result.json)
    return result


# -- enablement and the operator token ----------------------------------------

@pytest.mark.parametrize("env", [
    {},
    {"SERVICE_OPERATOR_API_TOKEN": OPERATOR_TOKEN},
    {"SERVICE_OPERATOR_ACTOR_ID": OPERATOR_ACTOR},
    {"SERVICE_OPERATOR_API_TOKEN": "x" * 31, "SERVICE_OPERATOR_ACTOR_ID": OPERATOR_ACTOR},
    {"SERVICE_OPERATOR_API_TOKEN": "has a space " + "x" * 30, "SERVICE_OPERATOR_ACTOR_ID": OPERATOR_ACTOR},
    {"SERVICE_OPERATOR_API_TOKEN": OPERATOR_TOKEN, "SERVICE_OPERATOR_ACTOR_ID": "alice@example.com"},
])
def test_disabled_unless_both_are_set_and_valid(pool, clock, env):
    config = make_config(**env)
    client = testing.TestClient(create_app(config, pool))
    result = listing(client, 501)
    assert (result.status_code, result.json["code"]) == (503, "unavailable")
    replay = client.simulate_post(LIST.replace("{installationId}", "501") + "/job/1/replay",
                                  headers=bearer(OPERATOR_TOKEN, **{"Idempotency-Key": "k"}))
    assert (replay.status_code, replay.json["code"]) == (503, "unavailable")
    if env:
        assert set(config.invalid) <= {"SERVICE_OPERATOR_API_TOKEN", "SERVICE_OPERATOR_ACTOR_ID"}
        assert OPERATOR_TOKEN not in repr(config)


def test_token_checks(ops, pool, owner, clock):
    assert listing(ops, 501).status_code == 200
    for headers in ({}, {"Authorization": OPERATOR_TOKEN}, {"Authorization": "Basic " + OPERATOR_TOKEN},
                    bearer(OPERATOR_TOKEN[:-1]), bearer(OPERATOR_TOKEN + "x"), bearer(OPERATOR_TOKEN[:-1] + "y"),
                    bearer("é" * len(OPERATOR_TOKEN))):
        result = ops.simulate_get(LIST.replace("{installationId}", "501"), headers=headers)
        assert (result.status_code, result.json["code"]) == (401, "invalid_operator_token")
    # A bearer API token is not an operator token either.
    assert listing(ops, 501, token="svc_live_" + "A" * 43).status_code == 401
    # Changing the configured token makes the previous one 401.
    rotated = testing.TestClient(create_app(make_config(**{**OPERATOR_ENV,
                                                          "SERVICE_OPERATOR_API_TOKEN": "new-" + "y" * 40}), pool))
    assert listing(rotated, 501).status_code == 401
    assert listing(rotated, 501, token="new-" + "y" * 40).status_code == 200


def test_the_operator_limiter(ops, client, owner, clock):
    path = LIST.replace("{installationId}", "501")
    for n in range(20):
        shape = ({"Authorization": "garbage"} if n % 2 else bearer("wrong-" + "z" * 40))  # malformed shapes count too
        assert ops.simulate_get(path, headers={**shape, "X-Forwarded-For": "198.51.100.4"}).status_code == 401
    limited = listing(ops, 501)                      # the correct token, over the limit: before the comparison
    assert (limited.status_code, limited.json["code"]) == (429, "too_many_auth_failures")
    assert limited.headers["Retry-After"] == "60"
    counts = {(r["limiter"], r["client_key"]): r["failures"] for r in owner.execute("SELECT * FROM auth_failures")}
    assert counts == {("operator", "198.51.100.4"): 20}
    # Separate counters: the bearer path from the same client is not limited.
    bearer_try = client.simulate_post("/api/v1/billing/checkout", headers={"X-Forwarded-For": "198.51.100.4"})
    assert bearer_try.status_code == 401
    clock.advance(minutes=1)
    assert listing(ops, 501).status_code == 200


# -- the listing ----------------------------------------------------------------

def test_listing_is_bounded_and_resolved_through_the_installation(ops, client, owner, clock):
    seed_repository(owner, account_id=101, installation_id=501, repository_id=1296269, full_name="acme/board")
    mine = dead_letter(client, owner, 501, "d-1", START - dt.timedelta(minutes=5))
    theirs = dead_letter(client, owner, 502, "d-2", START - dt.timedelta(minutes=4), repository_id=555)
    result = listing(ops, 501)
    assert result.status_code == 200
    assert result.json == {"ok": True, "nextBefore": None, "items": [{
        "itemType": "job", "itemId": str(mine), "repository": "acme/board", "reasonCode": "host_unavailable",
        "errorClass": "HostError", "attempts": 3, "failedAt": "2024-05-01T11:55:00Z", "replaySafe": True}]}
    assert str(theirs) not in [i["itemId"] for i in result.json["items"]]
    assert "headSha" not in result.text and "pullRequest" not in result.text    # never actions
    assert [i["itemId"] for i in listing(ops, 502).json["items"]] == [str(theirs)]
    assert listing(ops, 999).json["items"] == []


def test_paging_with_before_and_ties(ops, client, owner, clock):
    base = START - dt.timedelta(hours=1)
    # Failure times: three distinct, three sharing one instant across the first page's end, four more.
    times = [base - dt.timedelta(seconds=s) for s in (1, 2, 3, 4, 4, 4, 5, 6, 7, 8)]
    ids = [dead_letter(client, owner, 501, f"p-{n}", t) for n, t in enumerate(times)]
    seen, before, pages = [], None, []
    while True:
        params = {"limit": "4"} if before is None else {"limit": "4", "before": before}
        page = listing(ops, 501, **params).json
        pages.append(len(page["items"]))
        seen += [int(i["itemId"]) for i in page["items"]]
        before = page["nextBefore"]
        if before is None:
            break
    assert sorted(seen) == sorted(ids) and len(seen) == len(set(seen))   # every item once
    assert pages == [3, 4, 3]     # the first page stops before the tie instead of splitting it
    assert [i["itemId"] for i in listing(ops, 501).json["items"]][:1] == [str(ids[0])]   # newest first
    assert len(listing(ops, 501).json["items"]) == 10                                     # default limit 50


def test_a_group_larger_than_a_page_is_reached_with_the_tie_breaker(ops, client, owner, clock):
    # One claim dead-letters every expired lease with one failed_at: seven items, pages of three.
    instant = START - dt.timedelta(hours=1)
    ids = [dead_letter(client, owner, 501, f"g-{n}", instant) for n in range(7)]
    older = dead_letter(client, owner, 501, "older", instant - dt.timedelta(seconds=1))
    seen, params, ties = [], {"limit": "3"}, []
    while True:
        page = listing(ops, 501, **params).json
        seen += [int(i["itemId"]) for i in page["items"]]
        ties.append(page.get("nextBeforeId"))
        if page["nextBefore"] is None:
            break
        params = {"limit": "3", "before": page["nextBefore"]}
        if page.get("nextBeforeId"):
            params["beforeId"] = page["nextBeforeId"]
    assert seen == sorted(ids, reverse=True) + [older]    # all reachable, each once, in order
    assert ties[0] == f"job:{max(ids) - 2}"
    refused = listing(ops, 501, beforeId="job:1")          # without before
    assert (refused.status_code, refused.json["code"]) == (400, "invalid_before_id")


@pytest.mark.parametrize("params,code", [
    ({"limit": "0"}, "invalid_limit"), ({"limit": "101"}, "invalid_limit"), ({"limit": "ten"}, "invalid_limit"),
    ({"before": "yesterday"}, "invalid_before"), ({"before": "2024-05-01T00:00:00"}, "invalid_before"),
    # Digits str.isdigit() admits and int() refuses, and more digits than int() parses: 400, never 500.
    ({"limit": "\u00b2"}, "invalid_limit"), ({"limit": "\uff15"}, "invalid_limit"), ({"limit": "9" * 5000}, "invalid_limit"),
])
def test_invalid_listing_parameters(ops, clock, params, code):
    result = listing(ops, 501, **params)
    assert (result.status_code, result.json["code"]) == (400, code)
    assert listing(ops, "0").json["code"] == "invalid_installation_id"
    assert listing(ops, "abc").json["code"] == "invalid_installation_id"
    assert listing(ops, "\uff15\uff10\uff11").json["code"] == "invalid_installation_id"   # fullwidth 501
    assert listing(ops, "9" * 5000).json["code"] == "invalid_installation_id"


def test_a_canceled_accounts_jobs_are_not_replay_safe(ops, client, owner, clock):
    seed_repository(owner, account_id=18404719, installation_id=501, repository_id=1296269, login="username")
    dead_letter(client, owner, 501, "c-1", START)
    post_marketplace(client, marketplace_body("marketplace_purchase.cancelled.1.json", account_id=18404719))
    assert [i["replaySafe"] for i in listing(ops, 501, before="2030-01-01T00:00:00Z").json["items"]] == [False]

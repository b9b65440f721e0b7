"""The operator API for legal holds: place, list, release; the Idempotency-Key
rules; the operator gate (503, 401, 429); refusals that store nothing; an
erasure that a release resumes; concurrent placements with one key. Every
answer is validated against the OpenAPI document."""
from __future__ import annotations

import datetime as dt

import pytest
from falcon import testing

from app import database, sql_api
from app.config import RetentionSettings
from app.web.wsgi import create_app
from contracts import openapi_response_validator
from tests.helpers.access import (OPERATOR_ACTOR, OPERATOR_ENV, OPERATOR_TOKEN, bearer, install_clock,
                                          seed_repository)
from tests.helpers.service import make_config, race
from tests.helpers.retention import audit, cancel, erasure_request
from workers.retention import RetentionWorker

HOLDS = "/api/v1/operator/accounts/{accountId}/legal-holds"
HOLD = HOLDS + "/{holdId}"
ACCOUNT, OTHER = 28_536_653, 28_536_654
ACTOR = f"operator:{OPERATOR_ACTOR}"


@pytest.fixture(autouse=True)
def clock(monkeypatch):
    return install_clock(monkeypatch, dt.datetime(2024, 6, 1, 12, 0, tzinfo=dt.timezone.utc))


@pytest.fixture
def ops(pool, owner):
    seed_repository(owner, account_id=ACCOUNT, installation_id=801, repository_id=8_010_001)
    seed_repository(owner, account_id=OTHER, installation_id=802, repository_id=8_020_001, login="other")
    return testing.TestClient(create_app(make_config(**OPERATOR_ENV), pool))


def checked(result, template: str, method: str):
    openapi_response_validator(template, method, result.status_code).validate(result.json)
    return result


def place(client, body: dict | None = None, key: str | None = "key-1", account=ACCOUNT, headers=None, **kwargs):
    extra = {} if key is None else {"Idempotency-Key": key}
    result = client.simulate_post(HOLDS.format(accountId=account),
                                  json=body if body is not None else {"reason": "litigation 2024-17"},
                                  headers=headers if headers is not None else bearer(OPERATOR_TOKEN, **extra),
                                  **kwargs)
    return checked(result, HOLDS, "post")


def release(client, hold_id, key: str | None = "rel-1", account=ACCOUNT, headers=None):
    extra = {} if key is None else {"Idempotency-Key": key}
    result = client.simulate_delete(HOLD.format(accountId=account, holdId=hold_id),
                                    headers=headers if headers is not None else bearer(OPERATOR_TOKEN, **extra))
    return checked(result, HOLD, "delete")


def listing(client, account=ACCOUNT, **params):
    result = client.simulate_get(HOLDS.format(accountId=account), params=params, headers=bearer(OPERATOR_TOKEN))
    return checked(result, HOLDS, "get")


def holds(owner) -> list[dict]:
    return owner.execute("SELECT * FROM legal_holds ORDER BY id").fetchall()


def test_place_list_and_release_each_audited_once(ops, owner):
    placed = place(ops, {"reason": "litigation 2024-17", "reference": "CASE-17"})
    assert (placed.status_code, placed.json["outcome"], placed.json["accountId"]) == (201, "placed", str(ACCOUNT))
    [hold] = holds(owner)
    assert (hold["active"], hold["reason"], hold["reference"], hold["placed_by"]) == (
        True, "litigation 2024-17", "CASE-17", ACTOR)
    [event] = audit(owner, "control_plane.legal_hold_placed")
    assert str(event["id"]) == placed.json["auditEventId"] and placed.json["holdId"] == str(hold["id"])
    assert (event["actor"], event["item_type"], event["item_id"]) == (ACTOR, "legal_hold", str(hold["id"]))
    assert event["details"] == {"accountId": ACCOUNT, "holdId": hold["id"], "activeHolds": 1}   # never the reason

    again = place(ops, {"reason": "litigation 2024-17", "reference": "CASE-17"})
    assert (again.status_code, again.json) == (200, {**placed.json, "outcome": "already_applied"})
    assert len(holds(owner)) == 1

    page = listing(ops)
    assert page.status_code == 200 and page.json["nextBefore"] is None
    assert page.json["items"] == [{"holdId": str(hold["id"]), "active": True, "reason": "litigation 2024-17",
                                   "reference": "CASE-17", "placedBy": ACTOR, "placedAt": placed.json["placedAt"],
                                   "releasedBy": None, "releasedAt": None}]

    released = release(ops, hold["id"])
    assert (released.status_code, released.json["outcome"], released.json["erasureResumed"]) == (200, "released", False)
    [event] = audit(owner, "control_plane.legal_hold_released")
    assert str(event["id"]) == released.json["auditEventId"] and event["actor"] == ACTOR
    assert release(ops, hold["id"]).json == {**released.json, "outcome": "already_applied"}
    later = release(ops, hold["id"], key="rel-2")
    assert (later.json["outcome"], later.json["auditEventId"]) == ("already_released", None)
    assert len(audit(owner, "control_plane.legal_hold_released")) == 1
    [item] = listing(ops).json["items"]
    assert (item["active"], item["releasedBy"]) == (False, ACTOR)


def test_the_same_key_for_another_request_is_refused(ops, owner):
    hold_id = place(ops).json["holdId"]
    for probe in (dict(body={"reason": "another reason"}), dict(account=OTHER),
                  dict(body={"reason": "litigation 2024-17", "reference": "X"})):
        result = place(ops, **probe)
        assert (result.status_code, result.json["code"]) == (409, "idempotency_key_reused"), probe
    result = release(ops, hold_id, key="key-1")                     # a placement's key is not a release's
    assert (result.status_code, result.json["code"]) == (409, "idempotency_key_reused")
    assert len(holds(owner)) == 1 and holds(owner)[0]["active"]


def test_not_found_for_unknown_accounts_and_other_accounts_holds(ops, owner):
    mine = place(ops).json["holdId"]
    assert place(ops, key="k-x", account=99).json["code"] == "account_not_found"
    assert listing(ops, account=99).status_code == 404
    for account, hold in ((OTHER, mine), (ACCOUNT, "987654")):
        result = release(ops, hold, key=f"k-{account}-{hold}", account=account)
        assert (result.status_code, result.json["code"]) == (404, "not_found")
    assert holds(owner)[0]["active"] and len(holds(owner)) == 1
    assert len(audit(owner, "control_plane.legal_hold_released")) == 0


def test_pages_newest_first(ops):
    ids = [place(ops, {"reason": f"reason {n}"}, key=f"k-{n}").json["holdId"] for n in range(3)]
    first = listing(ops, limit="2")
    assert [i["holdId"] for i in first.json["items"]] == ids[:0:-1] and first.json["nextBefore"] == ids[1]
    second = listing(ops, limit="2", before=first.json["nextBefore"])
    assert [i["holdId"] for i in second.json["items"]] == ids[:1] and second.json["nextBefore"] is None
    assert listing(ops, account=OTHER).json["items"] == []


@pytest.mark.parametrize("body,key,account,code,status", [
    ({"reason": "x"}, "k", "0", "invalid_account_id", 400),
    ({"reason": "x"}, "k", "abc", "invalid_account_id", 400),
    ({"reason": "x"}, None, ACCOUNT, "missing_idempotency_key", 400),
    ({"reason": "x"}, "has space", ACCOUNT, "invalid_idempotency_key", 400),
    ({}, "k", ACCOUNT, "invalid_reason", 400),
    ({"reason": ""}, "k", ACCOUNT, "invalid_reason", 400),
    ({"reason": "   "}, "k", ACCOUNT, "invalid_reason", 400),
    ({"reason": "r" * 1001}, "k", ACCOUNT, "invalid_reason", 400),
    ({"reason": "line\nbreak"}, "k", ACCOUNT, "invalid_reason", 400),
    ({"reason": 42}, "k", ACCOUNT, "invalid_reason", 400),
    ({"reason": "x", "reference": "r" * 201}, "k", ACCOUNT, "invalid_reference", 400),
    ({"reason": "x", "reference": ""}, "k", ACCOUNT, "invalid_reference", 400),
    ({"reason": "x", "reference": None}, "k", ACCOUNT, "invalid_reference", 400),
    ({"reason": "x\u0000"}, "k", ACCOUNT, "invalid_text", 400),
])
def test_bad_placements_store_nothing(ops, owner, body, key, account, code, status):
    result = place(ops, body, key=key, account=account)
    assert (result.status_code, result.json["code"]) == (status, code)
    assert holds(owner) == [] and owner.execute("SELECT count(*) AS n FROM legal_hold_requests").fetchone()["n"] == 0


def test_bodies_that_are_not_json_objects(ops, owner):
    path = HOLDS.format(accountId=ACCOUNT)
    headers = bearer(OPERATOR_TOKEN, **{"Idempotency-Key": "k"})
    for kwargs, expected in ((dict(body=b"{nope", headers={**headers, "Content-Type": "application/json"}),
                              (400, "malformed_json")),
                             (dict(body=b"[]", headers={**headers, "Content-Type": "application/json"}),
                              (400, "malformed_json")),
                             (dict(body=b"reason=x", headers={**headers, "Content-Type": "text/plain"}),
                              (415, "invalid_content_type")),
                             (dict(body=b"{" + b" " * 20000 + b"}", headers={**headers,
                                                                              "Content-Type": "application/json"}),
                              (413, "payload_too_large"))):
        result = checked(ops.simulate_post(path, **kwargs), HOLDS, "post")
        assert (result.status_code, result.json["code"]) == expected
    assert holds(owner) == []


def test_bad_releases(ops, owner):
    hold_id = place(ops).json["holdId"]
    for hold, key, code in (("x", "k", "invalid_hold_id"), ("0", "k", "invalid_hold_id"),
                            (hold_id, None, "missing_idempotency_key"), (hold_id, "é", "invalid_idempotency_key")):
        result = release(ops, hold, key=key)
        assert (result.status_code, result.json["code"]) == (400, code)
    assert holds(owner)[0]["active"]


def test_the_operator_gate(pool, ops, owner, clock):
    disabled = testing.TestClient(create_app(make_config(), pool))
    assert place(disabled).json["code"] == "unavailable" and listing(disabled).status_code == 503
    assert release(disabled, 1).status_code == 503
    wrong = bearer("wrong-" + "z" * 40, **{"Idempotency-Key": "k", "X-Forwarded-For": "198.51.100.4"})
    for _ in range(20):
        result = place(ops, headers=wrong)
        assert (result.status_code, result.json["code"]) == (401, "invalid_operator_token")
    right = bearer(OPERATOR_TOKEN, **{"Idempotency-Key": "k", "X-Forwarded-For": "198.51.100.4"})
    limited = place(ops, headers=right)                             # even the right token, from that client
    assert (limited.status_code, limited.json["code"]) == (429, "too_many_auth_failures")
    assert int(limited.headers["Retry-After"]) > 0
    assert listing(ops).status_code == 200                          # another client is not limited
    assert holds(owner) == []
    clock.advance(minutes=1)
    assert place(ops, headers=right).status_code == 201


def test_unavailable_when_the_database_is_down():
    unreachable = database.create_pool("postgresql://nobody@127.0.0.1:1/none", max_size=2, name="down")
    try:
        down = testing.TestClient(create_app(make_config(SERVICE_DATABASE_ACQUIRE_TIMEOUT_MS="50", **OPERATOR_ENV),
                                             unreachable))
        result = place(down)
        assert (result.status_code, result.json["code"]) == (503, "unavailable")
    finally:
        unreachable.close()


def test_releasing_the_last_hold_resumes_a_blocked_erasure(ops, owner, pool, client):
    cancel(client, ACCOUNT, "2024-04-01T00:00:00+00:00")
    hold_id = place(ops).json["holdId"]
    due = dt.datetime(2024, 5, 1, tzinfo=dt.timezone.utc)
    sweeper = RetentionWorker(RetentionSettings(), pool)
    assert sweeper.erasure_step(now=due)["outcome"] == "blocked"
    assert erasure_request(owner, ACCOUNT)["status"] == "blocked_legal_hold"
    released = release(ops, hold_id)
    assert (released.json["outcome"], released.json["erasureResumed"]) == ("released", True)
    assert erasure_request(owner, ACCOUNT)["status"] == "pending"
    assert sweeper.sweep_once(now=due).erasures[-1]["outcome"] == "completed"


def test_concurrent_placements_with_one_key_place_one_hold(ops, owner, db_url):
    results = race(db_url, 4, lambda conn: sql_api.legal_hold_place(conn, account_id=ACCOUNT, reason="litigation",
                                                                    reference=None, idempotency_key="race-key",
                                                                    actor=ACTOR))
    assert sorted(r["outcome"] for r in results) == ["already_applied"] * 3 + ["placed"]
    assert len({r["hold_id"] for r in results}) == 1 and len({r["audit_event_id"] for r in results}) == 1
    assert len(holds(owner)) == 1 and len(audit(owner, "control_plane.legal_hold_placed")) == 1

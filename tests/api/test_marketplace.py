"""POST /api/host/marketplace/webhook: every row of the spec's marketplace
account table on the real marketplace_purchase payloads, with its side effects
(token revocation, erasure request, legal hold, blocked lifecycle jobs)."""
from __future__ import annotations

import datetime as dt
import json

import pytest

from contracts import openapi_response_validator
from tests.helpers.paths import WEBHOOK_FIXTURES, webhook_fixture, webhook_fixture_json
from tests.helpers.access import (MARKETPLACE_PATH, create_token, marketplace_body, post_marketplace,
                                          seed_repository)
from tests.helpers.service import WEBHOOK_SECRET, count, make_config, make_lifecycle_jobs, post_webhook, webhook_headers

PURCHASED = "marketplace_purchase.purchased.0.json"
CANCELLED = "marketplace_purchase.cancelled.1.json"
CHANGED = "marketplace_purchase.changed.2.json"
ACCOUNT = 18404719           # the purchased and changed payloads' organization
T1, T2, T3 = "2024-03-01T00:00:00+00:00", "2024-03-02T00:00:00+00:00", "2024-03-03T00:00:00+00:00"


def deliver(client, name, status=200, **changes):
    result = post_marketplace(client, marketplace_body(name, **changes))
    assert result.status_code == status, result.json
    openapi_response_validator(MARKETPLACE_PATH, "post", status).validate(result.json)
    return result.json


def account(owner, account_id=ACCOUNT):
    return owner.execute("SELECT * FROM marketplace_accounts WHERE account_id = %s", (account_id,)).fetchone()


def erasures(owner, account_id=ACCOUNT):
    return owner.execute("SELECT * FROM erasure_requests WHERE account_id = %s ORDER BY id", (account_id,)).fetchall()


def at(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(text)


# -- the real payloads -------------------------------------------------------

@pytest.mark.parametrize("name", sorted(p.name for p in WEBHOOK_FIXTURES.glob("marketplace_purchase.*.json")))
def test_real_marketplace_payloads(client, owner, name):
    payload = webhook_fixture_json(name)
    acct = payload["marketplace_purchase"]["account"]
    result = post_marketplace(client, webhook_fixture(name), delivery_id=f"m-{name}")
    assert result.status_code == 200, result.json
    openapi_response_validator(MARKETPLACE_PATH, "post", 200).validate(result.json)
    delivery = owner.execute("SELECT * FROM marketplace_deliveries").fetchone()
    assert delivery["idempotency_key"] == f"host-marketplace:m-{name}"
    assert (delivery["action"], delivery["account_id"]) == (payload["action"], acct["id"])
    assert delivery["effective_date"] == at(payload["effective_date"])
    assert delivery["payload_bytes"] == len(webhook_fixture(name))
    state = account(owner, acct["id"])

    if payload["action"] == "purchased":
        assert result.json["outcome"] == "applied"
        assert (state["state"], state["tier"]) == ("active", "free")
        assert owner.execute("SELECT login, type FROM accounts WHERE id = %s", (acct["id"],)).fetchone() == {
            "login": acct["login"], "type": acct["type"]}
    elif payload["action"] == "cancelled":
        assert result.json["outcome"] == "applied"
        assert state["state"] == "canceled"
        [erasure] = erasures(owner, acct["id"])
        assert (erasure["account_type"], erasure["status"]) == ("organization", "pending")
        assert erasure["due_at"] == at(payload["effective_date"]) + dt.timedelta(days=30)
    else:
        assert result.json["outcome"] == "recorded"
        assert state is None
    # Nothing of the payload beyond the account is kept (no plan, no billing e-mail).
    stored = json.dumps([dict(r) for r in owner.execute("SELECT * FROM marketplace_deliveries").fetchall()],
                        default=str)
    assert acct.get("organization_billing_email", "@@") not in stored


@pytest.mark.parametrize("name", sorted(p.name for p in WEBHOOK_FIXTURES.glob("ping.*.json")))
def test_ping_verifies_only(client, owner, name):
    result = post_marketplace(client, webhook_fixture(name), delivery_id="ping-1", event="ping")
    assert result.status_code == 200
    assert result.json == {"ok": True, "outcome": "pong", "deliveryId": "ping-1"}
    assert count(owner, "marketplace_deliveries") == 0


# -- the state table, row by row ---------------------------------------------

def test_purchase_not_older_activates_with_free_tier(client, owner):
    assert deliver(client, PURCHASED, effective_date=T1)["accountState"] == "active"
    # Not older: the same date again, and a newer one.
    assert deliver(client, PURCHASED, effective_date=T1)["outcome"] == "applied"
    assert deliver(client, PURCHASED, effective_date=T2)["outcome"] == "applied"
    row = account(owner)
    assert (row["state"], row["tier"], row["effective_date"]) == ("active", "free", at(T2))


def test_cancellation_revokes_tokens_queues_erasure_and_blocks_jobs(client, owner, pool):
    seed_repository(owner, account_id=ACCOUNT, installation_id=501, repository_id=9001, login="username")
    seed_repository(owner, account_id=777, installation_id=502, repository_id=9002, login="other")
    mine, _ = create_token(pool, 9001)
    create_token(pool, 9001, name="second")
    theirs, _ = create_token(pool, 9002)
    deliver(client, PURCHASED, effective_date=T1)

    body = deliver(client, CANCELLED, effective_date=T2, account_id=ACCOUNT)
    assert (body["outcome"], body["accountState"]) == ("applied", "canceled")
    row = account(owner)
    assert (row["state"], row["effective_date"]) == ("canceled", at(T2))
    tokens = owner.execute("SELECT repository_id, revoked_reason FROM api_tokens ORDER BY repository_id").fetchall()
    assert [(t["repository_id"], t["revoked_reason"]) for t in tokens] == [
        (9001, "account_canceled"), (9001, "account_canceled"), (9002, None)]
    [erasure] = erasures(owner)
    assert erasure["status"] == "pending" and erasure["blocked_by_legal_hold"] is False
    assert erasure["due_at"] == at(T2) + dt.timedelta(days=30)
    assert erasure["account_type"] == "organization"

    # New lifecycle jobs for the account's installation are blocked: when a
    # worker turns the inbox into jobs, the delivery is kept as processed
    # evidence, with no job...
    pr = json.loads(webhook_fixture("pull_request.opened.12.json"))
    pr["installation"]["id"] = 501
    raw = json.dumps(pr).encode()
    assert post_webhook(client, raw, "pull_request", delivery_id="blocked-1").status_code == 202
    # ...while another account's installation still gets its job.
    pr["installation"]["id"] = 502
    raw = json.dumps(pr).encode()
    assert post_webhook(client, raw, "pull_request", delivery_id="open-1").status_code == 202
    assert make_lifecycle_jobs(owner) == 1
    inbox = owner.execute("SELECT * FROM webhook_inbox WHERE delivery_id = 'blocked-1'").fetchone()
    assert (inbox["state"], inbox["awaiting_job"]) == ("processed", False)
    job = owner.execute("SELECT i.delivery_id FROM lifecycle_jobs j JOIN webhook_inbox i ON i.id = j.inbox_id")
    assert [row["delivery_id"] for row in job] == ["open-1"]


def test_cancellation_of_a_user_account_under_legal_hold(client, owner):
    body = marketplace_body(CANCELLED, effective_date=T2)
    payload = json.loads(body)
    acct = payload["marketplace_purchase"]["account"]
    acct["type"] = "User"
    owner.execute("INSERT INTO accounts (id, login, type) VALUES (%s, 'u', 'User')", (acct["id"],))
    owner.execute("INSERT INTO legal_holds (account_id, reason) VALUES (%s, 'litigation 42')", (acct["id"],))
    result = post_marketplace(client, json.dumps(payload).encode())
    assert result.json["outcome"] == "applied"
    [erasure] = erasures(owner, acct["id"])
    assert (erasure["account_type"], erasure["blocked_by_legal_hold"]) == ("user", True)


def test_a_released_legal_hold_does_not_block(client, owner):
    acct_id = webhook_fixture_json(CANCELLED)["marketplace_purchase"]["account"]["id"]
    owner.execute("INSERT INTO accounts (id, login, type) VALUES (%s, 'o', 'Organization')", (acct_id,))
    owner.execute("INSERT INTO legal_holds (account_id, reason, active, released_at) VALUES (%s, 'old', false, now())",
                  (acct_id,))
    deliver(client, CANCELLED, effective_date=T2)
    assert erasures(owner, acct_id)[0]["blocked_by_legal_hold"] is False


def test_cancellation_with_the_same_date_as_the_purchase_cancels(client, owner):
    deliver(client, PURCHASED, effective_date=T2)
    assert deliver(client, CANCELLED, effective_date=T2, account_id=ACCOUNT)["accountState"] == "canceled"


def test_a_purchase_with_the_cancellation_timestamp_cannot_reopen(client, owner):
    deliver(client, CANCELLED, effective_date=T2, account_id=ACCOUNT)
    body = deliver(client, PURCHASED, effective_date=T2)
    assert (body["outcome"], body["accountState"]) == ("cancellation_kept", "canceled")
    assert account(owner)["state"] == "canceled"
    assert [e["status"] for e in erasures(owner)] == ["pending"]


def test_older_events_change_nothing_and_are_kept_as_evidence(client, owner):
    deliver(client, PURCHASED, effective_date=T2)
    before = account(owner)
    assert deliver(client, CANCELLED, effective_date=T1, account_id=ACCOUNT)["outcome"] == "stale"
    assert deliver(client, PURCHASED, effective_date=T1)["outcome"] == "stale"
    assert account(owner) == before
    assert erasures(owner) == []
    outcomes = [r["outcome"] for r in owner.execute("SELECT outcome FROM marketplace_deliveries ORDER BY id")]
    assert outcomes == ["applied", "stale", "stale"]


@pytest.mark.parametrize("action", ["changed", "pending_change", "pending_change_cancelled", "renewed_someday"])
def test_other_actions_are_recorded_without_entitlement(client, owner, action):
    assert deliver(client, CHANGED, action=action, effective_date=T3)["outcome"] == "recorded"
    assert account(owner) is None          # no entitlement granted
    deliver(client, CANCELLED, effective_date=T1, account_id=ACCOUNT)
    assert deliver(client, CHANGED, action=action, effective_date=T3)["accountState"] == "canceled"
    assert account(owner)["state"] == "canceled"   # unchanged by the later "changed"
    assert account(owner)["effective_date"] == at(T1)
    assert count(owner, "marketplace_deliveries") == 3


def test_a_newer_purchase_reactivates_and_withdraws_the_erasure_request(client, owner, pool):
    seed_repository(owner, account_id=ACCOUNT, installation_id=501, repository_id=9001, login="username")
    value, _ = create_token(pool, 9001)
    deliver(client, CANCELLED, effective_date=T1, account_id=ACCOUNT)
    body = deliver(client, PURCHASED, effective_date=T2)
    assert (body["outcome"], body["accountState"]) == ("applied", "active")
    [erasure] = erasures(owner)
    assert erasure["status"] == "withdrawn" and erasure["withdrawn_at"] is not None
    # Revocation is permanent: the old token stays revoked.
    assert owner.execute("SELECT revoked_reason FROM api_tokens").fetchone()["revoked_reason"] == "account_canceled"
    # Lifecycle jobs flow again.
    pr = json.loads(webhook_fixture("pull_request.opened.12.json"))
    pr["installation"]["id"] = 501
    assert post_webhook(client, json.dumps(pr).encode(), "pull_request").status_code == 202
    assert make_lifecycle_jobs(owner) == 1
    # A later cancellation queues a new request; the withdrawn one stays as evidence.
    deliver(client, CANCELLED, effective_date=T3, account_id=ACCOUNT)
    assert [e["status"] for e in erasures(owner)] == ["withdrawn", "pending"]


def test_a_repeated_cancellation_keeps_one_pending_request_due_after_the_latest(client, owner):
    deliver(client, CANCELLED, effective_date=T1, account_id=ACCOUNT)
    deliver(client, CANCELLED, effective_date=T2, account_id=ACCOUNT)
    [erasure] = erasures(owner)
    # The deadline any delivery order ends with (the older one would be stale).
    assert erasure["due_at"] == at(T2) + dt.timedelta(days=30)
    assert account(owner)["effective_date"] == at(T2)


def test_a_duplicate_delivery_is_applied_once(client, owner):
    body = marketplace_body(CANCELLED, effective_date=T1, account_id=ACCOUNT)
    first = post_marketplace(client, body, delivery_id="dup")
    second = post_marketplace(client, body, delivery_id="dup")
    assert first.json["outcome"] == "applied"
    assert second.status_code == 200 and second.json["outcome"] == "duplicate"
    assert count(owner, "marketplace_deliveries") == 1
    assert len(erasures(owner)) == 1


# -- refusals: a clear 4xx (or 503), nothing stored ----------------------------

def assert_nothing_stored(owner):
    for table in ("marketplace_deliveries", "marketplace_accounts", "erasure_requests", "accounts"):
        assert count(owner, table) == 0, table


def refused(client, owner, body: bytes, status: int, code: str, headers: dict | None = None, event="marketplace_purchase"):
    result = client.simulate_post(MARKETPLACE_PATH, body=body,
                                  headers=headers or webhook_headers(body, event, "bad-1", secret=_secret()))
    assert result.status_code == status, result.json
    assert result.json["code"] == code
    openapi_response_validator(MARKETPLACE_PATH, "post", status).validate(result.json)
    assert_nothing_stored(owner)


def _secret():
    from tests.helpers.service import MARKETPLACE_SECRET
    return MARKETPLACE_SECRET


def edited(mutate) -> bytes:
    payload = webhook_fixture_json(PURCHASED)
    mutate(payload)
    return json.dumps(payload).encode()


def test_the_lifecycle_secret_is_not_accepted(client, owner):
    body = webhook_fixture(PURCHASED)
    refused(client, owner, body, 401, "invalid_signature",
            headers=webhook_headers(body, "marketplace_purchase", "x", secret=WEBHOOK_SECRET))


def test_missing_secret_is_503(pool, owner):
    from falcon import testing
    from app.web.wsgi import create_app
    client = testing.TestClient(create_app(make_config(HOST_MARKETPLACE_WEBHOOK_SECRET=None), pool))
    refused(client, owner, webhook_fixture(PURCHASED), 503, "webhook_secret_missing")


@pytest.mark.parametrize("mutate,field", [
    (lambda p: p.pop("effective_date"), "effective_date"),
    (lambda p: p.update(effective_date="yesterday"), "effective_date"),
    (lambda p: p.update(effective_date="2024-03-01T00:00:00"), "effective_date"),
    (lambda p: p.update(effective_date="9999-12-31T23:59:59-14:00"), "effective_date"),
    (lambda p: p.update(effective_date="1969-12-31T23:59:59+00:00"), "effective_date"),
    (lambda p: p.update(action="Purchased!"), "action"),
    (lambda p: p["marketplace_purchase"]["account"].pop("id"), "marketplace_purchase.account.id"),
    (lambda p: p["marketplace_purchase"]["account"].update(id="18404719"), "marketplace_purchase.account.id"),
    (lambda p: p["marketplace_purchase"]["account"].update(type="Enterprise"), "marketplace_purchase.account.type"),
    (lambda p: p["marketplace_purchase"]["account"].update(login=""), "marketplace_purchase.account.login"),
    (lambda p: p.pop("marketplace_purchase"), "marketplace_purchase.account.id"),
])
def test_invalid_payloads(client, owner, mutate, field):
    refused(client, owner, edited(mutate), 400, "missing_or_invalid_field")


def test_other_events_and_bad_json_and_size(client, owner):
    refused(client, owner, webhook_fixture("installation.created.1.json"), 400, "unsupported_event",
            event="installation")
    refused(client, owner, b"[1, 2]", 400, "malformed_json")
    refused(client, owner, b"{not json", 400, "malformed_json")
    refused(client, owner, b" " * (2 * 1024 * 1024 + 1), 413, "payload_too_large")

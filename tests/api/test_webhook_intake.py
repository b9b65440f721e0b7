"""POST /api/host/webhook: real payloads in, one inbox row each, which a
worker's claim turns into one job, and every malformed request refused with a
stable code and nothing stored."""
from __future__ import annotations

import json

import psycopg

import pytest

from contracts import openapi_response_validator
from tests.helpers.paths import WEBHOOK_FIXTURES, webhook_fixture
from tests.helpers.service import count, make_config, make_lifecycle_jobs, post_webhook, sign, webhook_headers

PATH = "/api/host/webhook"
JOB_EVENTS = ("installation", "installation_repositories", "pull_request")


def assert_documented(result) -> None:
    openapi_response_validator(PATH, "post", result.status_code).validate(result.json)


def assert_nothing_stored(owner) -> None:
    assert count(owner, "webhook_inbox") == 0
    assert count(owner, "lifecycle_jobs") == 0


def fixture_names(*events: str) -> list[str]:
    return sorted(p.name for p in WEBHOOK_FIXTURES.glob("*.json") if p.name.split(".")[0] in events)


@pytest.mark.parametrize("name", fixture_names(*JOB_EVENTS))
def test_real_lifecycle_payloads(client, owner, name):
    event = name.split(".")[0]
    body = webhook_fixture(name)
    payload = json.loads(body)
    result = post_webhook(client, body, event, delivery_id=f"d-{name}")

    if "installation" not in payload:
        # A plain repository webhook without an installation cannot be acted on by an app.
        assert result.status_code == 400
        assert result.json["code"] == "missing_or_invalid_field"
        assert "installation.id" in result.json["message"]
        assert_nothing_stored(owner)
        return

    assert result.status_code == 202, result.json
    assert result.json == {"ok": True, "outcome": "accepted", "deliveryId": f"d-{name}"}
    assert_documented(result)
    inbox = owner.execute("SELECT * FROM webhook_inbox").fetchone()
    assert inbox["idempotency_key"] == f"host:d-{name}"
    # The delivery is stored alone; a worker makes its job (jobs.sql).
    assert (inbox["state"], inbox["awaiting_job"]) == ("accepted", True)
    assert count(owner, "lifecycle_jobs") == 0
    assert make_lifecycle_jobs(owner) == 1
    job = owner.execute("SELECT * FROM lifecycle_jobs").fetchone()
    awaited = owner.execute("SELECT state, awaiting_job FROM webhook_inbox").fetchone()
    assert (awaited["state"], awaited["awaiting_job"], job["status"]) == ("accepted", False, "accepted")
    assert (job["inbox_id"], job["idempotency_key"]) == (inbox["id"], inbox["idempotency_key"])
    assert inbox["event"] == job["kind"] == event
    assert inbox["action"] == payload["action"]
    assert inbox["installation_id"] == payload["installation"]["id"]
    assert inbox["payload_bytes"] == len(body)
    actions = inbox["actions"]
    assert actions["kind"] == event and actions["action"] == payload["action"]
    if event == "pull_request":
        assert actions["repository"] == {"id": payload["repository"]["id"],
                                         "fullName": payload["repository"]["full_name"],
                                         "private": payload["repository"]["private"],
                                         # the branch the readiness workflow is dispatched on (issue 36)
                                         "defaultBranch": payload["repository"]["default_branch"]}
        assert actions["pullRequest"]["number"] == payload["pull_request"]["number"]
        assert actions["pullRequest"]["headSha"] == payload["pull_request"]["head"]["sha"]


@pytest.mark.parametrize("name", fixture_names("ping"))
def test_ping_is_recorded_as_processed_evidence_without_a_job(client, owner, name):
    result = post_webhook(client, webhook_fixture(name), "ping", delivery_id="ping-1")
    assert result.status_code == 202
    inbox = owner.execute("SELECT * FROM webhook_inbox").fetchone()
    assert inbox["state"] == "processed" and inbox["event"] == "ping"
    assert count(owner, "lifecycle_jobs") == 0


def test_unhandled_event_is_recorded_and_acknowledged_without_a_job(client, owner):
    body = json.dumps({"action": "created", "installation": {"id": 42}, "ref": "refs/heads/main"}).encode()
    result = post_webhook(client, body, "push", delivery_id="push-1")
    assert result.status_code == 202
    inbox = owner.execute("SELECT * FROM webhook_inbox").fetchone()
    assert (inbox["event"], inbox["state"], inbox["installation_id"]) == ("push", "processed", 42)
    assert inbox["actions"] == {"kind": "push", "action": "created"}
    assert count(owner, "lifecycle_jobs") == 0


def test_duplicate_delivery_is_stored_once(client, owner):
    body = webhook_fixture("pull_request.opened.12.json")
    first = post_webhook(client, body, "pull_request", delivery_id="dup-1")
    second = post_webhook(client, body, "pull_request", delivery_id="dup-1")
    third = post_webhook(client, body, "pull_request", delivery_id="dup-1", host_names=True)
    assert first.status_code == 202
    assert second.status_code == third.status_code == 200
    assert second.json == {"ok": True, "outcome": "duplicate", "deliveryId": "dup-1"}
    assert_documented(second)
    assert count(owner, "webhook_inbox") == 1
    assert make_lifecycle_jobs(owner) == 1
    assert make_lifecycle_jobs(owner) == 0
    assert count(owner, "lifecycle_jobs") == 1


def test_host_header_names_are_accepted(client, owner):
    body = webhook_fixture("installation.created.1.json")
    result = post_webhook(client, body, "installation", delivery_id="host-names", host_names=True)
    assert result.status_code == 202
    assert owner.execute("SELECT idempotency_key FROM webhook_inbox").fetchone()["idempotency_key"] == "host:host-names"


BODY = webhook_fixture("installation.created.1.json")


def refused(client, owner, headers: dict, status: int, code: str, body: bytes = BODY):
    result = client.simulate_post(PATH, body=body, headers=headers)
    assert result.status_code == status, result.json
    assert result.json["ok"] is False and result.json["code"] == code
    assert_documented(result)
    assert_nothing_stored(owner)
    return result


def without(headers: dict, name: str) -> dict:
    return {k: v for k, v in headers.items() if k != name}


def test_missing_content_type(client, owner):
    refused(client, owner, without(webhook_headers(BODY, "installation"), "Content-Type"), 415, "invalid_content_type")


def test_wrong_content_type(client, owner):
    headers = webhook_headers(BODY, "installation") | {"Content-Type": "application/x-www-form-urlencoded"}
    refused(client, owner, headers, 415, "invalid_content_type")


def test_content_type_with_charset_is_fine(client, owner):
    headers = webhook_headers(BODY, "installation") | {"Content-Type": "application/json; charset=utf-8"}
    assert client.simulate_post(PATH, body=BODY, headers=headers).status_code == 202


def test_missing_signature(client, owner):
    refused(client, owner, without(webhook_headers(BODY, "installation"), "X-Hub-Signature-256"), 400,
            "missing_signature")


@pytest.mark.parametrize("value", ["sha1=" + "0" * 40, "sha256=xyz", "sha256=" + "0" * 63, "0" * 64])
def test_malformed_signature_header(client, owner, value):
    headers = webhook_headers(BODY, "installation") | {"X-Hub-Signature-256": value}
    refused(client, owner, headers, 400, "invalid_signature_header")


def test_missing_delivery_id(client, owner):
    refused(client, owner, without(webhook_headers(BODY, "installation"), "X-GitHub-Delivery"), 400,
            "invalid_delivery_id")


@pytest.mark.parametrize("value", ["", "has space", "x" * 201, "semi;colon"])
def test_bad_delivery_id(client, owner, value):
    headers = webhook_headers(BODY, "installation") | {"X-GitHub-Delivery": value}
    refused(client, owner, headers, 400, "invalid_delivery_id")


def test_missing_event(client, owner):
    refused(client, owner, without(webhook_headers(BODY, "installation"), "X-GitHub-Event"), 400, "invalid_event")


def test_bad_event_name(client, owner):
    refused(client, owner, webhook_headers(BODY, "Installation!"), 400, "invalid_event")


def test_signature_by_another_secret(client, owner):
    refused(client, owner, webhook_headers(BODY, "installation", secret="not-the-secret"), 401, "invalid_signature")


def test_signature_of_another_body(client, owner):
    headers = webhook_headers(BODY, "installation")
    refused(client, owner, headers, 401, "invalid_signature", body=BODY.replace(b"Codertocat", b"Codertocar"))


def test_marketplace_secret_does_not_sign_lifecycle_deliveries(client, owner):
    from tests.helpers.service import MARKETPLACE_SECRET
    refused(client, owner, webhook_headers(BODY, "installation", secret=MARKETPLACE_SECRET), 401,
            "invalid_signature")


def test_declared_length_above_2_mb_is_refused_before_reading(client, owner):
    body = b"{" + b" " * (2 * 1024 * 1024) + b"}"
    refused(client, owner, webhook_headers(body, "installation"), 413, "payload_too_large", body=body)


def test_exactly_2_mb_is_read(client, owner):
    padding = 2 * 1024 * 1024 - len(BODY)
    body = BODY[:-2] + b" " * padding + BODY[-2:]
    assert len(body) == 2 * 1024 * 1024
    assert client.simulate_post(PATH, body=body, headers=webhook_headers(body, "installation")).status_code == 202


def test_malformed_json(client, owner):
    body = b'{"action": "created",'
    refused(client, owner, webhook_headers(body, "installation"), 400, "malformed_json", body=body)


def test_invalid_utf8(client, owner):
    body = b'{"action": "\xff"}'
    refused(client, owner, webhook_headers(body, "installation"), 400, "malformed_json", body=body)


def test_json_that_is_not_an_object(client, owner):
    body = b"[1, 2, 3]"
    refused(client, owner, webhook_headers(body, "installation"), 400, "malformed_json", body=body)


@pytest.mark.parametrize("mutate, field", [
    (lambda p: p.pop("installation"), "installation.id"),
    (lambda p: p["installation"].update(id="957387"), "installation.id"),
    (lambda p: p["installation"].update(id=True), "installation.id"),
    (lambda p: p.pop("action"), "action"),
    (lambda p: p["repositories"][0].update(full_name="../../etc"), "full_name"),
])
def test_missing_or_invalid_fields_of_an_installation_event(client, owner, mutate, field):
    payload = json.loads(BODY)
    mutate(payload)
    body = json.dumps(payload).encode()
    result = refused(client, owner, webhook_headers(body, "installation"), 400, "missing_or_invalid_field", body=body)
    assert field in result.json["message"]


@pytest.mark.parametrize("mutate, field", [
    (lambda p: p["pull_request"]["head"].update(sha="not-a-sha"), "pull_request.head.sha"),
    (lambda p: p["pull_request"].pop("number"), "pull_request.number"),
    (lambda p: p["repository"].pop("id"), "repository.id"),
])
def test_missing_or_invalid_fields_of_a_pull_request(client, owner, mutate, field):
    payload = json.loads(webhook_fixture("pull_request.opened.12.json"))
    mutate(payload)
    body = json.dumps(payload).encode()
    result = refused(client, owner, webhook_headers(body, "pull_request"), 400, "missing_or_invalid_field", body=body)
    assert field in result.json["message"]


def test_missing_secret_is_503_and_nothing_stored(pool, owner):
    from falcon import testing
    from app.web.wsgi import create_app
    client = testing.TestClient(create_app(make_config(HOST_WEBHOOK_SECRET=None), pool))
    result = client.simulate_post(PATH, body=BODY, headers=webhook_headers(BODY, "installation"))
    assert result.status_code == 503 and result.json["code"] == "webhook_secret_missing"
    assert_nothing_stored(owner)


def test_signature_is_over_the_raw_bytes(client, owner):
    # Same JSON, different bytes: a signature over a re-serialization must not pass.
    reformatted = json.dumps(json.loads(BODY), indent=4).encode()
    headers = webhook_headers(BODY, "installation")
    refused(client, owner, headers, 401, "invalid_signature", body=reformatted)
    assert sign(reformatted) != headers["X-Hub-Signature-256"]


def test_an_inbox_row_cannot_be_deleted_from_under_its_job(client, owner):
    """The job -> inbox link is guarded on delete (0016), not by a foreign key
    on the intake's hot insert: removing an inbox row whose job still exists is
    refused, one statement at a time, and so is changing an inbox id."""
    post_webhook(client, webhook_fixture("installation.created.1.json"), "installation", delivery_id="guarded")
    make_lifecycle_jobs(owner)
    job_inbox = owner.execute("SELECT inbox_id FROM lifecycle_jobs").fetchone()["inbox_id"]

    with pytest.raises(psycopg.errors.ForeignKeyViolation):
        owner.execute("DELETE FROM webhook_inbox WHERE id = %s", (job_inbox,))
    with pytest.raises(psycopg.errors.ForeignKeyViolation):
        owner.execute("UPDATE webhook_inbox SET id = id + 1000 WHERE id = %s", (job_inbox,))
    assert count(owner, "webhook_inbox") == 1

    owner.execute("DELETE FROM lifecycle_jobs WHERE inbox_id = %s", (job_inbox,))
    owner.execute("DELETE FROM webhook_inbox WHERE id = %s", (job_inbox,))
    assert_nothing_stored(owner)

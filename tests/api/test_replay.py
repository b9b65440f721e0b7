"""POST .../dead-letters/{itemType}/{itemId}/replay: every HTTP code of the
spec's replay table, the Idempotency-Key rules, cross-tenant probes, and
concurrent replays with one key."""
from __future__ import annotations

import datetime as dt
import threading

import psycopg
import pytest
from falcon import testing
from psycopg.rows import dict_row

from app import database, sql_api
from app.web.wsgi import create_app
from contracts import openapi_response_validator
from tests.helpers.access import (OPERATOR_ACTOR, OPERATOR_TOKEN, bearer, install_clock, marketplace_body,
                                          post_marketplace, seed_repository)
from tests.helpers.service import make_config
from tests.helpers.access import OPERATOR_ENV, dead_letter

REPLAY = "/api/v1/operator/installations/{installationId}/dead-letters/{itemType}/{itemId}/replay"
FAILED_AT = dt.datetime(2024, 5, 1, 11, 0, tzinfo=dt.timezone.utc)


@pytest.fixture(autouse=True)
def clock(monkeypatch):
    return install_clock(monkeypatch, dt.datetime(2024, 5, 1, 12, 0, tzinfo=dt.timezone.utc))


@pytest.fixture
def ops(pool):
    return testing.TestClient(create_app(make_config(**OPERATOR_ENV), pool))


@pytest.fixture
def job(client, owner):
    seed_repository(owner, account_id=18404719, installation_id=501, repository_id=1296269, login="username")
    return dead_letter(client, owner, 501, "dl-1", FAILED_AT)


def replay(client, item_id, key="key-1", installation_id=501, item_type="job", headers=None):
    path = REPLAY.format(installationId=installation_id, itemType=item_type, itemId=item_id)
    extra = {} if key is None else {"Idempotency-Key": key}
    result = client.simulate_post(path, headers=headers if headers is not None else bearer(OPERATOR_TOKEN, **extra))
    openapi_response_validator(REPLAY, "post", result.status_code).validate(result.json)
    return result


def audit_events(owner):
    return owner.execute("SELECT * FROM audit_events ORDER BY occurred_at").fetchall()


def test_replayed_then_already_applied_with_the_same_audit_event(ops, owner, job):
    first = replay(ops, job)
    assert first.status_code == 200 and first.json["outcome"] == "replayed"
    row = owner.execute("SELECT * FROM lifecycle_jobs WHERE id = %s", (job,)).fetchone()
    assert (row["status"], row["attempts"]) == ("accepted", 0)              # a fresh attempt budget
    assert row["run_after"] <= dt.datetime.now(dt.timezone.utc)
    assert owner.execute("SELECT state FROM webhook_inbox WHERE id = %s", (row["inbox_id"],)).fetchone()["state"] \
        == "accepted"
    [event] = audit_events(owner)
    assert str(event["id"]) == first.json["auditEventId"]
    assert (event["event_type"], event["installation_id"], event["actor"], event["item_type"], event["item_id"]) == (
        "control_plane.dead_letter_replayed", 501, f"operator:{OPERATOR_ACTOR}", "job", str(job))
    assert event["operation_id"]
    assert set(event["details"]) <= {"previousReasonCode", "previousErrorClass", "previousAttempts",
                                     "previousFailedAt"}

    again = replay(ops, job)
    assert again.status_code == 200
    assert again.json == {**first.json, "outcome": "already_applied"}
    assert len(audit_events(owner)) == 1


def test_the_same_key_for_another_request_is_refused(ops, client, owner, job):
    other = dead_letter(client, owner, 501, "dl-2", FAILED_AT)
    assert replay(ops, job).status_code == 200
    for probe in (dict(item_id=other), dict(item_id=job, item_type="outbox"), dict(item_id=job, installation_id=502)):
        result = replay(ops, **probe)
        assert (result.status_code, result.json["code"]) == (409, "idempotency_key_reused"), probe
    assert owner.execute("SELECT status FROM lifecycle_jobs WHERE id = %s", (other,)).fetchone()["status"] \
        == "dead_letter"
    assert len(audit_events(owner)) == 1


def test_not_found_discloses_nothing_about_other_installations(ops, client, owner, job):
    theirs = dead_letter(client, owner, 502, "dl-9", FAILED_AT, repository_id=555)
    probes = [replay(ops, theirs, key="k-a"),                    # another installation's item
              replay(ops, 987654, key="k-b"),                    # no such item
              replay(ops, job, key="k-c", installation_id=502),  # my item through another installation
              replay(ops, 987654, key="k-d", item_type="outbox")]
    assert {(p.status_code, p.json["code"], p.json["message"]) for p in probes} == {
        (404, "not_found", "no such dead-letter item in this installation")}
    assert owner.execute("SELECT count(*) AS n FROM lifecycle_jobs WHERE status = 'dead_letter'").fetchone()["n"] == 2
    assert audit_events(owner) == [] and owner.execute("SELECT count(*) AS n FROM replay_requests").fetchone()["n"] == 0


def test_an_item_no_longer_dead_lettered_is_not_found_under_a_new_key(ops, owner, job):
    assert replay(ops, job, key="first").status_code == 200
    result = replay(ops, job, key="second")
    assert (result.status_code, result.json["code"]) == (404, "not_found")


def test_not_replayable_for_a_canceled_account(ops, client, owner, job):
    post_marketplace(client, marketplace_body("marketplace_purchase.cancelled.1.json", account_id=18404719))
    result = replay(ops, job)
    assert (result.status_code, result.json["code"]) == (409, "not_replayable")
    assert owner.execute("SELECT status FROM lifecycle_jobs WHERE id = %s", (job,)).fetchone()["status"] == "dead_letter"
    assert audit_events(owner) == []


def test_unavailable_when_not_configured_or_the_database_is_down(pool, job, db_url):
    disabled = testing.TestClient(create_app(make_config(), pool))
    result = replay(disabled, job)
    assert (result.status_code, result.json["code"]) == (503, "unavailable")
    unreachable = database.create_pool("postgresql://nobody@127.0.0.1:1/none", max_size=2, name="down")
    try:
        down = testing.TestClient(create_app(make_config(SERVICE_DATABASE_ACQUIRE_TIMEOUT_MS="50", **OPERATOR_ENV),
                                             unreachable))
        result = replay(down, job)
        assert (result.status_code, result.json["code"]) == (503, "unavailable")
    finally:
        unreachable.close()


@pytest.mark.parametrize("kwargs,headers_key,code", [
    (dict(item_type="jobs"), "k", "invalid_item_type"),
    (dict(item_id="abc"), "k", "invalid_item_id"),
    (dict(item_id="0"), "k", "invalid_item_id"),
    (dict(installation_id="x1"), "k", "invalid_installation_id"),
    ({}, None, "missing_idempotency_key"),
    ({}, "has space", "invalid_idempotency_key"),
    ({}, "k" * 201, "invalid_idempotency_key"),
])
def test_bad_requests(ops, owner, job, kwargs, headers_key, code):
    result = replay(ops, **{"item_id": job, **kwargs}, key=headers_key)
    assert (result.status_code, result.json["code"]) == (400, code)
    assert owner.execute("SELECT status FROM lifecycle_jobs WHERE id = %s", (job,)).fetchone()["status"] == "dead_letter"


def test_replay_requires_the_operator_token(ops, job, owner):
    result = replay(ops, job, headers={"Idempotency-Key": "k", "Authorization": "Bearer nope-" + "n" * 40})
    assert (result.status_code, result.json["code"]) == (401, "invalid_operator_token")
    assert audit_events(owner) == []


def test_concurrent_replays_with_one_key_write_one_audit_event(owner, job, db_url):
    barrier = threading.Barrier(4)
    results, errors = [], []

    def attempt():
        try:
            with psycopg.connect(db_url, autocommit=True, row_factory=dict_row) as conn:
                conn.execute("SET ROLE boardready_api")
                barrier.wait(timeout=10)
                results.append(sql_api.dead_letter_replay(conn, installation_id=501, item_type="job", item_id=job,
                                                          idempotency_key="race-key", actor=OPERATOR_ACTOR,
                                                          operation_id="op"))
        except Exception as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=attempt) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert sorted(r["outcome"] for r in results) == ["already_applied"] * 3 + ["replayed"]
    assert len({r["audit_event_id"] for r in results}) == 1
    assert len(audit_events(owner)) == 1

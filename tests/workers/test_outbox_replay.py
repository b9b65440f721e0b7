"""Outbox dead letters through the operator API: listed under their
installation, replayed once (no second check run), and an uncertain dispatch
refused as not_replayable."""
from __future__ import annotations

import pytest
from falcon import testing

from app.web.wsgi import create_app
from contracts import openapi_response_validator
from tests.helpers.access import OPERATOR_TOKEN, bearer
from tests.helpers.host import REPOSITORY, make_hostkit, run_lifecycle, run_outbox
from tests.helpers.access import OPERATOR_ENV

BASE = "/api/v1/operator/installations/{installationId}/dead-letters"
REPLAY = BASE + "/{itemType}/{itemId}/replay"


@pytest.fixture
def kit(host):
    return make_hostkit(host, SERVICE_HOST_TIMEOUT_MS="1000", **OPERATOR_ENV)


@pytest.fixture
def client(kit, pool):
    return testing.TestClient(create_app(kit.config, pool))


def dead_letters(client, installation_id):
    result = client.simulate_get(BASE.format(installationId=installation_id), headers=bearer(OPERATOR_TOKEN))
    openapi_response_validator(BASE, "get", result.status_code).validate(result.json)
    return result


def replay(client, installation_id, item_id, key):
    path = REPLAY.format(installationId=installation_id, itemType="outbox", itemId=item_id)
    result = client.simulate_post(path, headers=bearer(OPERATOR_TOKEN, **{"Idempotency-Key": key}))
    openapi_response_validator(REPLAY, "post", result.status_code).validate(result.json)
    return result


def open_pull_request(kit, client, pool, db_url):
    pr = kit.host.open_pull_request(REPOSITORY)
    kit.deliver_pull_request(client, pr)
    run_lifecycle(kit, pool, db_url)
    return pr


def test_dead_lettered_check_run_creation_is_listed_and_replayed(kit, client, pool, db_url, owner):
    kit.host.add_fault(operation_id="checks/create", status=500)
    open_pull_request(kit, client, pool, db_url)
    for _ in range(kit.config.job_max_attempts):
        run_outbox(kit, pool, db_url)
        owner.execute("UPDATE outbox_items SET run_after = now() WHERE status = 'accepted'")
    item = owner.execute("SELECT * FROM outbox_items WHERE kind = 'check_run_create'").fetchone()
    assert item["status"] == "dead_letter"

    page = dead_letters(client, kit.installation["id"]).json
    [row] = [r for r in page["items"] if r["itemType"] == "outbox"]
    assert row["replaySafe"] is True and row["reasonCode"] == "host_unavailable"
    assert str(row["itemId"]) == str(item["id"])
    # Another installation sees nothing of it.
    assert replay(client, kit.installation["id"] + 1, item["id"], "k-other").status_code == 404

    kit.host.clear_faults()
    first = replay(client, kit.installation["id"], item["id"], "k-1")
    again = replay(client, kit.installation["id"], item["id"], "k-1")
    assert first.status_code == again.status_code == 200
    assert (first.json["outcome"], again.json["outcome"]) == ("replayed", "already_applied")
    assert first.json["auditEventId"] == again.json["auditEventId"]
    replayed = owner.execute("SELECT status, attempts FROM outbox_items WHERE id = %s", (item["id"],)).fetchone()
    assert replayed == {"status": "accepted", "attempts": 0}

    run_outbox(kit, pool, db_url)
    assert len(kit.host.check_runs(REPOSITORY)) == 1
    assert owner.execute("SELECT status FROM release_runs").fetchone()["status"] == "dispatched"


def test_uncertain_dispatch_is_not_replayable(kit, client, pool, db_url, owner):
    kit.host.add_fault(operation_id="actions/create-workflow-dispatch", delay_ms=2500, count=1)
    open_pull_request(kit, client, pool, db_url)
    run_outbox(kit, pool, db_url)
    item = owner.execute("SELECT * FROM outbox_items WHERE kind = 'workflow_dispatch'").fetchone()
    assert (item["status"], item["reason_code"]) == ("dead_letter", "dispatch_uncertain")
    result = replay(client, kit.installation["id"], item["id"], "k-uncertain")
    assert result.status_code == 409 and result.json["code"] == "not_replayable"
    assert owner.execute("SELECT status FROM outbox_items WHERE id = %s", (item["id"],)).fetchone()["status"] == \
        "dead_letter"
    assert owner.execute("SELECT count(*) AS n FROM audit_events WHERE event_type = "
                         "'control_plane.dead_letter_replayed'").fetchone()["n"] == 0

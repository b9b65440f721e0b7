"""What the check run of a pull request with a supply check shows, in process
against the emulator (code host and component provider): the completion held
for the check carries the release decision its findings make, never the
result's own conclusion first, and the decision as it is when a worker takes
the completion (a waiver after the check counts); when the hold ran out
before the check, the result's own goes out and the decision update follows.
The code host's record of every check run update is the evidence."""
from __future__ import annotations


import pytest
from falcon import testing
from psycopg.types.json import Jsonb

from app import sql_api
from app.config import Config, load_supply
from app.web.wsgi import create_app
from tests.helpers.access import bearer, create_token
from tests.helpers.host import REPOSITORY, run_outbox
from tests.helpers.results import DispatchedRun, envelope, make_result
from tests.helpers.supply import DEFAULT_BRANCH_BOM, PROJECT, PULL_REQUEST_BOM, provider_settings
from workers.supply import SupplyQueue
from tests.helpers.drivers import tick


@pytest.fixture
def client(kit, pool):
    """The service configured for the emulator (conftest's host and kit)."""
    return testing.TestClient(create_app(kit.config, pool))


@pytest.fixture
def supply_worker(kit, pool):
    return SupplyQueue(load_supply(provider_settings(kit.host)), pool)


@pytest.fixture
def watched_run(kit, client, pool, db_url, owner, supply_worker):
    """A dispatched pull request run on the repository of a watched board whose
    default-branch BOM the supply worker has observed."""
    run = DispatchedRun(kit, client, pool, db_url, owner)
    repository_id = kit.repository["id"]
    push = {"schemaVersion": 1, "triggerKind": "push", "readiness": "ready", "score": 96,
            "tool": {"name": "boardready-check", "version": "0.1.0"}, "findings": [], "bom": DEFAULT_BRANCH_BOM}
    sql_api.run_ingest(owner, repository_id=repository_id, api_token_id="tok", result=Jsonb(push))
    assert sql_api.watched_board_watch(owner, repository_id=repository_id, path=PROJECT,
                                       actor="test")["outcome"] == "watched"
    assert tick(supply_worker) is True        # the board's parts, observed
    return run


def send_result(client, run) -> None:
    answer = run.post(client, envelope(run.attempt_ref, make_result(run.head_sha, "ready", bom=PULL_REQUEST_BOM)))
    assert answer.status_code == 200, answer.json


def conclusions_sent(kit, run) -> list:
    """The conclusion of every update the code host received for the run's check run, in order."""
    return [entry["body"].get("conclusion") for entry in kit.host.requests(operation_id="checks/update")
            if entry["path"].endswith(f"/check-runs/{run.check_run_id}")]


def check_run(kit, run) -> dict:
    return next(c for c in kit.host.check_runs(REPOSITORY) if c["id"] == run.check_run_id)


def stored(owner, run) -> dict:
    return owner.execute(
        "SELECT rr.decision, rr.published_decision, r.decision AS readiness_decision, r.published_conclusion, "
        "       (SELECT count(*) FROM boardready.outbox_items o WHERE o.release_run_id = rr.id "
        "           AND o.kind = 'check_run_decision') AS decision_updates "
        "  FROM boardready.release_runs rr JOIN boardready.run_results r ON r.release_run_id = rr.id "
        " WHERE rr.id = %s", (run.release_run_id,)).fetchone()


def test_the_held_completion_carries_the_release_decision_at_once(kit, client, pool, db_url, owner, watched_run,
                                                                   supply_worker):
    send_result(client, watched_run)
    run_outbox(kit, pool, db_url)                   # held for the supply check: nothing is sent yet
    assert check_run(kit, watched_run)["status"] == "queued" and conclusions_sent(kit, watched_run) == []
    assert tick(supply_worker) is True             # the check: the EOL part is a high finding
    run_outbox(kit, pool, db_url)
    shown = check_run(kit, watched_run)
    assert (shown["status"], shown["conclusion"]) == ("completed", "failure")
    assert shown["title"].startswith("Blocked")
    assert conclusions_sent(kit, watched_run) == ["failure"]
    assert stored(owner, watched_run) == {"decision": "FAIL", "published_decision": None,
                                          "readiness_decision": "PASS", "published_conclusion": "failure",
                                          "decision_updates": 0}
    # The comment says the same as the check run.
    [comment] = kit.host.comments(REPOSITORY)
    assert "Blocked: not ready to release" in comment["body"] and "supply.obsolete" in comment["body"]


def test_a_completion_sent_before_the_check_is_updated_after_it(kit, client, pool, db_url, owner, watched_run,
                                                                 supply_worker):
    send_result(client, watched_run)
    # The hold ran out (the provider or the worker was slow): the completion
    # goes out with the result's own conclusion.
    owner.execute("UPDATE boardready.outbox_items SET run_after = now() WHERE status = 'accepted'")
    run_outbox(kit, pool, db_url)
    assert check_run(kit, watched_run)["conclusion"] == "success"
    assert tick(supply_worker) is True
    run_outbox(kit, pool, db_url)                   # the decision update the check queued
    assert check_run(kit, watched_run)["conclusion"] == "failure"
    assert conclusions_sent(kit, watched_run) == ["success", "failure"]
    assert stored(owner, watched_run) == {"decision": "FAIL", "published_decision": "FAIL",
                                          "readiness_decision": "PASS", "published_conclusion": "success",
                                          "decision_updates": 1}


def test_a_waiver_after_the_check_but_before_the_completion_is_what_the_completion_shows(
        kit, client, pool, db_url, owner, watched_run, supply_worker):
    send_result(client, watched_run)
    assert tick(supply_worker) is True             # FAIL, the completion released
    fingerprint = owner.execute("SELECT fingerprint FROM boardready.run_findings WHERE rule_id = 'supply.obsolete'"
                                ).fetchone()["fingerprint"]
    repository_id = kit.repository["id"]
    waived = sql_api.waiver_create_v2(owner, repository_id=repository_id, repository_ids=[repository_id],
                                      fingerprint=fingerprint, reason="second source approved", expires_at=None,
                                      actor="host-user:7", max_days=Config.waiver_max_days,
                                      limit=Config.decisions_per_minute)
    assert waived["outcome"] == "created" and waived["decisions_changed"] == 1
    run_outbox(kit, pool, db_url)
    # No worker had claimed the completion: it shows the decision as it is now.
    assert conclusions_sent(kit, watched_run) == ["success"]
    assert stored(owner, watched_run) == {"decision": "PASS", "published_decision": None,
                                          "readiness_decision": "PASS", "published_conclusion": "success",
                                          "decision_updates": 0}
    # A later change is a decision update, as for any run.
    assert sql_api.waiver_delete(owner, repository_id=repository_id, repository_ids=[repository_id],
                                 waiver_id=waived["waiver_id"], actor="host-user:7")["outcome"] == "deleted"
    run_outbox(kit, pool, db_url)
    assert conclusions_sent(kit, watched_run) == ["success", "failure"]
    assert stored(owner, watched_run)["published_decision"] == "FAIL"


def test_a_token_published_result_waits_for_the_supply_check_too(kit, client, pool, db_url, owner, watched_run,
                                                                   supply_worker):
    """Opted in to token-published results, the request used to complete the
    held check run itself, showing the result's own success before the check
    turned it to failure. It leaves a held completion to the workers."""
    repository_id = kit.repository["id"]
    admin, _ = create_token(pool, repository_id, scopes=["admin"])
    settings = f"/api/v1/repositories/{repository_id}/settings"
    assert client.simulate_put(settings, headers=bearer(admin), json={"tokenPublishedResults": True}).status_code == 200
    token, _ = create_token(pool, repository_id, scopes=["runs:write"])
    answer = client.simulate_post("/api/v1/runs/result", headers=bearer(token), json={
        "attemptId": watched_run.attempt_ref,
        "result": make_result(watched_run.head_sha, "ready", bom=PULL_REQUEST_BOM)})
    assert (answer.status_code, answer.json["published"]) == (200, False), answer.json
    assert check_run(kit, watched_run)["status"] == "queued" and conclusions_sent(kit, watched_run) == []
    assert tick(supply_worker) is True
    run_outbox(kit, pool, db_url)
    assert conclusions_sent(kit, watched_run) == ["failure"]

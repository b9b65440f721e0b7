"""Supply end to end through real HTTP: the service under gunicorn with its
workers, the emulator as code host and component provider. The default
branch's BOM arrives with a push result, the board is watched, the supply
worker observes its parts; a pull request swaps in an EOL part, its signed
result is accepted, the check run completion waits for the supply check, and
the check run is completed once, with the supply finding at the part's
schematic line and the release decision it makes (never the result's own
conclusion first)."""
from __future__ import annotations

import httpx
import pytest

from tests.helpers.access import bearer, create_token
from tests.helpers.service import OIDC_AUDIENCE, served_for_the_emulator, wait_for
from tests.helpers.results import CALLBACK, envelope, make_result
from tests.helpers.supply import (DEFAULT_BRANCH_BOM, PROJECT, PULL_REQUEST_BOM, SCHEMATIC,
                                     provider_settings)

REPOSITORY = "acme-hw/supply-board"


@pytest.fixture
def stack(db_url):
    with served_for_the_emulator(db_url, provider_settings) as running:
        yield running


def test_a_pull_request_that_swaps_in_an_eol_part_gets_a_supply_finding_on_its_check_run(stack, owner, pool):
    host, service = stack
    installation = host.create_installation("acme-hw", account_type="Organization", deliver=True)
    host.create_repository(REPOSITORY, installation_id=installation["id"], deliver=True)
    repository_id = wait_for(lambda: (owner.execute("SELECT id FROM repositories WHERE full_name = %s",
                                                    (REPOSITORY,)).fetchone() or {}).get("id"), seconds=30)
    admin, _ = create_token(pool, repository_id, scopes=["admin", "runs:write"])
    api = httpx.Client(base_url=service.base_url, headers=bearer(admin), timeout=30)

    # The default branch's BOM, then the board watched: the worker observes its parts.
    push = {"schemaVersion": 1, "triggerKind": "push", "repositoryId": str(repository_id), "readiness": "ready",
            "score": 96, "tool": {"name": "boardready-check", "version": "0.1.0"}, "findings": [],
            "bom": DEFAULT_BRANCH_BOM}
    assert api.post("/api/v1/runs", json=push).status_code == 201
    watched = api.post(f"/api/v1/repositories/{repository_id}/watched-board", json={"path": PROJECT})
    assert watched.status_code == 201, watched.text
    supply = wait_for(lambda: (lambda parts: parts if all(p["observation"] for p in parts) else None)(
        api.get(f"/api/v1/repositories/{repository_id}/supply").json()["parts"]), seconds=30)
    assert [p["observation"]["lifecycleStatus"] for p in supply] == ["production", "production"]

    # The pull request: webhook, check run, dispatch, then the signed result with the new BOM.
    pr = host.open_pull_request(REPOSITORY, title="Swap the 555 for a boost converter", deliver=True)
    row = wait_for(lambda: owner.execute(
        "SELECT a.id, a.nonce, a.workflow_run_id FROM release_runs rr JOIN release_run_attempts a "
        "ON a.id = rr.current_attempt_id WHERE rr.head_sha = %s AND a.workflow_run_id IS NOT NULL",
        (pr["head"]["sha"],)).fetchone(), seconds=30)
    result = make_result(pr["head"]["sha"], "ready", repository=REPOSITORY, bom=PULL_REQUEST_BOM)
    token = host.mint_oidc_token(OIDC_AUDIENCE, run_id=row["workflow_run_id"])
    answer = httpx.post(f"{service.base_url}{CALLBACK}", json=envelope(f"{row['id']}-{row['nonce']}", result),
                        headers={"Authorization": f"Bearer {token}"}, timeout=30)
    assert answer.status_code == 200, answer.text

    # The completion was held for the supply check, then sent with its finding
    # and the release decision that finding makes: failure at once.
    completed = wait_for(lambda: [c for c in host.check_runs(REPOSITORY) if c["status"] == "completed"],
                         seconds=60, on_timeout=lambda: owner.execute(
                             "SELECT kind, status, run_after FROM outbox_items").fetchall())
    [check_run] = completed
    check = owner.execute("SELECT status FROM supply_checks").fetchone()
    assert check["status"] == "completed"
    annotations = host.annotations(check_run["id"])
    [obsolete] = [a for a in annotations if "supply.obsolete" in a["raw_details"]]
    assert obsolete["path"] == SCHEMATIC and obsolete["start_line"] == 82
    assert "U1" in obsolete["message"] and "introduced by this pull request" in obsolete["message"]
    assert obsolete["annotation_level"] == "failure"
    assert check_run["conclusion"] == "failure" and check_run["title"].startswith("Blocked")
    run = owner.execute("SELECT rr.decision, r.decision AS readiness_decision, r.published_conclusion "
                        "FROM release_runs rr JOIN run_results r ON r.release_run_id = rr.id "
                        "WHERE rr.head_sha = %s", (pr["head"]["sha"],)).fetchone()
    assert run == {"decision": "FAIL", "readiness_decision": "PASS", "published_conclusion": "failure"}
    # Every update the code host received for the check run: the result's own
    # conclusion (success: the checker found the board ready) was never shown.
    workers_idle(owner)
    conclusions = [entry["body"].get("conclusion") for entry in host.requests(operation_id="checks/update")
                   if entry["path"].endswith(f"/check-runs/{check_run['id']}")]
    assert conclusions and set(conclusions) <= {None, "failure"}, conclusions
    assert owner.execute("SELECT count(*) AS n FROM outbox_items WHERE kind = 'check_run_decision'").fetchone() \
        == {"n": 0}   # nothing to correct afterwards


def workers_idle(owner) -> None:
    """The outbox has nothing left to send (the comment, any decision update)."""
    wait_for(lambda: owner.execute("SELECT count(*) AS n FROM outbox_items WHERE status IN ('accepted', 'leased')")
             .fetchone()["n"] == 0, seconds=60,
             on_timeout=lambda: owner.execute("SELECT kind, status, run_after FROM outbox_items").fetchall())

"""Supply work against the emulator's component provider: observations for a
watched board, the budget and breaker in use, a malformed answer, dead letters
replayed through the operator API, and the previous release's supply functions."""
from __future__ import annotations

import datetime as dt
import json

import pytest
from falcon import testing
from psycopg.types.json import Jsonb

import emulator
from app import sql_api
from app.config import load_supply
from app.supply.client import PartQuery, ProviderClient, ProviderError
from app.web.wsgi import create_app
from contracts import openapi_response_validator
from emulator import provider
from tests.helpers.access import OPERATOR_ENV, OPERATOR_TOKEN, bearer, seed_repository
from tests.helpers.service import make_config
from workers.supply import SupplyQueue
from tests.helpers.drivers import tick

DEAD_LETTERS = "/api/v1/operator/installations/{installationId}/dead-letters"
REPLAY = DEAD_LETTERS + "/{itemType}/{itemId}/replay"

T0 = dt.datetime(2026, 3, 2, 9, 0, 0, tzinfo=dt.timezone.utc)
INSTALLATION, REPOSITORY = 8101, 8102
PATH = "hardware/blinky.kicad_pro"


@pytest.fixture(scope="module")
def supply_host():
    with emulator.start() as handle:
        yield handle


@pytest.fixture
def settings(supply_host):
    supply_host.clear_faults()
    supply_host.clear_requests()
    supply_host.provider.reset()
    return load_supply({
        "SERVICE_COMPONENT_PROVIDER_URL": supply_host.provider_url,
        "SERVICE_COMPONENT_PROVIDER_TOKEN_URL": supply_host.provider_token_url,
        "SERVICE_COMPONENT_PROVIDER_CLIENT_ID": provider.CLIENT_ID,
        "SERVICE_COMPONENT_PROVIDER_CLIENT_SECRET": provider.CLIENT_SECRET,
        "SERVICE_COMPONENT_PROVIDER_TIMEOUT_MS": "1000",
    })


class Clock:
    def __init__(self, start):
        self.value = start

    def __call__(self):
        return self.value


def bom_line(ref, mpn, manufacturer=None, value="x"):
    line = {"project": PATH, "references": [ref], "quantity": 1, "value": value, "footprint": "fp",
            "dnp": False, "path": "hardware/blinky.kicad_sch", "line": 10}
    if mpn:
        line["mpn"] = mpn
    if manufacturer:
        line["manufacturer"] = manufacturer
    return line


def ingest(owner, bom, trigger="push"):
    result = {"schemaVersion": 1, "triggerKind": trigger, "readiness": "ready", "score": 95,
              "tool": {"name": "boardready-check", "version": "0.1.0"}, "findings": [], "bom": bom}
    return sql_api.run_ingest(owner, repository_id=REPOSITORY, api_token_id="tok", result=Jsonb(result),
                              now=T0)["run_result_id"]


@pytest.fixture
def board(owner):
    seed_repository(owner, account_id=8100, installation_id=INSTALLATION, repository_id=REPOSITORY)
    ingest(owner, [bom_line("R1", "RC0603FR-07330RL", "Yageo"), bom_line("U1", "SN74LS00N", "Texas Instruments"),
                   bom_line("U2", "ATMEGA8-16PU"), bom_line("D1", "APHB1608SGEC"), bom_line("C1", "GRM188R61A226ME15D"),
                   bom_line("U9", "NOT-A-REAL-PART-42"), bom_line("J1", None)])
    row = sql_api.watched_board_watch(owner, repository_id=REPOSITORY, path=PATH, actor="test", now=T0)
    assert row["outcome"] == "watched"
    return row["board_id"]


def latest(owner) -> dict:
    rows = owner.execute("SELECT DISTINCT ON (part_key) * FROM boardready.part_lifecycle_observations "
                         "ORDER BY part_key, fetched_at DESC, id DESC").fetchall()
    return {r["mpn"]: r for r in rows}


def test_the_worker_observes_every_keyed_part_of_the_watched_board(owner, pool, settings, board, supply_host):
    worker = SupplyQueue(settings, pool, now=Clock(T0))
    assert tick(worker) is True
    seen = latest(owner)
    assert set(seen) == {"RC0603FR-07330RL", "SN74LS00N", "ATMEGA8-16PU", "APHB1608SGEC", "GRM188R61A226ME15D",
                         "NOT-A-REAL-PART-42"}
    resistor = seen["RC0603FR-07330RL"]
    assert resistor["distributor_classification"] == "authorized-distributor"
    assert resistor["lifecycle_status"] == "production" and resistor["provider_part_id"] == "1001"
    # Price breaks from the authorized sellers' offer, never the broker's cheaper one.
    assert {"quantity": 1, "price": 0.10, "currency": "USD"} in resistor["price_breaks"]
    assert all(p["price"] != 0.05 for p in resistor["price_breaks"])
    assert seen["SN74LS00N"]["lifecycle_status"] == "obsolete"
    assert seen["SN74LS00N"]["distributor_classification"] == "marketplace"
    assert seen["ATMEGA8-16PU"]["lifecycle_status"] == "nrnd"
    assert seen["APHB1608SGEC"]["distributor_classification"] == "unknown"          # no sellers
    assert seen["GRM188R61A226ME15D"]["distributor_classification"] == "unknown"    # no authorization signal
    assert seen["NOT-A-REAL-PART-42"]["matched"] is False
    # One call for six parts (batched), one token.
    assert len(supply_host.requests(operation_id="provider/graphql")) == 1
    # Fresh observations are reused: nothing due, nothing fetched.
    assert tick(worker) is False
    board_row = owner.execute("SELECT * FROM ops.watched_boards").fetchone()
    assert board_row["refresh_after"] == T0 + dt.timedelta(days=1)


@pytest.mark.parametrize("fault", [
    {"status": 200, "body": "<html>maintenance</html>", "headers": {"Content-Type": "text/html"}},
    {"status": 200, "body": {"data": {"somethingElse": []}}},
    {"status": 200, "body": {"errors": [{"message": "Query too complex"}]}},
    {"status": 503},
    {"status": 429, "headers": {"Retry-After": "7"}},
])
def test_a_malformed_or_failed_answer_is_a_failure_and_stores_nothing(owner, pool, settings, board, supply_host,
                                                                     fault):
    supply_host.add_fault(operation_id="provider/graphql", count=1, **fault)
    worker = SupplyQueue(settings, pool, now=Clock(T0))
    assert tick(worker) is True
    assert latest(owner) == {}
    breaker = owner.execute("SELECT * FROM ops.component_provider_breakers").fetchone()
    assert breaker["consecutive_failures"] == 1 and breaker["state"] == "closed"
    # The refresh waits (not an attempt: the call failed, the breaker counts it).
    item = owner.execute("SELECT * FROM ops.work_items WHERE kind = 'board_refresh'").fetchone()
    wait_ms = 7000 if fault["status"] == 429 else 1000
    assert (item["status"], item["attempts"]) == ("accepted", 0)
    assert item["run_after"] == T0 + dt.timedelta(milliseconds=wait_ms)


def test_the_breaker_opens_after_five_failures_and_the_board_waits_for_the_cooldown(owner, pool, settings, board,
                                                                                   supply_host):
    supply_host.add_fault(operation_id="provider/graphql", status=502)
    clock = Clock(T0)
    worker = SupplyQueue(settings, pool, now=clock)
    for attempt in range(5):
        assert tick(worker) is True
        clock.value += dt.timedelta(seconds=2)
    assert owner.execute("SELECT state FROM ops.component_provider_breakers").fetchone()["state"] == "open"
    assert tick(worker) is True               # breaker open: no call goes out, the refresh waits the cooldown
    assert len(supply_host.requests(operation_id="provider/graphql")) == 5
    board_row = owner.execute("SELECT * FROM ops.watched_boards").fetchone()
    assert board_row["refresh_after"] == clock.value + dt.timedelta(minutes=5)
    supply_host.clear_faults()
    clock.value = board_row["refresh_after"] + dt.timedelta(minutes=1)
    assert tick(worker) is True               # half-open trial succeeds: closed, observations stored
    assert owner.execute("SELECT state FROM ops.component_provider_breakers").fetchone()["state"] == "closed"
    assert len(latest(owner)) == 6


def test_client_refuses_wrong_credentials_and_times_out_on_a_hang(settings, supply_host):
    bad = load_supply({"SERVICE_COMPONENT_PROVIDER_URL": settings.provider_url,
                                "SERVICE_COMPONENT_PROVIDER_TOKEN_URL": settings.token_url,
                                "SERVICE_COMPONENT_PROVIDER_CLIENT_ID": provider.CLIENT_ID,
                                "SERVICE_COMPONENT_PROVIDER_CLIENT_SECRET": "wrong-secret"})
    with pytest.raises(ProviderError) as refused:
        ProviderClient(bad).match([PartQuery("ti:NE555P", "TI", "NE555P")])
    assert refused.value.reason == "refused"
    supply_host.add_fault(operation_id="provider/graphql", delay_ms=3000, count=1)
    with pytest.raises(ProviderError) as hung:
        ProviderClient(settings).match([PartQuery("ti:NE555P", "TI", "NE555P")])
    assert hung.value.reason == "timeout"


def pull_request_result(owner, bom) -> tuple[int, int]:
    run = owner.execute(
        "INSERT INTO boardready.release_runs (repository_id, installation_id, pr_number, head_sha, trigger_action, "
        "status, started_at, updated_at) VALUES (%s, %s, 7, %s, 'opened', 'completed', %s, %s) RETURNING id",
        (REPOSITORY, INSTALLATION, "a" * 40, T0, T0)).fetchone()["id"]
    result = {"schemaVersion": 1, "triggerKind": "pull_request", "readiness": "ready", "score": 95, "headSha": "a" * 40,
              "tool": {"name": "boardready-check", "version": "0.1.0"}, "findings": [], "bom": bom}
    result_id = owner.execute("SELECT boardready_private.run_result_store(%s, %s, NULL, 'bearer_result', %s::jsonb, NULL, "
                              "'tok', NULL, %s) AS id", (REPOSITORY, run, json.dumps(result), T0)).fetchone()["id"]
    assert owner.execute("SELECT boardready_private.supply_check_open(%s, %s) AS o", (result_id, T0)).fetchone()["o"]
    return run, result_id


def test_a_pull_request_that_swaps_in_an_obsolete_part_gets_a_high_finding(owner, pool, settings, board):
    clock = Clock(T0)
    worker = SupplyQueue(settings, pool, now=clock)
    assert tick(worker) is True                       # the board's parts, observed
    run, result_id = pull_request_result(owner, [
        bom_line("R1", "RC0603FR-07330RL", "Yageo"), bom_line("U1", "SN74LS00N", "Texas Instruments"),
        bom_line("U3", "LM2611BMF/NOPB", "Texas Instruments"), bom_line("U4", "NE555P", "Texas Instruments")])
    assert tick(worker) is True                       # the pull request's check: fetch what is new, apply
    findings = owner.execute("SELECT rule_id, severity, message, path, start_line FROM boardready.run_findings "
                             "WHERE run_result_id = %s ORDER BY ordinal", (result_id,)).fetchall()
    by_rule = {f["rule_id"]: f for f in findings}
    assert by_rule["supply.obsolete"]["severity"] == "high" and "U3" in by_rule["supply.obsolete"]["message"]
    assert "introduced by this pull request" in by_rule["supply.obsolete"]["message"]
    assert by_rule["supply.obsolete"]["path"] == "hardware/blinky.kicad_sch"
    assert by_rule["supply.context"]["severity"] == "info" and "U1" in by_rule["supply.context"]["message"]
    assert not any("U4" in f["message"] for f in findings)     # active, authorized stock: nothing
    assert owner.execute("SELECT decision FROM boardready.release_runs WHERE id = %s", (run,)).fetchone()["decision"] \
        == "FAIL"


def test_with_the_breaker_open_the_run_says_supply_data_was_unavailable(owner, pool, settings, board):
    for _ in range(5):
        sql_api.component_provider_acquire(owner, installation_id=INSTALLATION, limit_per_minute=30, cooldown_ms=300000,
                                           trial_lease_ms=60000, now=T0)
        sql_api.component_provider_record(owner, installation_id=INSTALLATION, success=False, trial_token=None,
                                          threshold=5, now=T0)
    owner.execute("UPDATE boardready.watched_boards SET refresh_after = %s", (T0 + dt.timedelta(days=9),))
    run, result_id = pull_request_result(owner, [bom_line("U3", "LM2611BMF/NOPB", "Texas Instruments")])
    assert tick(SupplyQueue(settings, pool, now=Clock(T0))) is True
    findings = owner.execute("SELECT rule_id, severity FROM boardready.run_findings WHERE run_result_id = %s",
                             (result_id,)).fetchall()
    assert findings == [{"rule_id": "supply.unavailable", "severity": "info"}]
    assert owner.execute("SELECT decision FROM boardready.release_runs WHERE id = %s", (run,)).fetchone()["decision"] \
        in (None, "PASS")


class BrokenClient:
    """A provider client with a bug: every call raises something unexpected."""

    def match(self, batch):
        raise RuntimeError("a bug")


def test_supply_work_that_keeps_failing_is_dead_lettered_then_replayed(owner, pool, settings, board):
    clock = Clock(T0)
    worker = SupplyQueue(settings, pool, client=BrokenClient(), max_attempts=2, now=clock)
    assert tick(worker) is True
    item = owner.execute("SELECT * FROM ops.work_items WHERE kind = 'board_refresh'").fetchone()
    assert (item["status"], item["attempts"], item["reason_code"]) == ("accepted", 1, "handler_error")
    clock.value = item["run_after"]
    assert tick(worker) is True                       # the last attempt: a dead letter
    item = owner.execute("SELECT * FROM ops.work_items WHERE id = %s", (item["id"],)).fetchone()
    assert (item["status"], item["attempts"], item["error_class"]) == ("dead_letter", 2, "RuntimeError")
    [dead] = owner.execute("SELECT * FROM ops.dead_letters WHERE item_type = 'supply'").fetchall()
    assert (dead["item_id"], dead["installation_id"], dead["replay_safe"]) == (item["id"], INSTALLATION, True)
    clock.value += dt.timedelta(minutes=5)
    assert tick(worker) is False                      # the dead board waits for the operator
    # The operator lists it and replays it through the operator API.
    api = testing.TestClient(create_app(make_config(**OPERATOR_ENV), pool))
    listed = api.simulate_get(DEAD_LETTERS.format(installationId=INSTALLATION), headers=bearer(OPERATOR_TOKEN))
    openapi_response_validator(DEAD_LETTERS, "get", listed.status_code).validate(listed.json)
    [row] = listed.json["items"]
    assert (row["itemType"], row["itemId"], row["replaySafe"]) == ("supply", str(item["id"]), True)
    replayed = api.simulate_post(REPLAY.format(installationId=INSTALLATION, itemType="supply", itemId=item["id"]),
                                 headers=bearer(OPERATOR_TOKEN, **{"Idempotency-Key": "replay-supply-1"}))
    openapi_response_validator(REPLAY, "post", replayed.status_code).validate(replayed.json)
    assert replayed.json["outcome"] == "replayed", replayed.json
    audit = owner.execute("SELECT details FROM audit_events WHERE id = %s", (replayed.json["auditEventId"],)).fetchone()
    assert audit["details"]["kind"] == "board_refresh" and audit["details"]["previousAttempts"] == 2
    owner.execute("UPDATE work_items SET run_after = %s WHERE id = %s", (clock.value, item["id"]))
    worker.client = ProviderClient(settings)
    assert tick(worker) is True                       # replayed: fetched and refreshed
    item = owner.execute("SELECT * FROM ops.work_items WHERE id = %s", (item["id"],)).fetchone()
    assert (item["status"], item["outcome"]) == ("completed", "refreshed")
    assert len(latest(owner)) == 6


def test_a_completion_with_a_lost_lease_changes_nothing(owner, pool, settings, board):
    worker = SupplyQueue(settings, pool, now=Clock(T0))
    sql_api.supply_boards_enqueue(owner, now=T0)
    [first] = sql_api.supply_work_claim_v2(owner, worker="a", limit=1, lease_seconds=1, max_attempts=5,
                                           max_age_hours=24, now=T0)
    later = T0 + dt.timedelta(seconds=5)                # the first lease ran out; another worker took the item
    [second] = sql_api.supply_work_claim_v2(owner, worker="b", limit=1, lease_seconds=60, max_attempts=5,
                                            max_age_hours=24, now=later)
    assert second["item_id"] == first["item_id"] and second["lease_token"] != first["lease_token"]
    stale = sql_api.supply_work_complete(owner, item_id=first["item_id"], lease_token=first["lease_token"],
                                         unavailable_reason=None, refreshed=True, next_after=later, now=later)
    assert stale["outcome"] == "lease_lost"
    board_row = owner.execute("SELECT * FROM ops.watched_boards").fetchone()
    assert board_row["refreshed_at"] is None
    done = sql_api.supply_work_complete(owner, item_id=second["item_id"], lease_token=second["lease_token"],
                                        unavailable_reason=None, refreshed=True,
                                        next_after=later + dt.timedelta(days=1), now=later)
    assert done["outcome"] == "refreshed"


def test_the_retention_sweep_deletes_finished_work_items_past_retention(owner, pool, settings, board):
    from app.config import RetentionSettings
    from workers.retention import RetentionWorker

    worker = SupplyQueue(settings, pool, now=Clock(T0))
    assert tick(worker) is True                                   # the board refreshed: one completed item
    owner.execute("INSERT INTO work_items (kind, subject_id, installation_id, status, attempts, run_after, "
                  "failed_at, reason_code, error_class, created_at, updated_at) VALUES ('supply_check', 1, %s, "
                  "'dead_letter', 5, %s, %s, 'handler_error', 'RuntimeError', %s, %s)", (INSTALLATION, T0, T0, T0, T0))
    sweeper = RetentionWorker(RetentionSettings(run_retention_days=30), pool)
    assert sweeper.sweep_once(T0 + dt.timedelta(days=29)).work_items == []
    report = sweeper.sweep_once(T0 + dt.timedelta(days=31))
    assert report.work_items == [{"work_items_deleted": 1}] and not report.errors
    # The dead letter stays for the operator.
    assert [r["status"] for r in owner.execute("SELECT status FROM work_items").fetchall()] == ["dead_letter"]

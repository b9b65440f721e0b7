"""The watched board and its supply over HTTP: watch, move, unwatch, the
Community plan's one board per account (409), a canceled account's board,
every refusal of hostile input (4xx, nothing stored), and tenant isolation.
Every answer is validated against contracts/openapi.json."""
from __future__ import annotations

import datetime as dt

import pytest
from psycopg.types.json import Jsonb

from app import sql_api
from contracts import openapi_response_validator
from tests.helpers.access import bearer, create_token, seed_repository
from tests.helpers.service import count
from tests.helpers.sessions import Session

ACCOUNT, OTHER_ACCOUNT = 8_300_001, 8_300_002
INSTALLATION, SECOND_INSTALLATION, OTHER_INSTALLATION = 8_310_001, 8_310_002, 8_310_003
REPO, SIBLING, SECOND_INSTALLATION_REPO, OTHER_REPO = 8_320_001, 8_320_002, 8_320_003, 8_320_004
BOARD = "/api/v1/repositories/{repositoryId}/watched-board"
SUPPLY = "/api/v1/repositories/{repositoryId}/supply"
PATH = "hardware/blinky.kicad_pro"
T0 = dt.datetime(2026, 3, 2, 9, 0, 0, tzinfo=dt.timezone.utc)


def validated(template: str, method: str, response):
    if response.status_code < 500:
        openapi_response_validator(template, method, response.status_code).validate(response.json)
    return response


def watch(client, repository, headers, body=None, **kwargs):
    return validated(BOARD, "post", client.simulate_post(BOARD.format(repositoryId=repository), headers=headers,
                                                         json={"path": PATH} if body is None else body, **kwargs))


def get_board(client, repository, headers):
    return validated(BOARD, "get", client.simulate_get(BOARD.format(repositoryId=repository), headers=headers))


def unwatch(client, repository, headers):
    return validated(BOARD, "delete", client.simulate_delete(BOARD.format(repositoryId=repository), headers=headers))


def supply(client, repository, headers, **params):
    return validated(SUPPLY, "get", client.simulate_get(SUPPLY.format(repositoryId=repository), headers=headers,
                                                        params=params))


def boards(owner) -> list[dict]:
    return owner.execute("SELECT repository_id, path, unwatched_at IS NULL AS current, unwatch_reason, created_by "
                         "FROM watched_boards ORDER BY id").fetchall()


@pytest.fixture
def repos(owner):
    seed_repository(owner, account_id=ACCOUNT, installation_id=INSTALLATION, repository_id=REPO)
    seed_repository(owner, account_id=ACCOUNT, installation_id=INSTALLATION, repository_id=SIBLING)
    seed_repository(owner, account_id=ACCOUNT, installation_id=SECOND_INSTALLATION,
                    repository_id=SECOND_INSTALLATION_REPO)
    seed_repository(owner, account_id=OTHER_ACCOUNT, installation_id=OTHER_INSTALLATION, repository_id=OTHER_REPO,
                    login="other")
    return REPO


@pytest.fixture
def admin(pool, repos):
    value, token_id = create_token(pool, REPO, scopes=["admin"])
    return bearer(value), f"token:{token_id}"


def test_watch_get_move_and_unwatch_with_an_admin_token(client, owner, admin):
    headers, actor = admin
    created = watch(client, REPO, headers)
    assert created.status_code == 201, created.json
    assert created.json["outcome"] == "watched" and created.json["board"]["path"] == PATH
    again = watch(client, REPO, headers)
    assert again.status_code == 200 and again.json["outcome"] == "unchanged"
    assert again.json["board"]["id"] == created.json["board"]["id"]
    got = get_board(client, REPO, headers)
    assert got.status_code == 200
    assert got.json["board"]["createdBy"] == actor and got.json["board"]["bomRunId"] is None
    # Another path of the same repository moves the board (the old row is history).
    moved = watch(client, REPO, headers, {"path": "other/board.kicad_pro"})
    assert moved.status_code == 201 and moved.json["board"]["id"] != created.json["board"]["id"]
    assert [(b["path"], b["current"], b["unwatch_reason"]) for b in boards(owner)] == [
        (PATH, False, "deleted"), ("other/board.kicad_pro", True, None)]
    gone = unwatch(client, REPO, headers)
    assert gone.status_code == 200 and gone.json["boardId"] == moved.json["board"]["id"]
    assert unwatch(client, REPO, headers).json["code"] == "not_watched"
    assert get_board(client, REPO, headers).status_code == 404
    assert owner.execute("SELECT event_type, actor FROM audit_events WHERE event_type LIKE 'supply.%' "
                         "ORDER BY occurred_at").fetchall() == [
        {"event_type": "supply.board_watched", "actor": actor}, {"event_type": "supply.board_watched", "actor": actor},
        {"event_type": "supply.board_unwatched", "actor": actor}]


def test_the_community_plan_watches_one_board_per_account(client, owner, pool, admin):
    headers, _ = admin
    assert watch(client, REPO, headers).status_code == 201
    for other in (SIBLING, SECOND_INSTALLATION_REPO):   # same installation, and another installation of the account
        value, _ = create_token(pool, other, scopes=["admin"])
        refused = watch(client, other, bearer(value))
        assert refused.status_code == 409 and refused.json["code"] == "plan_limit_watched_boards"
    assert [b["repository_id"] for b in boards(owner)] == [REPO]
    # Another account has its own board.
    value, _ = create_token(pool, OTHER_REPO, scopes=["admin"])
    assert watch(client, OTHER_REPO, bearer(value)).status_code == 201
    # Unwatching frees the account's one board.
    assert unwatch(client, REPO, headers).status_code == 200
    value, _ = create_token(pool, SIBLING, scopes=["admin"])
    assert watch(client, SIBLING, bearer(value)).status_code == 201


def cancel(owner, account_id):
    owner.execute("INSERT INTO marketplace_accounts (account_id, state, effective_date, last_delivery_id, "
                  "canceled_at, created_at, updated_at) VALUES (%s, 'canceled', now(), 'd-13', now(), now(), now())",
                  (account_id,))


def test_a_canceled_accounts_board_is_unwatched_and_cannot_be_watched_again(client, owner, pool, repos):
    session = Session(pool, [REPO])
    assert watch(client, REPO, session.headers()).status_code == 201
    cancel(owner, ACCOUNT)
    # The session no longer reaches the canceled account's repositories at all.
    assert get_board(client, REPO, session.headers()).json["code"] == "not_found"
    assert watch(client, REPO, session.headers()).status_code == 404
    # Whoever asks next (here the SQL the endpoints call) finds the board unwatched, and watching is refused.
    assert sql_api.watched_board_get(owner, repository_id=REPO)["outcome"] == "not_watched"
    assert [(b["current"], b["unwatch_reason"]) for b in boards(owner)] == [(False, "account_canceled")]
    assert sql_api.watched_board_watch(owner, repository_id=REPO, path=PATH, actor="test")["outcome"] \
        == "account_canceled"
    assert count(owner, "watched_boards") == 1


def test_the_worker_side_unwatches_a_canceled_account_without_a_request(owner, repos):
    sql_api.watched_board_watch(owner, repository_id=REPO, path=PATH, actor="test", now=T0)
    cancel(owner, ACCOUNT)
    sql_api.supply_boards_enqueue(owner, now=T0)   # the board refresh schedule's tick
    assert sql_api.supply_work_claim_v2(owner, worker="supply", limit=1, lease_seconds=60, max_attempts=5,
                                        max_age_hours=24, now=T0) == []
    assert [(b["current"], b["unwatch_reason"]) for b in boards(owner)] == [(False, "account_canceled")]


def test_a_removed_repository_is_not_found(owner, repos):
    owner.execute("UPDATE repositories SET removed_at = now() WHERE id = %s", (SIBLING,))
    row = sql_api.watched_board_watch(owner, repository_id=SIBLING, path=PATH, actor="test", now=T0)
    assert row["outcome"] == "repository_not_found" and count(owner, "watched_boards") == 0


@pytest.mark.parametrize("body, code", [
    ({}, "invalid_path"),
    ({"path": None}, "invalid_path"),
    ({"path": 7}, "invalid_path"),
    ({"path": ""}, "invalid_path"),
    ({"path": "board.kicad_pcb"}, "invalid_path"),
    ({"path": ".kicad_pro"}, "invalid_path"),
    ({"path": "hw/.kicad_pro"}, "invalid_path"),
    ({"path": "/etc/board.kicad_pro"}, "invalid_path"),
    ({"path": "../board.kicad_pro"}, "invalid_path"),
    ({"path": "hw/../board.kicad_pro"}, "invalid_path"),
    ({"path": "hw/./board.kicad_pro"}, "invalid_path"),
    ({"path": "hw//board.kicad_pro"}, "invalid_path"),
    ({"path": "hw\\board.kicad_pro"}, "invalid_path"),
    ({"path": "hw/board\n.kicad_pro"}, "invalid_path"),
    ({"path": "hw/\u0085board.kicad_pro"}, "invalid_path"),
    ({"path": " hw/board.kicad_pro"}, "invalid_path"),
    ({"path": "a" * 400 + ".kicad_pro"}, "invalid_path"),
    ({"path": ["board.kicad_pro"]}, "invalid_path"),
])
def test_hostile_bodies_are_refused_and_store_nothing(client, owner, admin, body, code):
    refused = watch(client, REPO, admin[0], body)
    assert refused.status_code == 400 and refused.json["code"] == code, refused.json
    assert count(owner, "watched_boards") == 0 and count(owner, "audit_events") == 0


@pytest.mark.parametrize("raw, content_type, status, code", [
    (b'{"path": "hw/b.kicad_pro"', "application/json", 400, "malformed_json"),
    (b'["hw/b.kicad_pro"]', "application/json", 400, "malformed_json"),
    (b'{"path": "hw/b\\u0000.kicad_pro"}', "application/json", 400, "invalid_text"),
    (b'{"path": "hw/b.kicad_pro"}', "text/plain", 415, "invalid_content_type"),
    (b'{"path": "' + b"a" * 20_000 + b'.kicad_pro"}', "application/json", 413, None),
])
def test_hostile_bytes_are_refused_and_store_nothing(client, owner, admin, raw, content_type, status, code):
    refused = client.simulate_post(BOARD.format(repositoryId=REPO), body=raw,
                                   headers={**admin[0], "Content-Type": content_type})
    assert refused.status_code == status, refused.json
    if code:
        assert refused.json["code"] == code
    assert count(owner, "watched_boards") == 0


@pytest.mark.parametrize("repository", ["0", "abc", "-1", "1" * 25, "8320001 "])
def test_a_malformed_repository_id_is_400(client, owner, admin, repository):
    for response in (client.simulate_post(BOARD.format(repositoryId=repository), json={"path": PATH},
                                          headers=admin[0]),
                     client.simulate_get(SUPPLY.format(repositoryId=repository), headers=admin[0])):
        assert response.status_code in (400, 404), response.status_code
    assert count(owner, "watched_boards") == 0


def test_tenants_are_isolated(client, owner, pool, admin):
    headers, _ = admin
    assert watch(client, REPO, headers).status_code == 201
    # A token of another repository, even of the same account: 403, nothing read or changed.
    value, _ = create_token(pool, OTHER_REPO, scopes=["admin"])
    for response in (get_board(client, REPO, bearer(value)), unwatch(client, REPO, bearer(value)),
                     supply(client, REPO, bearer(value)), watch(client, REPO, bearer(value))):
        assert response.status_code == 403 and response.json["code"] == "repository_mismatch"
    # A token without the admin scope.
    runs_only, _ = create_token(pool, REPO, scopes=["runs:write", "reviews:read"])
    assert unwatch(client, REPO, bearer(runs_only)).json["code"] == "insufficient_scope"
    assert get_board(client, REPO, bearer(runs_only)).json["code"] == "insufficient_scope"
    # A session that cannot reach the repository: it does not exist for them.
    stranger = Session(pool, [OTHER_REPO], viewer_id=9_300_001)
    assert get_board(client, REPO, stranger.headers()).status_code == 404
    assert unwatch(client, REPO, stranger.headers()).status_code == 404
    assert supply(client, REPO, stranger.headers()).status_code == 404
    # No credentials at all.
    assert get_board(client, REPO, {}).status_code == 401
    assert [b["current"] for b in boards(owner)] == [True]


def test_a_session_needs_its_csrf_token_to_watch_or_unwatch(client, owner, pool, repos):
    session = Session(pool, [REPO])
    forged = watch(client, REPO, session.headers(csrf=False))
    assert forged.status_code == 403 and forged.json["code"] == "csrf_failed"
    assert watch(client, REPO, session.headers(csrf="x" * 43)).json["code"] == "csrf_failed"
    assert count(owner, "watched_boards") == 0
    created = watch(client, REPO, session.headers())
    assert created.status_code == 201
    assert unwatch(client, REPO, session.headers(csrf=False)).json["code"] == "csrf_failed"
    assert get_board(client, REPO, session.headers(csrf=False)).json["board"]["createdBy"] == session.actor
    assert unwatch(client, REPO, session.headers()).status_code == 200


def ingest(owner, repository, bom, trigger="push", at=T0):
    result = {"schemaVersion": 1, "triggerKind": trigger, "readiness": "ready", "score": 95,
              "tool": {"name": "boardready-check", "version": "0.1.0"}, "findings": [], "bom": bom}
    return sql_api.run_ingest(owner, repository_id=repository, api_token_id="tok", result=Jsonb(result),
                              now=at)["run_result_id"]


def line(ref, mpn, manufacturer, project=PATH):
    return {"project": project, "references": [ref], "quantity": 1, "value": "v", "footprint": "fp", "dnp": False,
            "mpn": mpn, "manufacturer": manufacturer}


def test_supply_lists_the_boards_bom_with_the_latest_observation_of_each_part(client, owner, admin):
    headers, _ = admin
    assert watch(client, REPO, headers).status_code == 201
    assert supply(client, REPO, headers).json["parts"] == []          # no run carried the BOM yet
    run = ingest(owner, REPO, [line("R1", "RC0603FR-07330RL", "Yageo"), line("U1", "SN74LS00N", "TI"),
                               line("X1", "OTHER-1", "Acme", project="other/other.kicad_pro")])
    parts = [{"partKey": "yageo:RC0603FR-07330RL", "manufacturer": "Yageo", "mpn": "RC0603FR-07330RL",
              "matched": True, "providerPartId": "1001", "lifecycle": "Production",
              "sellers": [{"isAuthorized": True, "offers": [{"inventoryLevel": 10, "prices": [
                  {"quantity": 1, "price": 0.1, "currency": "USD"}]}]}]}]
    sql_api.supply_observations_record(owner, installation_id=INSTALLATION, parts=Jsonb(parts), now=T0)
    later = [{**parts[0], "lifecycle": "NRND"}]
    sql_api.supply_observations_record(owner, installation_id=INSTALLATION, parts=Jsonb(later),
                                       now=T0 + dt.timedelta(hours=1))
    answer = supply(client, REPO, headers)
    assert answer.status_code == 200 and answer.json["board"]["bomRunId"] == str(run)
    resistor, chip = answer.json["parts"]                                # only the watched project's lines
    assert resistor["references"] == ["R1"] and resistor["partKey"] == "yageo:RC0603FR-07330RL"
    assert resistor["observation"]["lifecycleStatus"] == "nrnd"         # the latest
    assert resistor["observation"]["distributorClassification"] == "authorized-distributor"
    assert resistor["observation"]["priceBreaks"] == [{"quantity": 1, "price": 0.1, "currency": "USD"}]
    assert chip["mpn"] == "SN74LS00N" and chip["observation"] is None


def test_supply_without_a_watched_board_is_404(client, admin):
    answer = supply(client, REPO, admin[0])
    assert answer.status_code == 404 and answer.json["code"] == "not_watched"


def walk(client, headers, limit: str) -> list[list[str]]:
    """Every page of the supply listing, as the references of its parts."""
    pages, cursor = [], None
    while True:
        answer = supply(client, REPO, headers, limit=limit, **({"cursor": cursor} if cursor else {}))
        assert answer.status_code == 200, answer.json
        pages.append([p["references"][0] for p in answer.json["parts"]])
        cursor = answer.json["nextCursor"]
        if cursor is None:
            return pages


def test_supply_pages_the_boards_bom_in_the_checkers_order(client, owner, admin):
    headers, _ = admin
    assert watch(client, REPO, headers).status_code == 201
    bom = [line(f"R{n}", f"RES-{n}", "Yageo") for n in range(1, 8)]
    bom.insert(3, line("X1", "OTHER-1", "Acme", project="other/other.kicad_pro"))   # another project: not listed
    ingest(owner, REPO, bom)
    assert walk(client, headers, "3") == [["R1", "R2", "R3"], ["R4", "R5", "R6"], ["R7"]]
    assert walk(client, headers, "7") == [[f"R{n}" for n in range(1, 8)]]
    first = supply(client, REPO, headers)
    assert len(first.json["parts"]) == 7 and first.json["nextCursor"] is None   # default: 50 a page


def test_a_supply_cursor_is_for_the_bom_it_was_made_on(client, owner, pool, admin):
    headers, _ = admin
    assert watch(client, REPO, headers).status_code == 201
    ingest(owner, REPO, [line(f"R{n}", f"RES-{n}", "Yageo") for n in range(1, 5)])
    cursor = supply(client, REPO, headers, limit="2").json["nextCursor"]
    # Another caller's cursor, an altered one, one of another listing: 400.
    other, _ = create_token(pool, REPO, scopes=["admin"])
    payload, mac = cursor.split(".")
    forged = payload[:-2] + ("A" if payload[-2] != "A" else "B") + payload[-1] + "." + mac
    for bad, caller in ((cursor, bearer(other)), (forged, headers), (cursor[:-1], headers)):
        answer = supply(client, REPO, caller, limit="2", cursor=bad)
        assert answer.status_code == 400 and answer.json["code"] == "invalid_cursor"
    # The board's BOM moved on (a newer default-branch run): the old cursor would
    # page another list, so it is refused and the first page starts afresh.
    ingest(owner, REPO, [line(f"C{n}", f"CAP-{n}", "Murata") for n in range(1, 4)], at=T0 + dt.timedelta(hours=1))
    moved = supply(client, REPO, headers, limit="2", cursor=cursor)
    assert moved.status_code == 400 and moved.json["code"] == "invalid_cursor"
    assert "start again" in moved.json["message"]
    assert walk(client, headers, "2") == [["C1", "C2"], ["C3"]]


@pytest.mark.parametrize("params, code", [
    ({"limit": "0"}, "invalid_limit"), ({"limit": "101"}, "invalid_limit"), ({"limit": "ten"}, "invalid_limit"),
    ({"cursor": "garbage"}, "invalid_cursor"), ({"cursor": "a.b.c"}, "invalid_cursor"),
    ({"cursor": "x" * 700}, "invalid_cursor"),
])
def test_bad_supply_paging_parameters(client, admin, params, code):
    headers, _ = admin
    assert watch(client, REPO, headers).status_code == 201
    answer = supply(client, REPO, headers, **params)
    assert answer.status_code == 400 and answer.json["code"] == code

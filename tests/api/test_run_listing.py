"""GET /api/v1/runs, /api/v1/runs/{id} and /api/v1/runs/{id}/findings: keyset
pages in order with no gap or repeat, filters, tampered cursors, tenants, and
the query plan (one index scan per visible repository)."""
from __future__ import annotations

import datetime as dt

import pytest

from app import queries
from contracts import openapi_response_validator
from tests.helpers.access import bearer, create_token
from tests.helpers.sessions import Session, decided_run, finding, seed_repositories

RUNS = "/api/v1/runs"
T0 = dt.datetime(2030, 3, 1, tzinfo=dt.timezone.utc)


def validate(path: str, method: str, response) -> None:
    openapi_response_validator(path, method, response.status_code).validate(response.json)


def seed_runs(owner, repository_ids: list[int], per_repository: int, *, same_time_every: int = 3) -> list[dict]:
    """Release runs spread over time; every few share a started_at, so the id must break ties."""
    rows = []
    for index in range(per_repository * len(repository_ids)):
        repo = repository_ids[index % len(repository_ids)]
        started = T0 + dt.timedelta(minutes=index // same_time_every)
        status = ("completed", "dispatched", "failed")[index % 3]
        decision = {"completed": ("PASS", "FAIL")[index % 2], "failed": "FAIL"}.get(status)
        rows.append(owner.execute(
            "INSERT INTO release_runs (repository_id, installation_id, pr_number, head_sha, trigger_action, status, "
            "decision, started_at, updated_at) SELECT %s, installation_id, %s, md5(%s::text) || 'abcdefgh', 'opened', "
            "%s, %s, %s, now() FROM repositories WHERE id = %s RETURNING id, repository_id, started_at, status, decision",
            (repo, index + 1, index, status, decision, started, repo)).fetchone())
    return rows


def newest_first(rows: list[dict]) -> list[int]:
    return [r["id"] for r in sorted(rows, key=lambda r: (r["started_at"], r["id"]), reverse=True)]


def walk(client, headers, **params) -> list[list[str]]:
    pages, cursor = [], None
    while True:
        answer = client.simulate_get(RUNS, params={**params, **({"cursor": cursor} if cursor else {})}, headers=headers)
        assert answer.status_code == 200, answer.json
        validate(RUNS, "get", answer)
        pages.append([item["id"] for item in answer.json["items"]])
        cursor = answer.json["nextCursor"]
        if cursor is None:
            return pages


@pytest.fixture
def repos(owner):
    return seed_repositories(owner, 6)


def test_pages_cover_the_visible_runs_newest_first_without_gap_or_repeat(client, owner, pool, repos):
    rows = seed_runs(owner, repos, 20)
    visible = repos[:3]
    session = Session(pool, visible)
    pages = walk(client, session.headers(csrf=False), limit="7")
    expected = newest_first([r for r in rows if r["repository_id"] in visible])
    assert [int(i) for page in pages for i in page] == expected
    assert [len(p) for p in pages] == [7] * 8 + [4]
    default = client.simulate_get(RUNS, headers=session.headers(csrf=False)).json
    assert len(default["items"]) == 25 and default["items"][0]["id"] == str(expected[0])
    item = default["items"][0]
    assert set(item) == {"id", "repository", "pullRequestNumber", "headSha", "status", "decision", "startedAt", "reviewId"}


@pytest.mark.parametrize("params, keep", [
    ({"status": "completed"}, lambda r: r["status"] == "completed"),
    ({"decision": "FAIL"}, lambda r: r["decision"] == "FAIL"),
    ({"status": "completed", "decision": "PASS"}, lambda r: r["status"] == "completed" and r["decision"] == "PASS"),
])
def test_filters(client, owner, pool, repos, params, keep):
    rows = seed_runs(owner, repos, 10)
    session = Session(pool, repos[:2])
    pages = walk(client, session.headers(csrf=False), limit="4", **params)
    assert [int(i) for p in pages for i in p] == newest_first([r for r in rows if r["repository_id"] in repos[:2]
                                                             and keep(r)])


def test_repository_filter(client, owner, pool, repos):
    rows = seed_runs(owner, repos, 5)
    session = Session(pool, repos[:2])
    pages = walk(client, session.headers(csrf=False), repositoryId=str(repos[1]))
    assert [int(i) for p in pages for i in p] == newest_first([r for r in rows if r["repository_id"] == repos[1]])
    # A repository the viewer cannot reach gives nothing, as if it had no runs.
    assert walk(client, session.headers(csrf=False), repositoryId=str(repos[4])) == [[]]


def test_a_bearer_token_with_reviews_read_lists_its_repository(client, owner, pool, repos):
    rows = seed_runs(owner, repos, 4)
    value, _ = create_token(pool, repos[3], scopes=["reviews:read"])
    pages = walk(client, bearer(value))
    assert [int(i) for p in pages for i in p] == newest_first([r for r in rows if r["repository_id"] == repos[3]])
    runs_only, _ = create_token(pool, repos[3], scopes=["runs:write"])
    assert client.simulate_get(RUNS, headers=bearer(runs_only)).json["code"] == "insufficient_scope"
    assert client.simulate_get(RUNS).status_code == 401


@pytest.mark.parametrize("params, code", [
    ({"limit": "0"}, "invalid_limit"), ({"limit": "101"}, "invalid_limit"), ({"limit": "ten"}, "invalid_limit"),
    ({"status": "done"}, "invalid_status"), ({"decision": "pass"}, "invalid_decision"),
    ({"repositoryId": "-1"}, "invalid_repository_id"), ({"cursor": "garbage"}, "invalid_cursor"),
    ({"cursor": "a.b.c"}, "invalid_cursor"), ({"cursor": "x" * 700}, "invalid_cursor"),
    # str.isdigit() admits these and int() refuses them: once a 500.
    ({"limit": "\u00b2"}, "invalid_limit"), ({"limit": "9" * 5000}, "invalid_limit"),
    ({"repositoryId": "\u00b2"}, "invalid_repository_id"),
])
def test_bad_listing_parameters(client, pool, repos, params, code):
    answer = client.simulate_get(RUNS, params=params, headers=Session(pool, repos).headers(csrf=False))
    assert answer.status_code == 400 and answer.json["code"] == code
    validate(RUNS, "get", answer)


def test_a_cursor_that_was_tampered_with_or_is_not_yours(client, owner, pool, repos):
    seed_runs(owner, repos, 5)
    session = Session(pool, repos)
    cursor = client.simulate_get(RUNS, params={"limit": "2"}, headers=session.headers(csrf=False)).json["nextCursor"]
    payload, mac = cursor.split(".")
    forged = payload[:-2] + ("A" if payload[-2] != "A" else "B") + payload[-1] + "." + mac
    for bad, params in ((forged, {}), (cursor, {"status": "completed"}), (cursor[:-1], {})):
        answer = client.simulate_get(RUNS, params={"limit": "2", "cursor": bad, **params},
                                     headers=session.headers(csrf=False))
        assert answer.status_code == 400 and answer.json["code"] == "invalid_cursor"
    other = Session(pool, repos)
    stolen = client.simulate_get(RUNS, params={"limit": "2", "cursor": cursor}, headers=other.headers(csrf=False))
    assert stolen.status_code == 400 and stolen.json["code"] == "invalid_cursor"


def test_the_plan_is_one_index_scan_per_visible_repository(owner, repos):
    """The keyset condition and the order are served by the per-repository index:
    no sort of a repository's runs, whatever their number (the planner is told
    not to prefer a sequential scan, which it would on this small table)."""
    seed_runs(owner, repos, 30)
    owner.execute("SET enable_seqscan = off")
    owner.execute("SET enable_bitmapscan = off")
    text = queries.text("runs_page", after=True, status=False, decision=False)
    plan = "\n".join(r["QUERY PLAN"] for r in owner.execute("EXPLAIN " + text, {
        "repository_ids": repos[:3], "limit": 26, "after_started_at": T0 + dt.timedelta(minutes=20),
        "after_id": 10**9, "status": None, "decision": None}).fetchall())
    scan = next(line for line in plan.splitlines() if "release_runs_repository_listing" in line)
    assert "Index Scan" in scan, plan
    lateral = plan.split("Limit")[2]  # the per-repository Limit: an index scan straight under it
    assert "Sort" not in lateral.split("Index Scan")[0], plan
    assert "Index Cond: ((repository_id = visible.repository_id) AND (ROW(started_at, id) < ROW(" in plan, plan


def test_one_run_with_its_decision_review_and_counts(client, owner, pool, repos):
    findings = [finding(0, "error"), finding(1, "high"), finding(2, "medium"), finding(3, "info")]
    run = decided_run(owner, pool, repos[0], readiness="blocked", findings=findings)
    session = Session(pool, repos[:1])
    answer = client.simulate_get(f"{RUNS}/{run['id']}", headers=session.headers(csrf=False))
    assert answer.status_code == 200, answer.json
    validate(RUNS + "/{id}", "get", answer)
    body = answer.json
    assert body["decision"] == "FAIL" and body["run"]["readinessDecision"] == "FAIL"
    assert body["run"]["publishedConclusion"] == "failure"
    assert body["review"] == {"id": str(run["review_id"]), "createdBy": "host-user:9000002", "decision": "pending"}
    assert body["counts"] == {"findings": 4, "waived": 0, "unwaivedBlocking": 2,
                              "bySeverity": {"error": 1, "high": 1, "medium": 1, "low": 0, "info": 1}}


def test_runs_of_other_tenants_are_404(client, owner, pool, repos):
    run = decided_run(owner, pool, repos[0], findings=[finding(0, "high")])
    outsider = Session(pool, repos[1:])
    for path in (f"{RUNS}/{run['id']}", f"{RUNS}/{run['id']}/findings", f"{RUNS}/999999999", f"{RUNS}/abc",
                 f"{RUNS}/99999999999999999999"):
        answer = outsider.headers(csrf=False)
        response = client.simulate_get(path, headers=answer)
        assert response.status_code == 404 and response.json["code"] == "not_found", path
    other_token, _ = create_token(pool, repos[1], scopes=["reviews:read"])
    assert client.simulate_get(f"{RUNS}/{run['id']}", headers=bearer(other_token)).status_code == 404
    own_token, _ = create_token(pool, repos[0], scopes=["reviews:read"])
    assert client.simulate_get(f"{RUNS}/{run['id']}", headers=bearer(own_token)).status_code == 200


def test_findings_in_keyset_pages_with_filters(client, owner, pool, repos):
    findings = [finding(i, ("error", "high", "medium", "low", "info")[i % 5]) for i in range(23)]
    run = decided_run(owner, pool, repos[0], readiness="blocked", findings=findings)
    session = Session(pool, repos[:1])
    path = f"{RUNS}/{run['id']}/findings"
    seen, cursor = [], None
    while True:
        answer = client.simulate_get(path, params={"limit": "5", **({"cursor": cursor} if cursor else {})},
                                     headers=session.headers(csrf=False))
        assert answer.status_code == 200
        validate(RUNS + "/{id}/findings", "get", answer)
        seen += answer.json["items"]
        cursor = answer.json["nextCursor"]
        if cursor is None:
            break
    assert [f["fingerprint"] for f in seen] == [f["fingerprint"] for f in findings]
    assert all(set(f) >= {"fingerprint", "severity", "ruleId", "waived"} and f["waived"] is False for f in seen)
    blocking = client.simulate_get(path, params={"severity": "high,error"}, headers=session.headers(csrf=False)).json
    assert [f["severity"] for f in blocking["items"]] == [f["severity"] for f in findings if f["severity"] in
                                                          ("error", "high")]
    for params, code in (({"severity": "fatal"}, "invalid_severity"), ({"waived": "yes"}, "invalid_waived"),
                         ({"limit": "500"}, "invalid_limit"), ({"cursor": "nope"}, "invalid_cursor")):
        answer = client.simulate_get(path, params=params, headers=session.headers(csrf=False))
        assert answer.status_code == 400 and answer.json["code"] == code


def test_the_run_routes_keep_the_result_routes(client):
    """/api/v1/runs/result and /github-actions-result are not run ids."""
    router = client.app._router
    for path, template in ((f"{RUNS}/result", "/api/v1/runs/result"),
                           (f"{RUNS}/github-actions-result", "/api/v1/runs/github-actions-result"),
                           (f"{RUNS}/12", "/api/v1/runs/{run_id}")):
        assert router.find(path)[3] == template

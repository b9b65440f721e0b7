"""An account with data in every table erasure and retention touch, made through
the SQL functions the service uses where there is one, and a census of those
rows, for the retention, erasure and legal-hold tests."""
from __future__ import annotations

import datetime as dt
import itertools
import json
from dataclasses import dataclass, field

from psycopg.types.json import Jsonb

from app import run_results, sql_api
from app.config import Config
from tests.helpers.paths import webhook_fixture
from tests.helpers.access import create_token, marketplace_body, post_marketplace, seed_repository
from tests.helpers.service import make_lifecycle_jobs, post_webhook
from tests.helpers.sessions import Session, decided_run, finding

OPERATOR = "operator:ops.alice"
_heads = itertools.count(1)


@dataclass
class Account:
    account_id: int
    installation_id: int
    repository_id: int
    ids: dict = field(default_factory=dict)   # table -> ids of the rows seeded (for the census)


def call(pool, function, **arguments):
    """One of app/sql_api.py's functions, on a connection of the pool."""
    with pool.connection() as conn:
        return function(conn, **arguments)


def post_comment(owner, pool, release_run_id: int, comment_id: int, now: dt.datetime | None = None) -> None:
    """The outbox's pull request comment, reported as the worker reports it."""
    item = owner.execute("SELECT id FROM outbox_items WHERE release_run_id = %s AND kind = 'pr_comment' "
                         "AND status = 'accepted'", (release_run_id,)).fetchone()
    with pool.connection() as conn:
        [claimed] = sql_api.outbox_claim(conn, worker="test", limit=1, lease_seconds=60, max_attempts=5,
                                         item_id=item["id"])
        assert sql_api.outbox_report(conn, item_id=item["id"], lease_token=claimed["lease_token"],
                                     outcome="comment_posted", comment_id=comment_id,
                                     now=sql_api.DEFAULT if now is None else now)["outcome"] == "comment_posted"


def finished_run(owner, pool, repository_id: int, *, pr_number: int = 1, started_at=None, findings: int = 3,
                 comment_at=None) -> dict:
    """A decided release run whose code host calls are all done (check run completed, comment posted)."""
    run = decided_run(owner, pool, repository_id, pr_number=pr_number, started_at=started_at,
                      findings=[finding(i, "medium") for i in range(findings)], readiness="at-risk",
                      head_sha=f"{next(_heads):040x}")
    post_comment(owner, pool, run["id"], 70_000_000 + run["id"], comment_at)
    owner.execute("UPDATE release_runs SET status = 'completed', completed_at = started_at WHERE id = %s",
                  (run["id"],))
    return run


def ingest(pool, repository_id: int, now=None, findings: int = 2) -> int:
    result = run_results.validate({
        "schemaVersion": 1, "triggerKind": "manual", "repository": "acme/board", "headSha": "a" * 40,
        "readiness": "ready", "score": 95, "tool": {"name": "boardready-check", "version": "0.1.0"},
        "findings": [finding(i, "low") for i in range(findings)]})
    row = call(pool, sql_api.run_ingest, repository_id=repository_id, api_token_id=None, result=Jsonb(result),
               now=sql_api.DEFAULT if now is None else now)
    assert row["outcome"] == "accepted"
    return row["run_result_id"]


def deliver_pull_request(client, installation_id: int, repository_id: int, delivery_id: str) -> None:
    payload = json.loads(webhook_fixture("pull_request.opened.12.json"))
    payload["installation"]["id"] = installation_id
    payload["repository"]["id"] = repository_id
    assert post_webhook(client, json.dumps(payload).encode(), "pull_request", delivery_id=delivery_id).status_code \
        == 202


def seed_account(owner, pool, client, *, account_id: int, installation_id: int, repository_id: int,
                 login: str = "acme") -> Account:
    """Two release runs of one pull request (the first superseded by the second),
    their attempts, results, findings, BOM lines, supply check, reviews with an
    approval, outbox items, the comment; a waiver, a token, a session, an
    ingested result, webhook deliveries with their jobs (one dead-lettered and
    replayed), reconciliation items, a watched board and the supply
    bookkeeping of the installation."""
    seed_repository(owner, account_id=account_id, installation_id=installation_id, repository_id=repository_id,
                    login=login)
    first = finished_run(owner, pool, repository_id)
    second = finished_run(owner, pool, repository_id, findings=4)
    owner.execute("UPDATE release_runs SET status = 'superseded', superseded_by = %s WHERE id = %s",
                  (second["id"], first["id"]))
    assert call(pool, sql_api.review_record_approval_v2, review_id=second["review_id"],
                repository_ids=[repository_id], actor="host-user:9000001", status="approved", break_glass=False,
                break_glass_reason=None, limit=Config.decisions_per_minute)["outcome"] == "recorded"
    assert call(pool, sql_api.waiver_create_v2, repository_id=repository_id, repository_ids=[repository_id],
                fingerprint=f"fp-{repository_id}", reason="known", expires_at=None, actor="host-user:9000001",
                max_days=Config.waiver_max_days, limit=Config.decisions_per_minute)["outcome"] == "created"
    create_token(pool, repository_id)
    Session(pool, [repository_id], viewer_id=account_id + 1)
    ingest(pool, repository_id)

    deliver_pull_request(client, installation_id, repository_id, f"d-{account_id}-1")
    deliver_pull_request(client, installation_id, repository_id, f"d-{account_id}-2")
    make_lifecycle_jobs(owner)
    dead = owner.execute("UPDATE lifecycle_jobs SET status = 'dead_letter', attempts = 3, reason_code = "
                         "'handler_error', error_class = 'X', failed_at = now() WHERE idempotency_key = %s "
                         "RETURNING id", (f"host:d-{account_id}-2",)).fetchone()["id"]
    assert call(pool, sql_api.dead_letter_replay, installation_id=installation_id, item_type="job", item_id=dead,
                idempotency_key=f"replay-{account_id}", actor="operator:ops.alice",
                operation_id="op")["outcome"] == "replayed"

    attempt = owner.execute("SELECT current_attempt_id FROM release_runs WHERE id = %s",
                            (second["id"],)).fetchone()["current_attempt_id"]
    inbox = owner.execute("SELECT id FROM webhook_inbox WHERE installation_id = %s ORDER BY id LIMIT 1",
                          (installation_id,)).fetchone()["id"]
    for kind, subject in (("release_run", second["id"]), ("workflow_attempt", attempt), ("lifecycle_inbox", inbox)):
        owner.execute("INSERT INTO reconciliation_items (kind, subject_id, installation_id, reason_code, deadline_at, "
                      "status, run_after, outcome, completed_at, created_at, updated_at) VALUES (%s, %s, %s, "
                      "'reporting_stale', now(), 'completed', now(), 'reconciled', now(), now(), now())",
                      (kind, subject, installation_id))

    result = owner.execute("SELECT id FROM run_results WHERE release_run_id = %s", (second["id"],)).fetchone()["id"]
    owner.execute("INSERT INTO run_bom_lines (run_result_id, ordinal, refs, quantity, mpn) "
                  "VALUES (%s, 1, ARRAY['R1'], 1, 'RC0603')", (result,))
    board = owner.execute("INSERT INTO watched_boards (installation_id, repository_id, path, created_by, created_at, "
                          "refresh_after) VALUES (%s, %s, 'board.kicad_pro', 'host-user:1', now(), now()) "
                          "RETURNING id", (installation_id, repository_id)).fetchone()["id"]
    owner.execute("INSERT INTO supply_checks (run_result_id, release_run_id, installation_id, watched_board_id, status,"
                  " run_after, hold_until, created_at) VALUES (%s, %s, %s, %s, 'completed', now(), now(), now())",
                  (result, second["id"], installation_id, board))
    owner.execute("INSERT INTO part_lifecycle_observations (part_key, mpn, matched, lifecycle_status, "
                  "distributor_classification, installation_id, fetched_at) VALUES ('yageo:RC0603', 'RC0603', true, "
                  "'production', 'authorized-distributor', %s, now())", (installation_id,))
    owner.execute("INSERT INTO component_provider_calls (installation_id, window_start, calls) VALUES (%s, now(), 3)",
                  (installation_id,))
    owner.execute("INSERT INTO component_provider_breakers (installation_id, state, updated_at) "
                  "VALUES (%s, 'closed', now())", (installation_id,))
    owner.execute("INSERT INTO component_provider_breaker_transitions (installation_id, from_state, to_state, reason, "
                  "failures, occurred_at) VALUES (%s, 'closed', 'open', 'failure_threshold', 5, now())",
                  (installation_id,))
    owner.execute("INSERT INTO report_artifacts (run_result_id, release_run_id, repository_id, media_type, sha256,"
                  " size_bytes, content, created_at) VALUES (%s, %s, %s, 'text/html', repeat('0', 64), 4, "
                  "'<p/>', now())", (result, second["id"], repository_id))

    account = Account(account_id, installation_id, repository_id)
    runs = [r["id"] for r in owner.execute("SELECT id FROM release_runs WHERE repository_id = %s",
                                           (repository_id,)).fetchall()]
    account.ids = {
        "runs": runs,
        "attempts": ids(owner, "SELECT id FROM release_run_attempts WHERE release_run_id = ANY (%s)", runs),
        "results": ids(owner, "SELECT id FROM run_results WHERE repository_id = %s", repository_id),
        "reviews": ids(owner, "SELECT id FROM reviews WHERE repository_id = %s", repository_id),
        "inbox": ids(owner, "SELECT id FROM webhook_inbox WHERE installation_id = %s", installation_id),
    }
    return account


def ids(owner, query: str, param) -> list[int]:
    return [r["id"] for r in owner.execute(query, (param,)).fetchall()]


def census(owner, account: Account) -> dict[str, int]:
    """The account's rows in every table erasure empties."""
    i, r, x = [account.installation_id], [account.repository_id], account.ids
    queries = {
        "installations": ("id = ANY (%s)", i), "repositories": ("id = ANY (%s)", r),
        "pull_requests": ("repository_id = ANY (%s)", r), "pull_request_comments": ("repository_id = ANY (%s)", r),
        "waivers": ("repository_id = ANY (%s)", r), "api_tokens": ("repository_id = ANY (%s)", r),
        "watched_boards": ("repository_id = ANY (%s)", r),
        "release_runs": ("id = ANY (%s)", x["runs"]), "release_run_attempts": ("id = ANY (%s)", x["attempts"]),
        "outbox_items": ("release_run_id = ANY (%s)", x["runs"]), "run_results": ("id = ANY (%s)", x["results"]),
        "run_findings": ("run_result_id = ANY (%s)", x["results"]),
        "run_bom_lines": ("run_result_id = ANY (%s)", x["results"]),
        "supply_checks": ("run_result_id = ANY (%s)", x["results"]),
        "reviews": ("id = ANY (%s)", x["reviews"]), "review_approvals": ("review_id = ANY (%s)", x["reviews"]),
        "webhook_inbox": ("id = ANY (%s)", x["inbox"]), "lifecycle_jobs": ("inbox_id = ANY (%s)", x["inbox"]),
        "reconciliation_items": ("installation_id = ANY (%s)", i), "replay_requests": ("installation_id = ANY (%s)", i),
        "sessions": ("repository_ids && %s::bigint[]", r),
        "part_lifecycle_observations": ("installation_id = ANY (%s)", i),
        "component_provider_calls": ("installation_id = ANY (%s)", i),
        "component_provider_breakers": ("installation_id = ANY (%s)", i),
        "component_provider_breaker_transitions": ("installation_id = ANY (%s)", i),
        "report_artifacts": ("repository_id = ANY (%s)", r),
    }
    return {table: owner.execute(f"SELECT count(*) AS n FROM boardready.{table} WHERE {where}",
                                 (param,)).fetchone()["n"]
            for table, (where, param) in queries.items()}


def cancel(client, account_id: int, effective_date: str, delivery_id: str | None = None):
    result = post_marketplace(client, marketplace_body("marketplace_purchase.cancelled.1.json", account_id=account_id,
                                                       effective_date=effective_date), delivery_id)
    assert result.status_code == 200 and result.json["outcome"] == "applied", result.json
    return result


def place_hold(pool, account_id: int, key: str, reason: str = "litigation 2024-17", now=None) -> dict:
    return call(pool, sql_api.legal_hold_place, account_id=account_id, reason=reason, reference=None,
                idempotency_key=key, actor=OPERATOR, now=sql_api.DEFAULT if now is None else now)


def release_hold(pool, account_id: int, hold_id: int, key: str, now=None) -> dict:
    return call(pool, sql_api.legal_hold_release, account_id=account_id, hold_id=hold_id, idempotency_key=key,
                actor=OPERATOR, now=sql_api.DEFAULT if now is None else now)


def erasure_request(owner, account_id: int) -> dict:
    return owner.execute("SELECT * FROM erasure_requests WHERE account_id = %s ORDER BY id DESC LIMIT 1",
                         (account_id,)).fetchone()


def audit(owner, event_type: str) -> list[dict]:
    return owner.execute("SELECT * FROM audit_events WHERE event_type = %s ORDER BY occurred_at, id",
                         (event_type,)).fetchall()

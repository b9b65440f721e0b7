"""Sessions, decided release runs and a served service for the sessions,
reviews and run-listing tests."""
from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import threading
from wsgiref.simple_server import WSGIRequestHandler, make_server

from psycopg.types.json import Jsonb

from app import run_results, sql_api
from app.web.session_auth import SESSION_COOKIE, csrf_token, digest, new_secret_value
from tests.helpers.access import seed_repository

REVIEWS_ACCOUNT = 7_100_001
VIEWER_ID = 9_000_001
AUTHOR_ID = 9_000_002


@contextlib.contextmanager
def served(app, port: int = 0):
    """The Falcon app on a real HTTP server in a thread (the browser's view)."""

    class Quiet(WSGIRequestHandler):
        def log_message(self, *args):
            pass

    server = make_server("127.0.0.1", port, app, handler_class=Quiet)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


class Session:
    """A session made through the SQL function the callback uses. `permission`: the
    viewer's permission on the code host on every repository (admin, write or read);
    `admin`/`write`: repositories with that permission, overriding it."""

    def __init__(self, pool, repository_ids, viewer_id: int = VIEWER_ID, login: str = "viewer",
                 ttl_hours: int = 12, now=None, permission: str = "admin", admin=None, write=None):
        self.value = new_secret_value()
        self.viewer_id = viewer_id
        repository_ids = list(repository_ids)
        admin = list(admin if admin is not None else repository_ids if permission == "admin" else [])
        write = list(write if write is not None else repository_ids if permission == "write" else [])
        with pool.connection() as conn:
            assert sql_api.session_create_v2(conn, token_sha256=digest(self.value), viewer_id=viewer_id,
                                             viewer_login=login, installation_ids=[], repository_ids=repository_ids,
                                             admin_repository_ids=admin, write_repository_ids=write,
                                             ttl_hours=ttl_hours,
                                             now=sql_api.DEFAULT if now is None else now)["outcome"] == "created"

    @property
    def actor(self) -> str:
        return f"host-user:{self.viewer_id}"

    @property
    def csrf(self) -> str:
        return csrf_token(self.value)

    def headers(self, csrf: bool | str = True) -> dict:
        """The cookie, and the CSRF header (True: the right one; a string: that value; False: none)."""
        headers = {"Cookie": f"{SESSION_COOKIE}={self.value}"}
        if csrf:
            headers["X-CSRF-Token"] = self.csrf if csrf is True else csrf
        return headers


def seed_repositories(owner, count: int, *, first_id: int = 8_800_001, installation_id: int = 7_700_001,
                      account_id: int = REVIEWS_ACCOUNT, login: str = "acme") -> list[int]:
    return [seed_repository(owner, account_id=account_id, installation_id=installation_id, repository_id=first_id + i,
                            full_name=f"{login}/board-{i}", login=login)
            for i in range(count)]


def finding(index: int, severity: str, fingerprint: str | None = None) -> dict:
    return {"ruleId": f"rule.{severity}", "severity": severity, "message": f"finding {index}",
            "fingerprint": fingerprint or hashlib.sha256(f"f-{index}".encode()).hexdigest()[:32],
            "path": "board.kicad_pcb", "startLine": index + 1, "endLine": index + 1}


def decided_run(owner, pool, repository_id: int, *, pr_number: int = 1, readiness: str = "at-risk",
                findings: list | None = None, author_id: int | None = AUTHOR_ID, started_at=None,
                check_run_id: int | None = 42_000_001, published: bool = True, head_sha: str | None = None) -> dict:
    """A release run whose signed result was accepted (release_result_accept, as the
    callback calls it), its check run completed unless `published` is False."""
    head_sha = head_sha or hashlib.sha1(f"{repository_id}-{pr_number}-{started_at}-{readiness}".encode()).hexdigest()
    installation_id = owner.execute("SELECT installation_id FROM repositories WHERE id = %s",
                                    (repository_id,)).fetchone()["installation_id"]
    owner.execute("INSERT INTO pull_requests (repository_id, number, head_sha, state, updated_at, author_id, "
                  "author_login) VALUES (%s, %s, %s, 'open', now(), %s, 'author') ON CONFLICT (repository_id, number) "
                  "DO UPDATE SET head_sha = EXCLUDED.head_sha, author_id = EXCLUDED.author_id",
                  (repository_id, pr_number, head_sha, author_id))
    run = owner.execute(
        "INSERT INTO release_runs (repository_id, installation_id, pr_number, head_sha, trigger_action, status, "
        "started_at, updated_at, check_run_id) VALUES (%s, %s, %s, %s, 'opened', 'dispatched', %s, now(), %s) "
        "RETURNING id", (repository_id, installation_id, pr_number, head_sha, started_at or dt.datetime.now(dt.timezone.utc),
                         check_run_id)).fetchone()["id"]
    attempt = owner.execute(
        "INSERT INTO release_run_attempts (release_run_id, attempt_number, nonce, dispatch_state, workflow_run_id, "
        "created_at) VALUES (%s, 1, %s, 'dispatched', %s, now()) RETURNING id, nonce",
        (run, hashlib.md5(str(run).encode()).hexdigest(), 15_000_000_000 + run)).fetchone()
    owner.execute("UPDATE release_runs SET current_attempt_id = %s WHERE id = %s", (attempt["id"], run))
    result = {"schemaVersion": 1, "triggerKind": "pull_request", "repository": "acme/board", "headSha": head_sha,
              "readiness": readiness, "score": {"ready": 95, "at-risk": 71, "blocked": 20}[readiness],
              "tool": {"name": "boardready-check", "version": "0.1.0"}, "findings": findings or []}
    result = run_results.validate(result)
    with pool.connection() as conn:
        accepted = sql_api.release_result_accept(conn, attempt_ref=f"{attempt['id']}-{attempt['nonce']}",
                                                 repository_id=repository_id, workflow_run_id=15_000_000_000 + run,
                                                 source="workflow_callback", result=Jsonb(result),
                                                 digest=run_results.digest(result), api_token_id=None, oidc_jti="jti")
    assert accepted["outcome"] == "accepted", accepted
    if published:
        publish_completion(owner, pool, run)
    review = owner.execute("SELECT id FROM reviews WHERE release_run_id = %s", (run,)).fetchone()
    return {"id": run, "review_id": review["id"] if review else None, "head_sha": head_sha}


def publish_completion(owner, pool, release_run_id: int) -> None:
    """The outbox's check run completion, reported as the worker reports it (no code host here)."""
    item = owner.execute("SELECT id FROM outbox_items WHERE release_run_id = %s AND kind = 'check_run_complete' "
                         "AND status = 'accepted'", (release_run_id,)).fetchone()
    with pool.connection() as conn:
        claimed = sql_api.outbox_claim(conn, worker="test", limit=1, lease_seconds=60, max_attempts=5,
                                       item_id=item["id"])
        conclusion = owner.execute("SELECT conclusion FROM run_results WHERE release_run_id = %s ORDER BY id DESC "
                                   "LIMIT 1", (release_run_id,)).fetchone()["conclusion"]
        sql_api.outbox_report(conn, item_id=item["id"], lease_token=claimed[0]["lease_token"],
                              outcome="progress_recorded", progress=1, published_conclusion=conclusion)
        assert sql_api.outbox_report(conn, item_id=item["id"], lease_token=claimed[0]["lease_token"],
                                     outcome="check_run_completed")["outcome"] == "check_run_completed"


def decision_items(owner, release_run_id: int) -> list[dict]:
    return owner.execute("SELECT id, status, run_after, idempotency_key FROM outbox_items "
                         "WHERE release_run_id = %s AND kind = 'check_run_decision' ORDER BY id",
                         (release_run_id,)).fetchall()

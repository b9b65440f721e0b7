"""An upgrade without downtime, under load: the previous release (the one
CHANGELOG.md names, checked out with `git worktree`) serves the code host's
webhooks and completes release runs while this release migrates the database
under it, starts its own API and workers beside it, and takes over; then the
old processes stop, and the contract migrations drop what only they used.

A TCP forwarder stands where a load balancer would: the code host's webhooks
and the runner's result callbacks reach whichever API it points at; it is
moved to the new API before the old one is stopped (the old one drains what
it holds, as gunicorn's graceful stop does).

Counted and printed: every delivery and every result answered 2xx (no 5xx, no
unanswered request at any point); every pull request's job, code host calls
(check run created, workflow dispatched, check run completed, comment) and
check run exactly once; every job and outbox call done in its first attempt,
so no call of an old process failed; no error in any process's log.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import httpx
import psycopg
import pytest
from psycopg.rows import dict_row

import emulator
from tests.helpers.service import MARKETPLACE_SECRET, OIDC_AUDIENCE, WEBHOOK_SECRET, free_port, wait_for
from tests.helpers.host import REPOSITORY
from tests.helpers.releases import ROOT, checked_out, migrate_with, previous_release, tree_env
from tests.helpers.results import CALLBACK, envelope, make_result
from tests.helpers.tcp_proxy import TcpProxy

IN_FLIGHT = 3          # pull requests whose result has not been sent yet, at most
PER_PHASE = 3          # release runs completed in each phase before the next step
OUTBOX_KINDS = ("check_run_create", "workflow_dispatch", "check_run_complete", "pr_comment")


class Release:
    """One release's API (as bin/serve runs it, without workers) and worker, run from its tree."""

    def __init__(self, name: str, tree: Path, env: dict, logs: Path):
        self.name, self.tree = name, tree
        self.port = free_port()
        self.env = tree_env(tree, {**env, "SERVICE_BIND": f"127.0.0.1:{self.port}"})
        self.log_path = logs / f"{name}.log"
        self.processes: list[subprocess.Popen] = []

    def start(self) -> "Release":
        where = subprocess.run([sys.executable, "-c", "import app, workers; print(app.__file__, workers.__file__)"],
                               cwd=self.tree, env=self.env, capture_output=True, text=True, check=True).stdout.split()
        assert all(Path(path).is_relative_to(self.tree) for path in where), f"{self.name} runs code from {where}"
        log = open(self.log_path, "a", encoding="utf-8")
        # The API first: it migrates as it starts (as bin/serve does), and the
        # previous release's own migration is not one to run under its workers
        # (its function files drop and create a trigger).
        api = subprocess.Popen([sys.executable, "-m", "app.serve", "--no-workers"], cwd=self.tree, env=self.env,
                               stdout=log, stderr=log)
        self.processes = [api]
        wait_for(lambda: self._live(api), seconds=90,
                 on_timeout=lambda: self.log_path.read_text(encoding="utf-8")[-3000:])
        self.processes.append(subprocess.Popen([sys.executable, "-m", "workers"], cwd=self.tree, env=self.env,
                                               stdout=log, stderr=log))
        return self

    def _live(self, api: subprocess.Popen) -> bool:
        assert api.poll() is None, f"the {self.name} API exited: {self.log_path.read_text(encoding='utf-8')[-3000:]}"
        try:
            return httpx.get(f"http://127.0.0.1:{self.port}/api/health/live", timeout=1).status_code == 200
        except httpx.HTTPError:
            return False

    def stop(self) -> list[int]:
        for process in self.processes:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
        codes = []
        for process in self.processes:
            try:
                codes.append(process.wait(timeout=60))
            except subprocess.TimeoutExpired:
                process.kill()
                codes.append(process.wait())
        return codes

    def items_done(self, since: float, until: float = float("inf")) -> int:
        """Queue items this release's workers finished between two instants (their log says so)."""
        done = 0
        for line in self.log_path.read_text(encoding="utf-8", errors="replace").splitlines():
            if line.startswith("{") and '"event":"worker.item_done"' in line:
                stamp = json.loads(line)["ts"]
                done += since <= stamp <= until
        return done

    def errors(self) -> list[str]:
        lines = self.log_path.read_text(encoding="utf-8", errors="replace").splitlines()
        return [line[:400] for line in lines
                if '"level":"error"' in line or '"level":"critical"' in line or "Traceback" in line]

    def failed_items(self) -> list[str]:
        """The attempts its workers reported as failed (warnings, not errors: a failed attempt is retried)."""
        lines = self.log_path.read_text(encoding="utf-8", errors="replace").splitlines()
        return [line[:400] for line in lines if '"event":"worker.item_failed"' in line]


class Traffic(threading.Thread):
    """Opens pull requests (the emulator delivers their signed webhooks) and,
    as each is dispatched, sends its signed result as the runner would."""

    def __init__(self, host, proxy_url: str, db_url: str):
        super().__init__(daemon=True)
        self.host, self.proxy_url, self.db_url = host, proxy_url, db_url
        self.stopping = threading.Event()
        self.opened: list[str] = []        # head shas
        self.results: dict[str, int | None] = {}
        self.answers: dict[str, str] = {}    # what a result that was not accepted got back
        self.result_attempts = 0
        self.failure: BaseException | None = None

    def run(self) -> None:
        try:
            with psycopg.connect(self.db_url, autocommit=True, row_factory=dict_row) as conn:
                self._loop(conn)
        except BaseException as exc:  # seen by the test, not lost in the thread
            self.failure = exc

    def _loop(self, conn) -> None:
        pending: set[str] = set()
        deadline = None
        while True:
            if self.stopping.is_set():
                deadline = deadline or time.monotonic() + 120
                if not pending or time.monotonic() > deadline:
                    return
            elif len(pending) < IN_FLIGHT:
                pr = self.host.open_pull_request(REPOSITORY, deliver=True)
                self.opened.append(pr["head"]["sha"])
                pending.add(pr["head"]["sha"])
            for head_sha in sorted(pending):
                row = conn.execute(
                    "SELECT a.id, a.nonce, a.workflow_run_id FROM boardready.release_runs rr "
                    "JOIN boardready.release_run_attempts a ON a.id = rr.current_attempt_id "
                    "WHERE rr.head_sha = %s AND a.workflow_run_id IS NOT NULL", (head_sha,)).fetchone()
                if row:
                    self.results[head_sha] = self._send_result(head_sha, f"{row['id']}-{row['nonce']}",
                                                                row["workflow_run_id"])
                    pending.discard(head_sha)
            time.sleep(0.05)

    def _send_result(self, head_sha: str, attempt_ref: str, workflow_run_id: int) -> int | None:
        token = self.host.mint_oidc_token(OIDC_AUDIENCE, run_id=workflow_run_id)
        self.result_attempts += 1
        try:
            answer = httpx.post(f"{self.proxy_url}{CALLBACK}", json=envelope(attempt_ref, make_result(head_sha)),
                                headers={"Authorization": f"Bearer {token}"}, timeout=30)
        except httpx.HTTPError as exc:
            self.answers[head_sha] = repr(exc)
            return None
        if answer.status_code != 200:
            self.answers[head_sha] = f"{answer.status_code} {answer.text[:300]}"
        return answer.status_code

    def completed(self) -> int:
        return sum(1 for status in self.results.values() if status == 200)


def _count(conn, sql: str, *params) -> int:
    return conn.execute(sql, params).fetchone()["n"]


def diagnosis(db_url: str, traffic: Traffic, *releases: Release) -> str:
    """What a failure needs to say why: the runs left open with their attempt
    and outbox items, the results not accepted and what they got back, each
    release's failed attempts and errors, and the server's own report of any
    deadlock (when its log is readable from here, as the embedded server's is)."""
    with psycopg.connect(db_url, autocommit=True, row_factory=dict_row) as conn:
        open_runs = conn.execute(
            "SELECT rr.id, rr.head_sha, rr.status, a.dispatch_state, a.workflow_run_id, "
            "       (SELECT array_agg(o.kind || ':' || o.status || ':' || coalesce(o.outcome, '-') ORDER BY o.id) "
            "          FROM boardready.outbox_items o WHERE o.release_run_id = rr.id) AS outbox "
            "  FROM boardready.release_runs rr LEFT JOIN boardready.release_run_attempts a "
            "    ON a.id = rr.current_attempt_id WHERE rr.status <> 'completed'").fetchall()
        log_dir = conn.execute("SELECT current_setting('data_directory') AS d").fetchone()["d"]
    lines = [f"runs open: {[dict(r) for r in open_runs]}",
             f"results not accepted: {traffic.answers}; traffic failure: {traffic.failure!r}"]
    for release in releases:
        lines.append(f"{release.name}: failed attempts {release.failed_items()}, errors {release.errors()}")
    server_log = Path(log_dir) / "log"
    if server_log.is_file():
        text = server_log.read_text(encoding="utf-8", errors="replace").splitlines()
        reports = [i for i, line in enumerate(text) if "deadlock detected" in line]
        for start in reports[-2:]:
            lines.append("server: " + "\n".join(text[start:start + 12]))
    return "\n".join(lines)


def new_contract_migrations(old_tree: Path) -> list[str]:
    """This tree's contract migrations the previous release did not have (it
    applied its own when it built the database from empty)."""
    known = {path.stem for path in (old_tree / "sql" / "schema").glob("*.sql")}
    return sorted(path.stem for path in (ROOT / "sql" / "schema").glob("*_contract.sql") if path.stem not in known)


@pytest.fixture
def empty_db(pg_server):
    janitor = pg_server.janitor(f"boardready_roll_{uuid.uuid4().hex[:10]}")
    janitor.init()
    yield pg_server.url(janitor.dbname)
    janitor.drop()


def test_rolling_upgrade_under_load(empty_db, tmp_path):
    version, commit = previous_release()
    with checked_out(commit) as old_tree, emulator.start() as host:
        app = host.register_app()
        env = {**os.environ, "SERVICE_DATABASE_URL": empty_db,
               "HOST_WEBHOOK_SECRET": WEBHOOK_SECRET, "HOST_MARKETPLACE_WEBHOOK_SECRET": MARKETPLACE_SECRET,
               "HOST_APP_ID": str(app["id"]), "HOST_APP_PRIVATE_KEY": app["private_key_pem"],
               "HOST_API_URL": host.url, "SERVICE_OIDC_AUDIENCE": OIDC_AUDIENCE,
               "SERVICE_OIDC_ISSUER": host.oidc_issuer, "SERVICE_WEB_CONCURRENCY": "1",
               "SERVICE_WEB_THREADS": "4", "SERVICE_DATABASE_POOL_MAX": "6", "SERVICE_WORKER_POLL_MS": "200"}
        migrate_with(old_tree, empty_db)
        old = Release(f"previous-{version}", old_tree, env, tmp_path).start()
        new = Release("this", ROOT, env, tmp_path)
        proxy = TcpProxy("127.0.0.1", old.port)
        proxy_url = f"http://127.0.0.1:{proxy.port}"
        host.configure_webhooks(f"{proxy_url}/api/host/webhook", WEBHOOK_SECRET,
                                f"{proxy_url}/api/host/marketplace/webhook", MARKETPLACE_SECRET)
        installation = host.create_installation("acme-hw", account_type="Organization", deliver=True)
        host.create_repository(REPOSITORY, installation_id=installation["id"], deliver=True)

        traffic = Traffic(host, proxy_url, empty_db)
        phases: list[tuple[str, int]] = []

        def settle(phase: str) -> None:
            goal = traffic.completed() + PER_PHASE
            wait_for(lambda: traffic.failure is not None or traffic.completed() >= goal, seconds=180,
                     on_timeout=lambda: f"{phase}: {diagnosis(empty_db, traffic, old, new)}")
            assert traffic.failure is None, traffic.failure
            phases.append((phase, traffic.completed()))

        try:
            traffic.start()
            settle(f"{version} alone")
            migrate_with(ROOT, empty_db)          # this release's migrations, under the running old processes
            migrated = time.time()
            settle(f"{version} on the upgraded schema")
            new.start()
            proxy.target = ("127.0.0.1", new.port)  # the load balancer sends new requests to the new API
            settle("both releases")
            old_codes = old.stop()
            old_stopped = time.time()
            contracted = migrate_with(ROOT, empty_db, "--contract")   # nothing of the old release runs now
            settle("this release alone")
        finally:
            traffic.stopping.set()
            traffic.join(timeout=180)
            old.stop()

        try:
            with psycopg.connect(empty_db, autocommit=True, row_factory=dict_row) as conn:
                heads = len(traffic.opened)
                wait_for(lambda: _count(conn, "SELECT count(*) AS n FROM boardready.outbox_items "
                                              "WHERE status IN ('accepted', 'leased')") == 0
                         and _count(conn, "SELECT count(*) AS n FROM boardready.outbox_items "
                                          "WHERE kind = 'pr_comment'") == heads, seconds=120,
                         on_timeout=lambda: diagnosis(empty_db, traffic, old, new))
                deliveries = host.deliveries()
                statuses = [d["status"] for d in deliveries]
                jobs = conn.execute("SELECT status, max(attempts) AS attempts, count(*) AS n, "
                                    "count(reason_code) AS failed, array_agg(DISTINCT reason_code) FILTER "
                                    "(WHERE reason_code IS NOT NULL) AS reasons "
                                    "FROM boardready.lifecycle_jobs GROUP BY 1").fetchall()
                inbox = conn.execute("SELECT state, count(*) AS n FROM boardready.webhook_inbox GROUP BY 1").fetchall()
                outbox = {kind: conn.execute(
                    "SELECT count(*) AS n, count(*) FILTER (WHERE status = 'completed') AS completed, "
                    "coalesce(max(attempts), 0) AS attempts, count(reason_code) AS failed, "
                    "array_agg(DISTINCT reason_code) FILTER (WHERE reason_code IS NOT NULL) AS reasons, "
                    "count(DISTINCT release_run_id) AS runs FROM boardready.outbox_items WHERE kind = %s",
                    (kind,)).fetchone() for kind in OUTBOX_KINDS}
                runs = conn.execute("SELECT status, count(*) AS n, count(DISTINCT head_sha) AS heads "
                                    "FROM boardready.release_runs GROUP BY 1").fetchall()
            check_runs = host.check_runs(REPOSITORY)
            creates = host.requests(operation_id="checks/create")
            dispatches = host.requests(operation_id="actions/create-workflow-dispatch")
            comments = host.comments(REPOSITORY)
            old_errors, new_errors = old.errors(), new.errors()
            old_after_migration = old.items_done(migrated, old_stopped)
            new_done = new.items_done(migrated)
        finally:
            new.stop()
            proxy.close()

        print(f"\nrolling upgrade from {version} ({commit}): phases (completed runs so far) {phases}")
        print(f"deliveries {len(statuses)}: " + ", ".join(f"{s}: {statuses.count(s)}" for s in sorted(set(statuses), key=str)))
        print(f"results {len(traffic.results)} sent in {traffic.result_attempts} requests: "
              + ", ".join(f"{s}: {list(traffic.results.values()).count(s)}" for s in set(traffic.results.values())))
        print(f"inbox {[dict(r) for r in inbox]}; jobs {[dict(r) for r in jobs]}; runs {[dict(r) for r in runs]}")
        print("outbox " + "; ".join(f"{kind} {dict(row)}" for kind, row in outbox.items()))
        print(f"code host: {len(check_runs)} check runs "
              f"({sum(1 for c in check_runs if c['status'] == 'completed')} completed), {len(creates)} created, "
              f"{len(dispatches)} dispatches, {len(comments)} comments; old processes exited {old_codes}; "
              f"log errors old {len(old_errors)}, new {len(new_errors)}; queue items done by {version}'s workers "
              f"on the upgraded schema {old_after_migration}, by this release's {new_done}")

        # Every delivery accepted, no 5xx and no unanswered request at any point.
        assert statuses and all(status in (200, 202) for status in statuses), statuses
        assert len(traffic.results) == heads and all(s == 200 for s in traffic.results.values()), \
            diagnosis(empty_db, traffic, old, new)
        assert traffic.result_attempts == heads
        assert [r["state"] for r in inbox] == ["processed"] and inbox[0]["n"] == len(statuses)
        # No job lost or doubled, each done in its first attempt.
        assert [(r["status"], r["n"], r["attempts"], r["failed"]) for r in jobs] == \
            [("completed", len(statuses), 1, 0)], (jobs, diagnosis(empty_db, traffic, old, new))
        assert [(r["status"], r["n"], r["heads"]) for r in runs] == [("completed", heads, heads)], runs
        # No outbox call lost or doubled, none failed.
        for kind, row in outbox.items():
            assert (row["n"], row["completed"], row["runs"], row["attempts"], row["failed"]) == \
                (heads, heads, heads, 1, 0), (kind, dict(row), diagnosis(empty_db, traffic, old, new))
        # No check run lost or doubled on the code host.
        assert sorted(c["head_sha"] for c in check_runs) == sorted(traffic.opened)
        assert all(c["status"] == "completed" and c["conclusion"] == "success" for c in check_runs)
        assert len(creates) == len(dispatches) == len(comments) == heads
        assert old_codes == [0, 0], f"the old processes did not stop cleanly: {old_codes}"
        # The contract drops what only the old release used: the contract migrations it did not have.
        assert f"contract migrations applied: {', '.join(new_contract_migrations(old_tree)) or 'none'}\n" \
            in contracted, contracted
        # Both releases' workers did work on the upgraded schema (the test upgraded under load).
        assert old_after_migration > 0 and new_done > 0
        assert not old_errors, old_errors
        assert not new_errors, new_errors

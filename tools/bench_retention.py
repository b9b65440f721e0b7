"""`bin/bench-retention`: how long a large retention purge and an account
erasure take, batch by batch.

Seeds, through SQL on a fresh embedded database, release runs 31 to 60 days
old over 100 repositories of two accounts, each run with an attempt, a result
with `--findings` findings and four completed outbox items; the second
account is under a legal hold. Then calls `retention_purge_batch` until the
sweep completes (the held half stays), releases the hold, cancels the second
account with an erasure already due and calls `erasure_step` until it
completes. Prints rows, batches, rows per second and the batch latencies
(p50, p95, max): a batch is one transaction, so its latency is how long it
holds its locks.
"""
from __future__ import annotations

import argparse
import platform
import statistics
import sys
import tempfile
import time

import psycopg

from app import database, embedded_pg, migrations, sql_api

SEED = """
INSERT INTO accounts (id, login, type) VALUES (1, 'kept', 'Organization'), (2, 'held', 'Organization');
INSERT INTO installations (id, account_id) VALUES (1, 1), (2, 2);
INSERT INTO repositories (id, installation_id, full_name) SELECT g, 1 + g % 2, 'bench/' || g FROM generate_series(1, 100) g;
INSERT INTO release_runs (id, repository_id, installation_id, pr_number, head_sha, trigger_action, status, decision,
                          started_at, updated_at)
SELECT g, 1 + g % 100, 1 + (1 + g % 100) % 2, g, md5(g::text), 'opened', 'completed', 'PASS',
       now() - make_interval(days => 31 + g % 30), now() FROM generate_series(1, %(runs)s) g;
INSERT INTO release_run_attempts (id, release_run_id, attempt_number, nonce, dispatch_state, created_at)
SELECT g, g, 1, md5(g::text), 'dispatched', now() FROM generate_series(1, %(runs)s) g;
UPDATE release_runs SET current_attempt_id = id;
INSERT INTO run_results (id, repository_id, release_run_id, attempt_id, source, trigger_kind, readiness, score,
                         decision, conclusion, tool_name, tool_version, findings_count, received_at)
SELECT g, 1 + g % 100, g, g, 'workflow_callback', 'pull_request', 'ready', 90, 'PASS', 'success', 'bench', '1',
       %(findings)s, now() FROM generate_series(1, %(runs)s) g;
INSERT INTO run_findings (run_result_id, ordinal, rule_id, severity, message, fingerprint)
SELECT r, o, 'bench.rule', 'low', 'a finding', md5(r::text || o) FROM generate_series(1, %(runs)s) r,
       generate_series(1, %(findings)s) o;
INSERT INTO outbox_items (release_run_id, attempt_id, installation_id, kind, idempotency_key, status, run_after,
                          created_at, updated_at, run_result_id)
SELECT g, g, 1 + (1 + g % 100) % 2, k, k || g, 'completed', now(), now(), now(), g FROM generate_series(1, %(runs)s) g,
       unnest(ARRAY['check_run_create', 'workflow_dispatch', 'check_run_complete', 'pr_comment']) k;
SELECT setval(pg_get_serial_sequence('boardready.release_runs', 'id'), %(runs)s);
INSERT INTO legal_holds (account_id, reason, placed_by) VALUES (2, 'bench', 'operator:bench');
"""

CANCEL = """
UPDATE legal_holds SET active = false, released_at = now(), released_by = 'operator:bench';
INSERT INTO marketplace_accounts (account_id, state, effective_date, last_delivery_id, created_at, updated_at)
VALUES (2, 'canceled', now() - interval '40 days', 'bench', now(), now());
INSERT INTO erasure_requests (account_id, account_type, status, effective_date, due_at, blocked_by_legal_hold,
                              requested_by_delivery, created_at)
VALUES (2, 'organization', 'pending', now() - interval '40 days', now() - interval '10 days', false, 'bench', now());
"""


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def drive(pool, function, going: str, **params) -> tuple[int, list[float], float, str]:
    """Call `function` (app/sql_api.py's) until its outcome is no longer `going`: (rows, batch ms, seconds,
    last outcome)."""
    rows, latencies, started = 0, [], time.monotonic()
    while True:
        began = time.monotonic()
        with database.connection(pool) as conn:
            row = function(conn, **params)
        latencies.append((time.monotonic() - began) * 1000)
        rows += row["deleted_rows"] if row["outcome"] == going else 0
        if row["outcome"] != going:
            return rows, latencies, time.monotonic() - started, row["outcome"]


def report(name: str, rows: int, latencies: list[float], seconds: float, outcome: str) -> None:
    print(f"{name:<10} {outcome:<10} {rows:>9} rows {len(latencies):>6} batches {seconds:7.1f} s "
          f"{rows / seconds:8.0f} rows/s   batch ms p50 {statistics.median(latencies):6.1f} "
          f"p95 {percentile(latencies, 95):6.1f} max {max(latencies):6.1f}", flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=50_000, help="release runs (half of them held)")
    parser.add_argument("--findings", type=int, default=10, help="findings per run")
    parser.add_argument("--batch-size", type=int, default=1000, help="SERVICE_RETENTION_BATCH_SIZE")
    args = parser.parse_args(argv)

    url = embedded_pg.start(tempfile.mkdtemp(prefix="boardready-bench-retention-"), database="bench",
                            delete_on_exit=True)
    migrations.migrate(url)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("SET search_path = boardready")
        began = time.monotonic()
        with conn.transaction():
            for statement in SEED.split(";\n"):
                if statement.strip():
                    conn.execute(statement.replace("%(runs)s", str(args.runs))
                                 .replace("%(findings)s", str(args.findings)))
        conn.execute("ANALYZE")
        total = conn.execute("SELECT (SELECT count(*) FROM release_runs) + (SELECT count(*) FROM release_run_attempts)"
                             " + (SELECT count(*) FROM run_results) + (SELECT count(*) FROM run_findings)"
                             " + (SELECT count(*) FROM outbox_items)").fetchone()[0]
    print(f"{platform.machine()}, {platform.python_version()}; seeded {total} rows ({args.runs} runs, "
          f"{args.findings} findings each) in {time.monotonic() - began:.1f} s; batch size {args.batch_size}",
          flush=True)

    pool = database.create_pool(url, max_size=2, name="bench", open_wait_seconds=10)
    try:
        report("retention", *drive(pool, sql_api.retention_purge_batch, "purged", retention_days=30,
                                   batch_size=args.batch_size))
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("SET search_path = boardready")
            kept = conn.execute("SELECT count(*) FROM release_runs").fetchone()[0]
            print(f"{'':<10} kept the held account's {kept} runs", flush=True)
            with conn.transaction():
                for statement in CANCEL.split(";\n"):
                    if statement.strip():
                        conn.execute(statement)
        report("erasure", *drive(pool, sql_api.erasure_step, "erasing", batch_size=args.batch_size))
    finally:
        pool.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())

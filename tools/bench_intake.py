"""`bin/bench-intake`: webhook intake under concurrent load, then a database audit.

Signs and posts N unique plus M duplicate deliveries at concurrency C (asyncio
httpx client) and checks afterwards that every unique delivery was stored
once with exactly one job, and no job twice. Without --url it starts its own
service (bin/serve defaults) on a fresh embedded database in a temporary folder.
"""
from __future__ import annotations

import argparse
import asyncio
import hashlib
import hmac
import json
import os
import random
import secrets
import socket
import statistics
import tempfile
import time
import uuid

import psycopg
from psycopg.rows import dict_row

from app import config as config_module
from app import embedded_pg, migrations, queries
from app.serve import Service

REPOSITORIES = 12


def build_deliveries(unique: int, run: str) -> list[tuple[str, str, bytes]]:
    """(delivery id, event, body): pull requests across 12 repositories of one installation."""
    rng = random.Random(run)
    out = []
    for i in range(unique):
        repo = 500_000 + i % REPOSITORIES
        payload = {
            "action": "synchronize" if i >= REPOSITORIES else "opened",
            "number": 1 + i % 50,
            "installation": {"id": 6_000_001},
            "repository": {"id": repo, "name": f"board-{repo}", "full_name": f"bench-org/board-{repo}",
                           "private": True, "owner": {"login": "bench-org", "id": 77}},
            "pull_request": {"number": 1 + i % 50, "state": "open", "draft": False,
                             "title": "Layout update", "body": "Routing and silkscreen fixes. " * 60,
                             "head": {"sha": hashlib.sha1(f"{run}-{i}".encode()).hexdigest(), "ref": "feature"},
                             "base": {"ref": "main"}},
            "sender": {"login": "bench", "id": 1},
        }
        out.append((f"bench-{run}-{i:06d}", "pull_request", json.dumps(payload).encode()))
    rng.shuffle(out)
    return out


async def post_all(base_url: str, secret: str, requests: list[tuple[str, str, bytes]], concurrency: int):
    """Closed loop: `concurrency` clients, each with its own keep-alive connection."""
    import aiohttp

    latencies: list[float] = []
    statuses: dict[int, int] = {}
    queue: asyncio.Queue = asyncio.Queue()
    for item in requests:
        queue.put_nowait(item)
    connector = aiohttp.TCPConnector(limit=concurrency)

    async with aiohttp.ClientSession(base_url=base_url, connector=connector,
                                     timeout=aiohttp.ClientTimeout(total=30)) as session:
        async def one_client():
            while not queue.empty():
                delivery_id, event, body = queue.get_nowait()
                signature = hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
                started = time.perf_counter()
                async with session.post("/api/host/webhook", data=body, headers={
                        "Content-Type": "application/json", "X-Hub-Signature-256": f"sha256={signature}",
                        "X-GitHub-Delivery": delivery_id, "X-GitHub-Event": event}) as response:
                    await response.read()
                latencies.append((time.perf_counter() - started) * 1000)
                statuses[response.status] = statuses.get(response.status, 0) + 1

        started = time.perf_counter()
        await asyncio.gather(*(one_client() for _ in range(concurrency)))
        elapsed = time.perf_counter() - started
    return latencies, statuses, elapsed


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def audit(database_url: str, run: str, unique: int, drain_seconds: float) -> dict:
    key_pattern = f"host:bench-{run}-%"
    with psycopg.connect(database_url, row_factory=dict_row) as conn:
        stored = queries.fetch_one(conn, "bench_intake_stored", key_pattern=key_pattern)
        started = time.monotonic()
        pending = None
        while time.monotonic() - started < drain_seconds:
            pending = queries.fetch_one(conn, "bench_intake_pending_jobs", key_pattern=key_pattern)["pending"]
            if pending == 0:
                break
            time.sleep(0.1)
        drained = time.monotonic() - started
    ok = (stored["inbox_rows"] == stored["inbox_distinct"] == unique
          and stored["jobs"] == stored["jobs_distinct_inbox"] == stored["jobs_distinct_key"] == unique)
    return {**stored, "ok": ok, "pending_after_drain": pending, "drain_seconds": round(drained, 2)}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="bin/bench-intake", description=__doc__)
    parser.add_argument("--unique", type=int, default=1000)
    parser.add_argument("--duplicates", type=int, default=200)
    parser.add_argument("--concurrency", type=int, default=80)
    parser.add_argument("--url", help="a running service; needs HOST_WEBHOOK_SECRET and SERVICE_DATABASE_URL")
    parser.add_argument("--no-workers", action="store_true",
                        help="start the API alone (intake without the workers draining jobs beside it)")
    args = parser.parse_args(argv)
    if args.duplicates > args.unique:
        parser.error("--duplicates must not exceed --unique")

    service = None
    if args.url:
        base_url, secret = args.url.rstrip("/"), os.environ.get("HOST_WEBHOOK_SECRET")
        database_url = os.environ.get("SERVICE_DATABASE_URL")
        if not secret or not database_url:
            parser.error("--url needs HOST_WEBHOOK_SECRET and SERVICE_DATABASE_URL in the environment")
    else:
        secret = secrets.token_urlsafe(24)
        data_dir = tempfile.mkdtemp(prefix="bench-intake-")
        database_url = embedded_pg.start(data_dir)
        migrations.migrate(database_url)
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            bind = f"127.0.0.1:{s.getsockname()[1]}"
        env = {"HOST_WEBHOOK_SECRET": secret, "HOST_MARKETPLACE_WEBHOOK_SECRET": secrets.token_urlsafe(24),
               "SERVICE_BIND": bind}
        config = config_module.load({**os.environ, **env})
        service = Service(config, database_url, with_workers=not args.no_workers, extra_env=env,
                          log_path=os.path.join(data_dir, "service.log")).start()
        base_url = service.base_url
        print(f"service: {base_url} (gunicorn gthread, {config.web_concurrency} workers x {config.web_threads} "
              f"threads, embedded PostgreSQL in {data_dir})")

    try:
        run = uuid.uuid4().hex[:8]
        uniques = build_deliveries(args.unique, run)
        duplicates = random.Random(run).sample(uniques, args.duplicates)
        requests = uniques + duplicates
        random.Random(run + "order").shuffle(requests)
        size = statistics.mean(len(b) for _, _, b in uniques)
        print(f"sending {args.unique} unique + {args.duplicates} duplicate deliveries "
              f"(~{size / 1024:.1f} KiB each) at concurrency {args.concurrency}")
        latencies, statuses, elapsed = asyncio.run(post_all(base_url, secret, requests, args.concurrency))
        result = audit(database_url, run, args.unique, drain_seconds=0 if args.no_workers else 120)
    finally:
        if service:
            service.stop()

    print(f"statuses: {dict(sorted(statuses.items()))}")
    print(f"latency ms: p50 {percentile(latencies, 50):.1f}  p95 {percentile(latencies, 95):.1f}  "
          f"p99 {percentile(latencies, 99):.1f}  max {max(latencies):.1f}")
    print(f"throughput: {len(latencies) / elapsed:.0f} requests/s ({len(latencies)} in {elapsed:.2f} s)")
    drained = ("workers not running" if args.no_workers else
               f"all jobs completed {result['drain_seconds']} s after the last response")
    print(f"audit: inbox rows {result['inbox_rows']}, jobs {result['jobs']}, duplicates stored 0 = "
          f"{result['ok']}; {drained}")
    expected = {status: n for status, n in ((202, args.unique), (200, args.duplicates)) if n}
    if not result["ok"] or statuses != expected or (result["pending_after_drain"] and not args.no_workers):
        raise SystemExit(f"FAILED: expected statuses {expected} and one row and job per unique delivery")


if __name__ == "__main__":
    main()

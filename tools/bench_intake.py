"""`bin/bench-intake`: webhook intake under concurrent load, then a database audit.

With --baseline, the service and the minimal intake (tools/intake_floor.py)
take turns on the same database under the same server settings, and the
ratio of the two says what the service's own work costs.

With --against PATH (a checkout of another release, e.g. `git worktree add
/tmp/v0.6.0 7ad1f14`), each round also runs that tree's own bench-intake
--baseline for one round (its own service, floor and fresh database, served
from PATH with this .venv) right after this tree's, so both ratios come from
the same minutes of the same machine.

With --drain, what a job costs: the API alone stores N deliveries, then the
worker process alone makes and runs their jobs (jobs/s, and CPU per job of
the worker, its database sessions and all of PostgreSQL).

Signs and posts N unique plus M duplicate deliveries at concurrency C (asyncio
httpx client) and checks afterwards that every unique delivery was stored
once with exactly one job, and no job twice. Without --url it starts its own
service (bin/serve defaults) on a fresh embedded database in a temporary folder.
"""
from __future__ import annotations

import argparse
import asyncio
import copy
import hashlib
import hmac
import json
import os
import platform
import random
import re
import secrets
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

import psycopg
from psycopg.rows import dict_row

from app import config as config_module
from app import embedded_pg, migrations
from app.serve import SERVICE_WSGI_APP, Service
from app.web.wsgi import pool_size_per_web_process
from tools import intake_db_cost, intake_floor
from tools import named_queries as queries
from tools.process_cpu import parent_pid, process_cpu_seconds, tree_cpu_seconds

REPOSITORIES = 12


#: Real pull request deliveries (octokit's webhook examples, 23-27 KiB each;
#: tests/fixtures/webhooks/LICENSE-octokit-webhooks-examples). Each benchmark
#: delivery is one of them made unique: its own head commit, one of 12
#: repositories of one installation.
WEBHOOK_FIXTURES = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "webhooks"
PAYLOAD_TEMPLATES = sorted(path for action in ("opened", "synchronize")
                           for path in WEBHOOK_FIXTURES.glob(f"pull_request.{action}.*.json"))


def build_deliveries(unique: int, run: str) -> list[tuple[str, str, bytes]]:
    """(delivery id, event, body): real pull request payloads across 12 repositories of one installation."""
    rng = random.Random(run)
    templates = [json.loads(path.read_bytes()) for path in PAYLOAD_TEMPLATES]
    out = []
    for i in range(unique):
        payload = copy.deepcopy(templates[i % len(templates)])
        repo = 500_000 + i % REPOSITORIES
        number = 1 + i % 50
        payload["action"] = "synchronize" if i >= REPOSITORIES else "opened"
        payload["number"] = payload["pull_request"]["number"] = number
        payload["installation"] = {"id": 6_000_001}
        payload["repository"].update(id=repo, name=f"board-{repo}", full_name=f"bench-org/board-{repo}")
        payload["pull_request"]["head"]["sha"] = hashlib.sha1(f"{run}-{i}".encode()).hexdigest()
        payload["pull_request"]["state"], payload["pull_request"]["draft"] = "open", False
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
    # Each delivery has its job, or awaits it once (the workers make jobs from the inbox).
    ok = (stored["inbox_rows"] == stored["inbox_distinct"] == unique
          and stored["jobs"] == stored["jobs_distinct_inbox"] == stored["jobs_distinct_key"]
          and stored["jobs"] + stored["awaiting_job"] == unique)
    return {**stored, "ok": ok, "pending_after_drain": pending, "drain_seconds": round(drained, 2)}


@dataclass
class Round:
    target: str
    latencies: list[float]
    statuses: dict[int, int]
    elapsed: float
    stored_ok: bool
    drained: str
    cpu_us: dict[str, float] | None = None   # CPU microseconds per request, by process group
    load: float | None = None                # the machine's 1-minute load average before the round

    @property
    def throughput(self) -> float:
        return len(self.latencies) / self.elapsed

    def line(self) -> str:
        cpu = ("" if not self.cpu_us else
               "\n         CPU us/request: " + "  ".join(f"{group} {us:5.0f}" for group, us in self.cpu_us.items()))
        return (f"{self.target:<8} p50 {percentile(self.latencies, 50):6.1f}  p95 {percentile(self.latencies, 95):6.1f}  "
                f"p99 {percentile(self.latencies, 99):6.1f} ms  {self.throughput:5.0f} req/s  "
                f"statuses {dict(sorted(self.statuses.items()))}  stored once: {self.stored_ok}; {self.drained}"
                f"; load before {self.load:.1f}{cpu}")


class CpuMeter:
    """CPU seconds spent by the load generator, the server's process tree and
    PostgreSQL's; with the workers on, also the worker process's part of the
    server's and its database sessions' part of PostgreSQL's (the sessions
    named boardready-worker), which the floor never spends."""

    def __init__(self, server: Service, database_url: str):
        self.database_url = database_url
        with psycopg.connect(database_url) as conn:
            self.postmaster = parent_pid(conn.info.backend_pid)
        self.server_roots = [child.pid for child in server.children]
        self.worker_pids = [child.pid for child in server.children[1:]]   # Service starts the API first

    def read(self) -> dict[str, float]:
        spent = {"client": time.process_time(),
                 "server": sum(tree_cpu_seconds(pid) for pid in self.server_roots)}
        if self.worker_pids:
            spent["of which worker"] = sum(tree_cpu_seconds(pid) for pid in self.worker_pids)
        spent["postgres"] = tree_cpu_seconds(self.postmaster)
        if self.worker_pids:
            spent["of which worker's sessions"] = self._worker_sessions_cpu()
        return spent

    def _worker_sessions_cpu(self) -> float:
        # The worker's pool keeps its sessions for the round, so a session's
        # CPU since it started is what it spent in the round (less before the
        # first reading, which the difference removes).
        with psycopg.connect(self.database_url) as conn:
            pids = [pid for (pid,) in conn.execute(
                "SELECT pid FROM pg_stat_activity WHERE application_name = 'boardready-worker'")]
        total = 0.0
        for pid in pids:
            try:
                total += process_cpu_seconds(pid)
            except FileNotFoundError:
                continue
        return total

    def per_request_us(self, before: dict[str, float], requests: int) -> dict[str, float]:
        after = self.read()
        spent = {group: (after[group] - before[group]) / requests * 1e6 for group in after}
        return {**spent, "total": sum(us for group, us in spent.items() if not group.startswith("of which"))}


def deliveries_for(args, run: str) -> tuple[list, list]:
    uniques = build_deliveries(args.unique, run)
    duplicates = random.Random(run).sample(uniques, args.duplicates)
    requests = uniques + duplicates
    random.Random(run + "order").shuffle(requests)
    return uniques, requests


def run_round(target: str, args, database_url: str, secret: str, data_dir: str, run: str | None = None) -> Round:
    """Start the target on a free port with the service's server settings, send, audit, stop."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        bind = f"127.0.0.1:{s.getsockname()[1]}"
    env = {"HOST_WEBHOOK_SECRET": secret, "HOST_MARKETPLACE_WEBHOOK_SECRET": secrets.token_urlsafe(24),
           "SERVICE_BIND": bind}
    config = config_module.load({**os.environ, **env})
    floor = target == "floor"
    if floor:
        env["BENCH_FLOOR_POOL_SIZE"] = str(pool_size_per_web_process(config))
    server = Service(config, database_url, with_workers=not (floor or args.no_workers), extra_env=env,
                     log_path=os.path.join(data_dir, f"{target}.log"),
                     wsgi_app="tools.intake_floor:application" if floor else SERVICE_WSGI_APP).start()
    run = run or uuid.uuid4().hex[:8]
    _, requests = deliveries_for(args, run)
    load = os.getloadavg()[0]
    try:
        if args.warmup:
            # Not measured: a freshly started server builds its application and
            # fills its connection pool on its first requests, which would
            # otherwise weigh on a round that lasts about a second.
            asyncio.run(post_all(server.base_url, secret, build_deliveries(args.warmup, "warm" + run),
                                 args.concurrency))
        meter = CpuMeter(server, database_url)
        cpu_before = meter.read()
        latencies, statuses, elapsed = asyncio.run(post_all(server.base_url, secret, requests, args.concurrency))
        cpu_us = meter.per_request_us(cpu_before, len(requests))
        if floor:
            stored_ok, drained = intake_floor.count(database_url, f"bench-{run}-") == args.unique, "no jobs"
        else:
            result = audit(database_url, run, args.unique, drain_seconds=0 if args.no_workers else 120)
            stored_ok = result["ok"] and not (result["pending_after_drain"] and not args.no_workers)
            drained = ("workers not running" if args.no_workers else
                       f"jobs completed {result['drain_seconds']} s after the last response")
    finally:
        server.stop()
    expected = {status: n for status, n in ((202, args.unique), (200, args.duplicates)) if n}
    return Round(target, latencies, statuses, elapsed, stored_ok and statuses == expected, drained, cpu_us, load)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="bin/bench-intake", description=__doc__)
    parser.add_argument("--unique", type=int, default=1000)
    parser.add_argument("--duplicates", type=int, default=200)
    parser.add_argument("--concurrency", type=int, default=80)
    parser.add_argument("--baseline", action="store_true",
                        help="alternate the service with the minimal intake (tools/intake_floor.py) on the same "
                             "database and print both and their ratio")
    parser.add_argument("--rounds", type=int, default=3, help="with --baseline: rounds of each, alternating")
    parser.add_argument("--warmup", type=int, default=300,
                        help="unmeasured deliveries sent to each freshly started server first (0: none)")
    parser.add_argument("--url", help="a running service; needs HOST_WEBHOOK_SECRET and SERVICE_DATABASE_URL")
    parser.add_argument("--no-workers", action="store_true",
                        help="start the API alone (intake without the workers draining jobs beside it)")
    parser.add_argument("--against", metavar="PATH",
                        help="with --baseline: a checkout of another release; each round also runs its own "
                             "bench-intake --baseline for one round, and both ratios are printed")
    parser.add_argument("--drain", action="store_true",
                        help="what a job costs: the API alone stores --unique deliveries, then the workers alone "
                             "make and run their jobs; prints jobs/s and the CPU per job of the worker process, "
                             "its database sessions and all of PostgreSQL")
    parser.add_argument("--database-cpu", action="store_true",
                        help="measure only PostgreSQL's CPU per stored delivery, service against floor "
                             "(tools/intake_db_cost.py), on a fresh embedded database")
    args = parser.parse_args(argv)
    if args.duplicates > args.unique:
        parser.error("--duplicates must not exceed --unique")
    if args.url and args.baseline:
        parser.error("--baseline starts both servers itself; it takes no --url")
    if args.against and not args.baseline:
        parser.error("--against compares ratios to the floor: it needs --baseline")
    print(f"machine: {os.cpu_count()} cores, {platform.python_implementation()} {platform.python_version()}; "
          f"{args.unique} unique + {args.duplicates} duplicate deliveries at concurrency {args.concurrency}")
    if args.url:
        return measure_running(args, parser)

    secret = secrets.token_urlsafe(24)
    data_dir = tempfile.mkdtemp(prefix="bench-intake-")
    database_url = embedded_pg.start(data_dir, delete_on_exit=True)
    migrations.migrate(database_url)
    if args.database_cpu:
        _, _, body = build_deliveries(1, "dbcost")[0]
        return intake_db_cost.report(intake_db_cost.measure(database_url, body))
    if args.drain:
        return measure_drain(args, database_url, secret, data_dir)
    config = config_module.load(os.environ)
    print(f"server: {config.web_concurrency} processes x {config.web_threads} threads (bin/serve defaults), "
          f"embedded PostgreSQL in {data_dir}; service workers {'off' if args.no_workers else 'on'}")
    targets = ["service", "floor"] if args.baseline else ["service"]
    if args.baseline:
        intake_floor.create_schema(database_url)
    rounds: list[Round] = []
    against: list[tuple[float, float]] = []   # (ratio, load before) of the other release, per round
    for _ in range(args.rounds if args.baseline else 1):
        for target in targets:
            rounds.append(run_round(target, args, database_url, secret, data_dir))
            print(rounds[-1].line(), flush=True)
        if args.against:
            against.append(run_other_release(args))
            print(f"{'against':<8} {args.against}: throughput {against[-1][0]:.2f}x its floor; "
                  f"load before {against[-1][1]:.1f}", flush=True)
    failed = [r for r in rounds if not r.stored_ok]
    if args.baseline:
        summary = {}
        for target in targets:
            mine = [r for r in rounds if r.target == target]
            summary[target] = (statistics.median(r.throughput for r in mine),
                               statistics.median(percentile(r.latencies, 95) for r in mine))
            cpu = "  ".join(f"{group} {statistics.median(r.cpu_us[group] for r in mine):.0f}"
                            for group in mine[0].cpu_us)
            print(f"median of {len(mine)} {target:<8} {summary[target][0]:5.0f} req/s  p95 {summary[target][1]:.1f} ms"
                  f"  CPU us/request: {cpu}")
        (s_rps, s_p95), (f_rps, f_p95) = summary["service"], summary["floor"]
        # Issue 28's goals: the API alone within a tenth of the floor; with the
        # workers on, every delivery also becomes a job on the same cores.
        goal = 0.90 if args.no_workers else 0.80
        per_round = [s.throughput / f.throughput for s, f in zip(rounds[0::2], rounds[1::2])]
        print(f"service / floor: throughput {s_rps / f_rps:.2f}x (goal >= {goal:.2f}; per round "
              f"{' '.join(f'{r:.2f}' for r in per_round)}), p95 {s_p95 / f_p95:.2f}x (goal <= 1.25); "
              f"load {min(r.load for r in rounds):.1f}-{max(r.load for r in rounds):.1f}")
        if against:
            ratios = [ratio for ratio, _ in against]
            print(f"against {args.against}: throughput {statistics.median(ratios):.2f}x its floor (median of "
                  f"{len(ratios)}; per round {' '.join(f'{r:.2f}' for r in ratios)}); "
                  f"load {min(l for _, l in against):.1f}-{max(l for _, l in against):.1f}")
    if failed:
        raise SystemExit(f"FAILED: {len(failed)} round(s) did not store every delivery exactly once "
                         "or answered other statuses than 202 and 200")


def measure_drain(args, database_url: str, secret: str, data_dir: str) -> None:
    """The worker process alone makes and runs the jobs of deliveries the API
    stored before it started. Measured from its first completed job to its
    last (its start-up left out): jobs per second, and CPU per job of the
    worker process, of its database sessions and of all of PostgreSQL."""
    # No warm-up: its deliveries would be jobs too, run before the measured ones.
    stored_args = argparse.Namespace(**{**vars(args), "duplicates": 0, "no_workers": True, "warmup": 0})
    run = uuid.uuid4().hex[:8]
    stored = run_round("service", stored_args, database_url, secret, data_dir, run=run)
    print(stored.line(), flush=True)
    pattern = f"host:bench-{run}-%"
    load = os.getloadavg()[0]
    worker = subprocess.Popen([sys.executable, "-m", "workers"], stderr=subprocess.DEVNULL,
                              env={**os.environ, "SERVICE_DATABASE_URL": database_url})
    try:
        with psycopg.connect(database_url, autocommit=True, row_factory=dict_row) as conn:
            meter = JobMeter(worker.pid, database_url)

            def pending() -> int:
                return queries.fetch_one(conn, "bench_intake_pending_jobs", key_pattern=pattern)["pending"]
            deadline = time.monotonic() + 600
            while (first := pending()) == args.unique and time.monotonic() < deadline:
                time.sleep(0.02)
            started, at_first = time.monotonic(), meter.read()
            while (left := pending()) and time.monotonic() < deadline:
                time.sleep(0.05)
            elapsed, at_last = time.monotonic() - started, meter.read()
    finally:
        worker.terminate()
        worker.wait()
    jobs = first - left
    if left or not jobs:
        raise SystemExit(f"FAILED: {left} of {args.unique} jobs not completed within 600 s")
    spent = "  ".join(f"{group} {(at_last[group] - at_first[group]) / jobs * 1e6:5.0f}" for group in at_first)
    print(f"drain: {jobs} jobs in {elapsed:.1f} s, {jobs / elapsed:.0f} jobs/s; CPU us/job: {spent}; "
          f"load before {load:.1f}")


class JobMeter(CpuMeter):
    """The worker process, its database sessions, and PostgreSQL."""

    def __init__(self, worker_pid: int, database_url: str):
        self.database_url, self.worker_pids = database_url, [worker_pid]
        with psycopg.connect(database_url) as conn:
            self.postmaster = parent_pid(conn.info.backend_pid)

    def read(self) -> dict[str, float]:
        return {"worker": tree_cpu_seconds(self.worker_pids[0]),
                "worker's sessions": self._worker_sessions_cpu(),
                "postgres": tree_cpu_seconds(self.postmaster)}


def run_other_release(args) -> tuple[float, float]:
    """One round of another release's own bench-intake --baseline, served from
    its tree; returns its service / floor throughput ratio and the load before."""
    tree = os.path.abspath(args.against)
    command = [sys.executable, "-m", "tools.bench_intake", "--baseline", "--rounds", "1",
               "--unique", str(args.unique), "--duplicates", str(args.duplicates),
               "--concurrency", str(args.concurrency), "--warmup", str(args.warmup)]
    if args.no_workers:
        command.append("--no-workers")
    load = os.getloadavg()[0]
    # Its own tree first on the path, and its own working folder: `python -m`
    # puts the working folder before PYTHONPATH, for gunicorn's processes too.
    output = subprocess.run(command, cwd=tree, env={**os.environ, "PYTHONPATH": tree}, check=True,
                            capture_output=True, text=True).stdout
    ratio = re.search(r"service / floor: throughput ([0-9.]+)x", output)
    if ratio is None:
        raise SystemExit(f"--against: no ratio in the output of {tree}'s bench-intake:\n{output}")
    return float(ratio.group(1)), load


def measure_running(args, parser) -> None:
    base_url, secret = args.url.rstrip("/"), os.environ.get("HOST_WEBHOOK_SECRET")
    database_url = os.environ.get("SERVICE_DATABASE_URL")
    if not secret or not database_url:
        parser.error("--url needs HOST_WEBHOOK_SECRET and SERVICE_DATABASE_URL in the environment")
    run = uuid.uuid4().hex[:8]
    _, requests = deliveries_for(args, run)
    latencies, statuses, elapsed = asyncio.run(post_all(base_url, secret, requests, args.concurrency))
    result = audit(database_url, run, args.unique, drain_seconds=0 if args.no_workers else 120)
    expected = {status: n for status, n in ((202, args.unique), (200, args.duplicates)) if n}
    round_ = Round("service", latencies, statuses, elapsed, result["ok"] and statuses == expected,
                   f"jobs completed {result['drain_seconds']} s after the last response")
    print(round_.line())
    if not round_.stored_ok:
        raise SystemExit("FAILED: expected one row and job per unique delivery")


if __name__ == "__main__":
    main()

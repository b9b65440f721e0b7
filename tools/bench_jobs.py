"""`bin/bench-jobs`: job throughput of the service's worker loop beside procrastinate's.

Both process the same number of no-op jobs on the same embedded PostgreSQL,
one after the other, so that only the queue machinery is measured: the claim
with its lease (SKIP LOCKED), the completion that checks the lease, and the
loop around them. Ours runs `workers.queue_worker.QueueWorker` over the two
real queue tables (queue.sql.j2), each with its real static claim, batched (one
claim takes as many items as there are free slots), and its lease-checked
completion: `lifecycle` the lifecycle jobs (`job_claim`, `job_complete`),
`work` the work_items that hold every other kind (`work_claim` of one kind,
`work_complete`, beside the rows of the earlier rounds). procrastinate runs
its own worker (`run_worker_async`, `wait=False`) over a task that does
nothing. Jobs are created before the clock starts, in one statement each
side. Rounds alternate to even out the noise of a shared machine; the median
is printed.
"""
from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import platform
import statistics
import tempfile
import threading
import time
import uuid

import psycopg

from app import channels, database, embedded_pg, migrations, sql_api
from app import config as config_module
from app.queueing import SqlQueue
from workers.lifecycle import LifecycleQueue
from workers.queue_worker import QueueWorker

INSTALLATION_ID = 9_000_001


class NoOpLifecycleQueue(LifecycleQueue):
    """The lifecycle queue's claim, completed without applying any action."""

    name = "bench-lifecycle"

    def handle(self, pool, item: dict) -> str:
        with database.connection(pool) as conn:
            done = sql_api.job_complete(conn, job_id=item["job_id"], lease_token=item["lease_token"], outcome="bench")
        return "completed" if done else "lease_lost"

    def fail(self, conn, item: dict, exc: BaseException, **facts) -> dict:
        raise RuntimeError("a no-op job cannot fail") from exc


class NoOpWorkQueue(SqlQueue):
    """work_items' claim of one kind (board_refresh: no subject to read),
    completed without doing the work."""

    name = "bench-work"
    channel = channels.SUPPLY
    table = "work_items"
    id_field = "item_id"
    handlers: dict = {}

    def claim(self, conn, worker_id: str, limit: int) -> list[dict]:
        return sql_api.work_claim(conn, kinds=["board_refresh"], worker=worker_id, limit=limit,
                                  lease_seconds=self.lease_seconds, max_attempts=self.max_attempts)

    def handle(self, pool, item: dict) -> str:
        with database.connection(pool) as conn:
            done = sql_api.work_complete(conn, item_id=item["item_id"], lease_token=item["lease_token"],
                                         outcome="bench")
        return "completed" if done else "lease_lost"

    def fail(self, conn, item: dict, exc: BaseException, **facts) -> dict:
        raise RuntimeError("a no-op item cannot fail") from exc


def create_our_jobs(url: str, count: int) -> str:
    """`count` accepted lifecycle jobs, each with its inbox row, in one statement."""
    run = uuid.uuid4().hex[:8]
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("""
            WITH inbox AS (
              INSERT INTO boardready.webhook_inbox (provider, delivery_id, idempotency_key, event, action,
                                                    installation_id, actions, payload_sha256, payload_bytes,
                                                    state, received_at, updated_at)
              SELECT 'host', %(run)s || '-' || n, 'host:' || %(run)s || '-' || n, 'installation', 'created',
                     %(installation)s, '{"kind": "installation"}'::jsonb, repeat('0', 64), 100, 'accepted',
                     now(), now()
                FROM generate_series(1, %(count)s) n
              RETURNING id, idempotency_key)
            INSERT INTO boardready.lifecycle_jobs (inbox_id, idempotency_key, installation_id, kind, action,
                                                   status, run_after, created_at, updated_at)
            SELECT id, idempotency_key, %(installation)s, 'installation', 'created', 'accepted', now(), now(), now()
              FROM inbox""", {"run": run, "count": count, "installation": INSTALLATION_ID})
    return run


def create_our_work(url: str, count: int) -> str:
    """`count` accepted work items of one kind, in one statement (subjects numbered past the earlier rounds')."""
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("""
            INSERT INTO boardready.work_items (kind, subject_id, installation_id, status, run_after, created_at,
                                               updated_at)
            SELECT 'board_refresh', coalesce((SELECT max(subject_id) FROM boardready.work_items), 0) + n,
                   %(installation)s, 'accepted', now(), now(), now()
              FROM generate_series(1, %(count)s) n""", {"count": count, "installation": INSTALLATION_ID})
    return "work"


QUEUES = {"lifecycle": (NoOpLifecycleQueue, create_our_jobs, "lifecycle_jobs"),
          "work": (NoOpWorkQueue, create_our_work, "work_items")}


def remaining_our_jobs(url: str, table: str) -> int:
    with psycopg.connect(url) as conn:
        return conn.execute(f"SELECT count(*) FROM boardready.{table} WHERE status <> 'completed'").fetchone()[0]


def _quietly(function) -> None:
    with open(os.environ.get("BENCH_JOBS_LOG", os.devnull), "w") as devnull, contextlib.redirect_stderr(devnull):
        function()


def run_ours(url: str, count: int, concurrency: int, queue: str = "lifecycle") -> float:
    config = config_module.load(os.environ)
    queue_class, create, table = QUEUES[queue]
    create(url, count)
    # The owner's role, as every figure in docs/benchmarks.md was taken.
    pool = database.create_pool(url, max_size=concurrency + 2, name="bench-jobs", open_wait_seconds=10,
                                as_api_role=False)
    worker = QueueWorker(queue_class(config), pool, url, concurrency=concurrency, poll_ms=50)
    try:
        started = time.perf_counter()
        # The loop logs a line per job as in production; the lines are not for this screen.
        thread = threading.Thread(target=_quietly, args=(worker.run,), daemon=True)
        thread.start()
        deadline = started + 600
        while worker.processed < count and time.perf_counter() < deadline and thread.is_alive():
            time.sleep(0.005)
        elapsed = time.perf_counter() - started
        worker.stop.set()
        worker.wake.set()
        thread.join(timeout=30)
    finally:
        pool.close()
    if remaining_our_jobs(url, table):
        raise SystemExit("FAILED: the service's worker left jobs unfinished")
    return count / elapsed


def run_procrastinate(url: str, count: int, concurrency: int) -> float:
    import procrastinate

    app = procrastinate.App(connector=procrastinate.PsycopgConnector(conninfo=url))
    done = {"n": 0}

    @app.task(name="noop")
    async def noop() -> None:
        done["n"] += 1

    async def main() -> float:
        async with app.open_async():
            await noop.batch_defer_async(*({} for _ in range(count)))
            started = time.perf_counter()
            await app.run_worker_async(concurrency=concurrency, wait=False, install_signal_handlers=False,
                                       delete_jobs="never")
            elapsed = time.perf_counter() - started
        if done["n"] != count:
            raise SystemExit(f"FAILED: procrastinate ran {done['n']} of {count} jobs")
        return count / elapsed

    return asyncio.run(main())


def apply_procrastinate_schema(url: str) -> None:
    import procrastinate

    app = procrastinate.App(connector=procrastinate.PsycopgConnector(conninfo=url))
    with app.open():
        app.schema_manager.apply_schema()


def main(argv: list[str] | None = None) -> None:
    import procrastinate

    # procrastinate warns that its App lives in __main__; that is this tool's choice.
    logging.getLogger("procrastinate").setLevel(logging.ERROR)
    parser = argparse.ArgumentParser(prog="bin/bench-jobs", description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=5000)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--queues", default="lifecycle,work",
                        help="the service's queue tables to run, comma-separated: lifecycle, work")
    args = parser.parse_args(argv)
    data_dir = tempfile.mkdtemp(prefix="bench-jobs-")
    url = embedded_pg.start(data_dir, delete_on_exit=True)
    migrations.migrate(url)
    apply_procrastinate_schema(url)
    with psycopg.connect(url) as conn:
        server = conn.execute("SHOW server_version").fetchone()[0]
    print(f"machine: {os.cpu_count()} cores, {platform.python_implementation()} {platform.python_version()}, "
          f"PostgreSQL {server} (embedded), procrastinate {procrastinate.__version__}; "
          f"{args.jobs} no-op jobs, concurrency {args.concurrency}, {args.rounds} rounds")
    queues = [q for q in args.queues.split(",") if q]
    ours: dict[str, list[float]] = {q: [] for q in queues}
    theirs = []
    for round_number in range(1, args.rounds + 1):
        for queue in queues:
            ours[queue].append(run_ours(url, args.jobs, args.concurrency, queue))
        theirs.append(run_procrastinate(url, args.jobs, args.concurrency))
        print(f"round {round_number}: " + "   ".join(f"boardready {q} {ours[q][-1]:7.0f} jobs/s" for q in queues)
              + f"   procrastinate {theirs[-1]:7.0f} jobs/s", flush=True)
    other = statistics.median(theirs)
    for queue in queues:
        mine = statistics.median(ours[queue])
        print(f"median: boardready {queue} {mine:.0f} jobs/s, procrastinate {other:.0f} jobs/s, "
              f"ratio {mine / other:.2f}x (goal >= 2.5x)")


if __name__ == "__main__":
    main()

"""`bin/bench-intake --database-cpu`: PostgreSQL CPU per stored delivery.

The end-to-end intake benchmark shares two cores between the load generator,
the web processes and PostgreSQL, so its figures move with whatever else the
machine does. This one isolates the database's part: one connection makes N
intake calls exactly as the API makes them (the service's
`intake_accept_delivery` with a real normalized pull request, each its own
durable transaction), then N of the floor's single INSERT, and reads the
backend's own CPU time from /proc/<pid>/stat around each batch. CPU time, not
wall time: what other processes do barely moves it. Needs the database on this
machine (the embedded one is).

The API stores the deliveries that arrive together in one call
(app/web/intake_batch.py), so the service is measured twice: one delivery per
call, and batches of BATCH (about what forms under bin/bench-intake's load).
"""
from __future__ import annotations

import hashlib
import json
import statistics
import uuid

import psycopg
from psycopg.types.json import Jsonb

from app.lifecycle_events import normalize
from tools import intake_floor
from tools.process_cpu import process_cpu_seconds

BATCH = 8


def _service_calls(conn, body: bytes, calls: int, run: str, batch: int = 1) -> None:
    payload = json.loads(body)
    event = normalize("pull_request", payload)
    digest = hashlib.sha256(body).hexdigest()
    for first in range(0, calls, batch):
        n = min(batch, calls - first)
        conn.execute("SELECT * FROM boardready.intake_accept_deliveries(%s, %s, %s, %s, %s, %s, %s, %s, %s)",
                     ("host", [f"dbcost-{run}-{i}" for i in range(first, first + n)], ["pull_request"] * n,
                      [event.action] * n, [event.installation_id] * n, [Jsonb(event.actions)] * n, [digest] * n,
                      [len(body)] * n, [3] * n), prepare=True).fetchall()


def _service_batch_calls(conn, body: bytes, calls: int, run: str) -> None:
    _service_calls(conn, body, calls, run, batch=BATCH)


def _floor_calls(conn, body: bytes, calls: int, run: str) -> None:
    digest = hashlib.sha256(body).hexdigest()
    for i in range(calls):
        conn.execute(intake_floor.INSERT, (f"dbcost-{run}-{i}", digest), prepare=True)


def measure(database_url: str, body: bytes, calls: int = 3000, rounds: int = 3) -> dict[str, list[float]]:
    """Microseconds of backend CPU per call, per round, for the service and the floor (alternating)."""
    intake_floor.create_schema(database_url)
    targets = (("service", _service_calls), (f"service, batches of {BATCH}", _service_batch_calls),
               ("floor", _floor_calls))
    per_call: dict[str, list[float]] = {target: [] for target, _ in targets}
    for _ in range(rounds):
        for target, calls_of in targets:
            with psycopg.connect(database_url, autocommit=True) as conn:
                pid = conn.info.backend_pid
                calls_of(conn, body, 50, uuid.uuid4().hex)       # warm: plans cached, relations open
                before = process_cpu_seconds(pid)
                calls_of(conn, body, calls, uuid.uuid4().hex)
                per_call[target].append((process_cpu_seconds(pid) - before) / calls * 1e6)
    return per_call


def report(per_call: dict[str, list[float]]) -> None:
    floor = statistics.median(per_call["floor"])
    for target, values in per_call.items():
        print(f"database CPU per delivery, {target:<22}: median {statistics.median(values):6.1f} us "
              f"(rounds: {', '.join(f'{v:.1f}' for v in values)})")
    for target, values in per_call.items():
        if target != "floor":
            service = statistics.median(values)
            print(f"{target} / floor database CPU: {service / floor:.1f}x ({service - floor:+.0f} us per delivery)")

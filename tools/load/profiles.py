"""The six profiles: what each round runs and which fault it injects where.

Every round runs the four phases (intake, lifecycle, release runs,
dashboard) with the full counts. A fault profile injects one fault per round,
once the phase it targets is half sent, and measures the recovery
convergence: from the fault's end (the database accepting connections again,
the replacement workers started, the code host's faults switched off) until
the service answers again and everything that was in flight then has
converged (load_pending.sql: jobs completed, release runs terminal with
their check runs published and outbox calls made, no expired lease).

- representative: one round, no fault.
- soak-recovery: rounds of load, each followed by an idle pause as long as the
  convergence limit; after each burst, the time until everything drained.
- database-interruption: PostgreSQL restarted mid-phase, cleanly (`pg_ctl -m
  fast`) and as a crash (`-m immediate`) in turn, 1 s down; the phase turns
  over intake, release runs and the dashboard from round to round.
- worker-process-interruption: SIGKILL to the worker process holding the most
  leases during the release runs; a replacement is started at once, as a
  supervisor would, and is back when it runs its loop.
- worker-fleet-interruption: SERVICE_LOAD_WORKER_FLEET_SIZE worker processes;
  the whole fleet SIGKILLed while one of them holds leases, then restarted.

Faults of the release-run phase strike once half its runs are done (its
operations are runs carried through, not deliveries sent); those of the
intake and the dashboard once half their requests are answered.
- github-api-interruption: the emulator's 5xx, timeouts (answers held past
  the service's host timeout) and rate limits (403 with X-RateLimit-Reset,
  secondary limits with Retry-After, 429) switched on for 2 s during the
  release runs and off again, one kind per round in turn.
"""
from __future__ import annotations

import asyncio
import re
import time

from tools.load.traffic import Window

DATABASE_DOWN_S = 1.0
HOST_FAULT_S = 2.0
LEASE_WAIT_S = 20.0
WORKER = re.compile(r":(\d+)$")


class DatabaseRestart:
    def __init__(self, mode: str, phase: str):
        self.mode, self.phase = mode, phase
        self.kind = f"database restart ({'clean' if mode == 'fast' else 'crash'})"

    async def inject(self, run) -> tuple[Window, dict]:
        stopped, back = await run.blocking(run.stack.database.restart, self.mode, DATABASE_DOWN_S)
        return Window(stopped, back), {"down_ms": round((back - stopped) * 1000, 1)}


class WorkerKill:
    """SIGKILL worker processes while they hold leases: one (the busiest), or the whole fleet."""

    phase = "release_runs"

    def __init__(self, whole_fleet: bool):
        self.whole_fleet = whole_fleet
        self.kind = "worker fleet killed" if whole_fleet else "worker process killed"

    async def inject(self, run) -> tuple[Window, dict]:
        fleet = run.stack.fleet
        held: dict[int, int] = {}
        deadline = time.monotonic() + LEASE_WAIT_S
        while time.monotonic() < deadline:
            held = {}
            for row in await run.blocking(run.query, "load_leases_by_worker"):
                match = WORKER.search(row["leased_by"] or "")
                if match and int(match.group(1)) in fleet.pids:
                    held[int(match.group(1))] = held.get(int(match.group(1)), 0) + int(row["leases"])
            if held:
                break
            await asyncio.sleep(0.02)
        victims = fleet.pids if self.whole_fleet else ([max(held, key=held.get)] if held else fleet.pids[:1])
        started = time.time()
        await run.blocking(fleet.kill, victims)
        await run.blocking(fleet.start)
        # Back when every replacement runs its loop (it LISTENs), as the database is back when it accepts connections.
        deadline = time.monotonic() + LEASE_WAIT_S
        while time.monotonic() < deadline:
            [row] = await run.blocking(run.query, "load_workers_listening", since=started)
            if row["listening"] >= len(victims):
                break
            await asyncio.sleep(0.02)
        back = time.time()
        return Window(started, back), {"workers_killed": len(victims),
                                       "leases_held_when_killed": sum(held.get(p, 0) for p in victims),
                                       "workers_back_ms": round((back - started) * 1000, 1)}


class HostFaults:
    """The code host's failures on its REST routes for a while, then off."""

    phase = "release_runs"
    KINDS = ("5xx", "timeouts", "rate limits")

    def __init__(self, kind: str, host_timeout_ms: int):
        self.kind_name, self.host_timeout_ms = kind, host_timeout_ms
        self.kind = f"code host {kind}"

    def switches(self) -> list[dict]:
        if self.kind_name == "5xx":
            return [{"path": "/repos/*/check-runs*", "preset": "server_error"},
                    {"path": "/repos/*", "preset": "bad_gateway"}]
        if self.kind_name == "timeouts":
            # Held past the service's timeout, then handled: the host acted, the service never heard.
            return [{"path": "/repos/*", "delay_ms": self.host_timeout_ms + 500}]
        return [{"path": "/repos/*/check-runs*", "preset": "rate_limit", "reset_in_seconds": 2},
                {"path": "/repos/*/issues/*", "preset": "secondary_rate_limit", "reset_in_seconds": 1},
                {"path": "/repos/*", "preset": "rate_limit_429", "reset_in_seconds": 1}]

    async def inject(self, run) -> tuple[Window, dict]:
        host = run.stack.host
        started = time.time()
        ids = [(await run.blocking(host.add_fault, **switch))["id"] for switch in self.switches()]
        await asyncio.sleep(HOST_FAULT_S)
        hits = sum(f["hits"] for f in await run.blocking(host.faults) if f["id"] in ids)
        for fault_id in ids:
            await run.blocking(host.remove_fault, fault_id)
        return Window(started, time.time()), {"faulted_requests": hits}


def fault_for(profile: str, round_number: int, host_timeout_ms: int):
    """The fault of this round, or None."""
    if profile == "database-interruption":
        phase = ("intake", "release_runs", "dashboard")[(round_number - 1) % 3]
        return DatabaseRestart("fast" if round_number % 2 else "immediate", phase)
    if profile == "worker-process-interruption":
        return WorkerKill(whole_fleet=False)
    if profile == "worker-fleet-interruption":
        return WorkerKill(whole_fleet=True)
    if profile == "github-api-interruption":
        return HostFaults(HostFaults.KINDS[(round_number - 1) % 3], host_timeout_ms)
    return None


def rounds(settings) -> int:
    return 1 if settings.profile == "representative" else settings.recovery_rounds


async def run_profile(run, settings, host_timeout_ms: int) -> list[dict]:
    """Every round's phases; returns the soak rounds' drain records (the faults are on their phases)."""
    soak = []
    for number in range(1, rounds(settings) + 1):
        fault = fault_for(settings.profile, number, host_timeout_ms)

        def at(phase: str, fault=fault):
            return fault if fault is not None and fault.phase == phase else None

        _, delivery_ids = await run.intake(number, at("intake"))
        await run.lifecycle(number, delivery_ids)
        await run.release_runs(number, at("release_runs"))
        await run.dashboard(number, at("dashboard"))
        if settings.profile == "soak-recovery":
            soak.append(await run.idle(number))
    return soak

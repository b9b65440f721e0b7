"""The report: a JSON document of aggregates (written 0600 by tools/report_file.py),
a table on stdout, and the progress display on stderr.

Top-level keys: `profile`, `passed`, `phases` (one entry per phase and round:
operations, throughput, latency percentiles, limits, the phase's own checks,
the fault and its recovery, the audit), `audit` (every audit's verdict and
the checks that ever failed), `recovery`, `settings`, `service`, `machine`,
times, `exit_status` and `error`. No payloads, repository names, URLs or
tokens: counts, times and codes only.
"""
from __future__ import annotations

import os
import platform
import sys
import time

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table


class ProgressDisplay:
    """A bar per phase on stderr; `task()` returns the function that advances it."""

    def __init__(self):
        self.console = Console(stderr=True)
        self.progress = Progress(TextColumn("{task.description:<28}"), BarColumn(), MofNCompleteColumn(),
                                 TimeElapsedColumn(), console=self.console)

    def __enter__(self) -> ProgressDisplay:
        self.progress.start()
        return self

    def __exit__(self, *exc) -> None:
        self.progress.stop()

    def task(self, description: str, total: int):
        task_id = self.progress.add_task(description, total=total)
        return lambda: self.progress.advance(task_id)

    def note(self, text: str) -> None:
        self.progress.console.print(text, highlight=False)


def machine(load_at_start: tuple[float, float, float]) -> dict:
    return {"cores": os.cpu_count(), "python": platform.python_version(), "system": platform.system(),
            "load_average_at_start": [round(v, 2) for v in load_at_start],
            "load_average_at_end": [round(v, 2) for v in os.getloadavg()]}


def build(settings, phases: list, recovery: list[dict], service: dict, postgresql: str, started: float,
          load_at_start, error: str | None, interrupted: bool) -> dict:
    audits = [p.audit for p in phases if p.audit is not None]
    failed_checks = sorted({name for audit in audits for name in audit.failed})
    passed = (error is None and not interrupted and bool(phases) and all(p.passed for p in phases)
              and all(r["passed"] for r in recovery))
    document = {
        "tool": "load",
        "profile": settings.profile,
        "passed": passed,
        "phases": [p.to_dict() for p in phases],
        "audit": {"passed": bool(audits) and not failed_checks, "audits": len(audits),
                  "failed_checks": failed_checks, "last": audits[-1].to_dict() if audits else None},
        "recovery": recovery,
        "settings": settings.public(),
        "service": service,
        "machine": machine(load_at_start),
        "postgresql": postgresql,
        "started_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started)),
        "ended_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "elapsed_s": round(time.time() - started, 1),
        "error": error,
        "interrupted": interrupted,
    }
    document["failures"] = failures(document)
    return document


def failures(document: dict) -> list[str]:
    """Why the run did not pass, in words (empty when it did)."""
    out = []
    if document["error"]:
        out.append(f"the run could not finish: {document['error']}")
    if document["interrupted"]:
        out.append("interrupted")
    for phase in document["phases"]:
        where = f"round {phase['round']} {phase['name']}"
        out += [f"{where}: {l['name']} {l['value']} is not {l['kind']} {l['limit']}"
                for l in phase["limits"] if not l["passed"]]
        out += [f"{where}: {name} does not hold" for name, ok in phase["checks"].items() if not ok]
        if phase["audit"] and not phase["audit"]["passed"]:
            bad = {n: c for n, c in phase["audit"]["checks"].items() if c["violations"]}
            out += [f"{where}: audit {name}: {check}" for name, check in bad.items()]
        if phase["fault"] and not phase["fault"]["passed"]:
            out.append(f"{where}: recovery convergence {phase['fault']['convergence_ms']} ms after "
                       f"{phase['fault']['kind']} (limit {phase['fault']['limit_ms']} ms)")
    for record in document["recovery"]:
        if record["phase"] == "idle" and not record["passed"]:
            out.append(f"round {record['round']}: back to idle after {record['convergence_ms']} ms "
                       f"(limit {record['limit_ms']} ms)")
    return out


def _ms(value) -> str:
    return "-" if value is None else f"{value:.0f}" if value >= 100 else f"{value:.1f}"


def print_table(document: dict, path, file=None) -> None:
    console = Console(file=file or sys.stdout, width=160)
    table = Table(title=f"bin/load {document['profile']}"
                        f"{' --envelope' if document['settings']['envelope'] else ''}: "
                        f"{'PASSED' if document['passed'] else 'FAILED'}")
    for column in ("round", "phase", "ops", "ops/s", "p50 ms", "p95 ms", "p99 ms", "max ms", "p95 limit",
                   "fault", "convergence ms", "audit", "verdict"):
        table.add_column(column, justify="left" if column in ("phase", "fault", "audit", "verdict") else "right")
    for phase in document["phases"]:
        latency = phase["latency_ms"]
        p95_limit = next((l["limit"] for l in phase["limits"] if l["name"].endswith("p95_ms")), None)
        fault = phase["fault"]
        table.add_row(str(phase["round"]), phase["name"], str(phase["operations"]),
                      f"{phase['throughput_per_s']:.1f}", _ms(latency.get("p50")), _ms(latency.get("p95")),
                      _ms(latency.get("p99")), _ms(latency.get("max")), _ms(p95_limit),
                      fault["kind"] if fault else "", _ms(fault["convergence_ms"]) if fault else "",
                      "ok" if phase["audit"] and phase["audit"]["passed"] else "FAILED",
                      "ok" if phase["passed"] else "FAILED")
    console.print(table)
    for record in document["recovery"]:
        console.print(f"round {record['round']} {record['kind']}: drained in {_ms(record['drained_ms'])} ms, "
                      f"ready in {_ms(record['service_back_ms'])} ms (limit {record['limit_ms']} ms)",
                      highlight=False)
    machine_info = document["machine"]
    console.print(f"machine: {machine_info['cores']} cores, load average "
                  f"{machine_info['load_average_at_start'][0]} at the start, "
                  f"{machine_info['load_average_at_end'][0]} at the end; PostgreSQL {document['postgresql']}; "
                  f"{document['elapsed_s']} s", highlight=False)
    for line in document["failures"]:
        console.print(f"FAILED: {line}", highlight=False, markup=False)
    console.print(f"report: {path}", highlight=False, markup=False)

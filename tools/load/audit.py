"""The audit after every phase: `tools/queries/load_audit.sql` over the whole
database, with what the code host shows beside it.

Checks: every accepted delivery stored once with one job; no job or outbox
item lost or doubled; one check run per head; at most one comment per pull
request; one workflow run per attempt; every release run terminal; nothing
stuck in a lease. Before the load has drained (`settled=False`), pending work
is not counted as lost; dead letters, doubles and expired leases always are.
Any violation fails the run.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import orjson
import psycopg
from psycopg.rows import dict_row

from tools import named_queries as queries

#: The tool's own reads wait this long for a database that restarts under them.
DATABASE_PATIENCE_S = 60.0


def patiently(function):
    """Run a read of the tool's own again while the database is restarting (a
    profile restarts it under the phases), for up to DATABASE_PATIENCE_S."""
    def wrapper(*args, **kwargs):
        deadline = time.monotonic() + DATABASE_PATIENCE_S
        while True:
            try:
                return function(*args, **kwargs)
            except psycopg.OperationalError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
    wrapper.__name__ = function.__name__
    wrapper.__doc__ = function.__doc__
    return wrapper


@dataclass
class AuditResult:
    checks: dict[str, dict] = field(default_factory=dict)  # name -> {"violations": n, **detail}
    settled: bool = False

    @property
    def passed(self) -> bool:
        return all(check["violations"] == 0 for check in self.checks.values())

    @property
    def failed(self) -> list[str]:
        return [name for name, check in self.checks.items() if check["violations"]]

    def to_dict(self) -> dict:
        return {"passed": self.passed, "settled": self.settled, "checks": self.checks}


def empty_host_view() -> dict:
    return {"check_runs": [], "comments": [], "workflow_runs": []}


def host_view(host, repository_ids: dict[str, int]) -> dict:
    """What the code host shows, reduced to ids (no names, no bodies): check runs, comments, workflow runs."""
    return {
        "check_runs": [{"id": c["id"], "repository_id": repository_ids.get(c["repository"]), "head_sha": c["head_sha"],
                        "external_id": c["external_id"], "status": c["status"], "conclusion": c["conclusion"]}
                       for c in host.check_runs()],
        "comments": [{"id": c["id"], "repository_id": repository_ids.get(c["repository"]),
                      "issue_number": c["issue_number"]} for c in host.comments()],
        "workflow_runs": [{"id": r["id"], "attempt_ref": (r.get("inputs") or {}).get("attempt_id")}
                          for r in host.runs()],
    }


@patiently
def run_audit(url: str, accepted: list[str], view: dict, settled: bool) -> AuditResult:
    with psycopg.connect(url, row_factory=dict_row, connect_timeout=5) as conn:
        rows = queries.fetch_all(conn, "load_audit", accepted=sorted(set(accepted)), settled=settled,
                                 check_runs=orjson.dumps(view["check_runs"]).decode(),
                                 comments=orjson.dumps(view["comments"]).decode(),
                                 workflow_runs=orjson.dumps(view["workflow_runs"]).decode())
    return AuditResult({row["check_name"]: {"violations": int(row["violations"]), **row["detail"]} for row in rows},
                       settled)


@patiently
def pending(url: str, marks: dict) -> dict:
    """What was in flight up to the marks and is not done yet (tools/queries/load_pending.sql)."""
    with psycopg.connect(url, row_factory=dict_row, connect_timeout=5) as conn:
        return dict(queries.fetch_one(conn, "load_pending", **marks))


@patiently
def marks(url: str) -> dict:
    with psycopg.connect(url, row_factory=dict_row, connect_timeout=5) as conn:
        return dict(queries.fetch_one(conn, "load_marks"))


def wait_until_drained(url: str, marks_now: dict, timeout_s: float, poll_s: float = 0.05) -> float | None:
    """Wall time at which nothing up to the marks was pending, or None after `timeout_s`
    (a database that does not answer yet is waited for)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if not any(pending(url, marks_now).values()):
            return time.time()
        time.sleep(poll_s)
    return None

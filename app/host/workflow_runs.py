"""Reading the readiness workflow's runs as the code host shows them.

readiness-runner.yml sets its `run-name` to carry the attempt id
(`<attempt>-<nonce>`), so a run whose id never reached us (a dispatch answered
204, an answer lost, a worker that died after sending) is found by its name:
by the workflow reconciler, and by the outbox before it dispatches again.
"""
from __future__ import annotations

import datetime as dt


def run_state(run: dict) -> tuple[str, str | None]:
    """(observation, conclusion) of a workflow run as the code host shows it."""
    if run.get("status") == "completed":
        return "completed", run.get("conclusion") or "unknown"
    return "pending", None


def carries_attempt(display_title: str | None, attempt_ref: str) -> bool:
    """The run name carries the attempt id as a word of its own."""
    return attempt_ref in (display_title or "").split()


def find_attempt_run(host, installation_id: int, repository: str, branch: str, since: dt.datetime,
                     attempt_ref: str) -> dict | None:
    """The attempt's dispatch run on `branch` created since `since`, if the code host has one."""
    for run in host.list_workflow_runs(installation_id, repository, branch=branch, since=since):
        if carries_attempt(run.get("display_title"), attempt_ref):
            return run
    return None

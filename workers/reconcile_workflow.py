"""Workflow-state reconciliation (kind workflow_attempt).

An attempt whose workflow was dispatched stays open until its signed result
arrives. Past the observation window this reconciler asks the code host what
became of the run and reports it; SQL decides (reconciliation_workflow_observe):
a pending or successful run is looked at again until the deadline, then the
release fails closed; a run that ended otherwise fails it now. A success from
the code host never makes a release successful.

An attempt without a run id (the dispatch was answered 204, or its answer was
lost) is found by its run name: readiness-runner.yml sets `run-name` to carry
the attempt id (`<attempt>-<nonce>`), so the reconciler lists the workflow's
dispatch runs on the dispatched branch since the attempt began and matches the
run's `display_title`. A match is persisted (and an uncertain dispatch's dead
letter resolved); no match by the deadline fails the run host_workflow_not_found.
"""
from __future__ import annotations

from app import database
from app.host.errors import HostError, HostPermanent
from workers.reconcile import SqlReconciler, _at


def run_state(run: dict) -> tuple[str, str | None]:
    """(observation, conclusion) of a workflow run as the code host shows it."""
    if run.get("status") == "completed":
        return "completed", run.get("conclusion") or "unknown"
    return "pending", None


def carries_attempt(display_title: str | None, attempt_ref: str) -> bool:
    """The run name carries the attempt id as a word of its own."""
    return attempt_ref in (display_title or "").split()


class WorkflowReconciler(SqlReconciler):
    name = "workflow"
    sql_kind = "workflow"
    event_prefix = "worker.reconciliation"

    def __init__(self, settings, host):
        self.settings = settings
        self.host = host  # None when the app is not configured: every lookup is unavailable

    def look(self, item: dict) -> tuple[str, str | None, int | None]:
        """(observation, conclusion, run id found by name) for one item."""
        if self.host is None:
            return "lookup_unavailable", None, None
        try:
            if item["workflow_run_id"] is not None:
                run = self.host.get_workflow_run(item["installation_id"], item["repository"],
                                                 item["workflow_run_id"])
                return (*run_state(run), None)
            for run in self.host.list_workflow_runs(item["installation_id"], item["repository"],
                                                    branch=item["dispatch_ref"], since=item["dispatch_since"]):
                if carries_attempt(run.get("display_title"), item["attempt_ref"]):
                    return (*run_state(run), run["id"])
            return "not_found", None, None
        except HostPermanent as exc:
            return ("not_found" if exc.status == 404 else "lookup_unavailable"), None, None
        except HostError:
            return "lookup_unavailable", None, None

    def observe(self, pool, item, now):
        observation, conclusion, found = self.look(item)
        with database.connection(pool) as conn:
            row = database.call_one(conn, "reconciliation_workflow_observe", p_item_id=item["item_id"],
                                    p_lease_token=item["lease_token"], p_observation=observation,
                                    p_conclusion=conclusion, p_workflow_run_id=found,
                                    p_next_check_seconds=self.settings.next_check_seconds, **_at(now))
        return {**row, "attempt_id": item["attempt_id"], "workflow_run_id": found or item["workflow_run_id"]}

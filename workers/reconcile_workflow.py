"""Workflow-state reconciliation (kind workflow_attempt).

An attempt whose workflow was dispatched stays open until its signed result
arrives. Past the observation window this reconciler asks the code host what
became of the run and reports it; SQL decides (reconciliation_report):
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

from app.host.errors import HostError, HostPermanent
from app.host.workflow_runs import find_attempt_run, run_state
from workers.reconcile import SqlReconciler


class WorkflowReconciler(SqlReconciler):
    name = "workflow"
    item_kind = "workflow_attempt"
    subject_view = "reconciliation_workflow_subjects"
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
            run = find_attempt_run(self.host, item["installation_id"], item["repository"], item["dispatch_ref"],
                                   item["dispatch_since"], item["attempt_ref"])
            if run is not None:
                return (*run_state(run), run["id"])
            return "not_found", None, None
        except HostPermanent as exc:
            return ("not_found" if exc.status == 404 else "lookup_unavailable"), None, None
        except HostError:
            return "lookup_unavailable", None, None

    def observe(self, pool, item, now):
        observation, conclusion, found = self.look(item)
        row = self.report(pool, item, now, observation=observation, conclusion=conclusion, workflow_run_id=found,
                          next_check_seconds=self.settings.next_check_seconds)
        return {**row, "attempt_id": item["attempt_id"], "workflow_run_id": found or item["workflow_run_id"]}

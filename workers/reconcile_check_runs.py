"""Check-run publication reconciliation (kind release_run, reason reporting_stale).

A terminal release run whose check run's final state was never published (the
outbox dead-lettered it, or the completion was lost) is looked up on the code
host past the observation window:

- not our check run (external_id, head SHA or app differ): recorded as
  host_check_run_binding_mismatch, nothing sent;
- already completed with the expected conclusion: marked reconciled;
- queued, in progress or another conclusion: completed with the stored
  expected conclusion and a generic summary, then marked reconciled;
- 404, or the lookup or update failing: looked at again until the deadline,
  then recorded as host_check_run_not_found, _lookup_failed or _update_failed.

The signed result stays authoritative: the release run's status, decision,
conclusion and findings never change here.
"""
from __future__ import annotations

import datetime as dt

from app.host import publication
from app.host.errors import HostError, HostPermanent
from app.host.outbox import external_id
from workers.reconcile import SqlReconciler


class CheckRunReconciler(SqlReconciler):
    name = "check_run"
    item_kind = "release_run"
    subject_view = "reconciliation_check_run_subjects"
    event_prefix = "worker.check_run_reconciliation"

    def __init__(self, settings, host, app_id: str | None, public_url: str):
        self.settings = settings
        self.host = host
        self.app_id = app_id
        self.public_url = public_url

    def bound_to_us(self, check_run: dict, item: dict) -> bool:
        app = check_run.get("app") or {}
        return (check_run.get("external_id") == external_id(item["release_run_id"])
                and check_run.get("head_sha") == item["head_sha"]
                and (self.app_id is None or str(app.get("id")) == str(self.app_id)))

    def look_and_update(self, item: dict) -> str:
        if self.host is None:
            return "lookup_unavailable"
        installation, repository, check_run_id = item["installation_id"], item["repository"], item["check_run_id"]
        try:
            check_run = self.host.get_check_run(installation, repository, check_run_id)
        except HostPermanent as exc:
            return "not_found" if exc.status == 404 else "lookup_unavailable"
        except HostError:
            return "lookup_unavailable"
        if not self.bound_to_us(check_run, item):
            return "binding_mismatch"
        expected = item["expected_conclusion"]
        if check_run.get("status") == "completed" and check_run.get("conclusion") == expected:
            return "converged"
        completed_at = dt.datetime.now(dt.UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
        try:
            self.host.update_check_run(installation, repository, check_run_id, {
                "status": "completed", "conclusion": expected, "completed_at": completed_at,
                "output": publication.restored_output(item["run_status"], item["decision"], item["failure_reason"],
                                                      item["expected_conclusion"],
                                                      f"{self.public_url}/release-runs/{item['release_run_id']}")})
        except HostError:
            return "update_failed"
        return "updated"

    def observe(self, pool, item, now):
        observation = self.look_and_update(item)
        row = self.report(pool, item, now, observation=observation, next_check_seconds=self.settings.next_check_seconds)
        return {**row, "check_run_id": item["check_run_id"]}

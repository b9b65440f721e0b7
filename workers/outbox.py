"""The outbox queue: code host calls for release runs.

Each item kind is one call; its result is reported through one SQL function,
which also queues what comes next (a created check run queues the dispatch).
A repeat never creates a second check run: creation first looks for ours by
its external_id, which binds the release run.
"""
from __future__ import annotations

import datetime as dt

from app import database
from app.host.client import HostClient
from app.host.errors import HostPermanent, HostRetryable, HostUncertain
from workers.queue_worker import failure_codes

QUEUED_SUMMARY = ("boardready is starting the release-readiness workflow for this commit. "
                  "The result appears here when the KiCad checks finish.")


class LeaseLost(Exception):
    reason_code = "lease_lost"


def external_id(release_run_id: int) -> str:
    return f"boardready:release_run:{release_run_id}"


class OutboxQueue:
    name = "outbox"
    channel = "outbox_items"
    id_field = "item_id"

    def __init__(self, config, host: HostClient):
        self.config = config
        self.host = host

    def claim(self, conn, worker_id: str, limit: int) -> list[dict]:
        return database.call(conn, "outbox_claim", p_worker=worker_id, p_limit=limit,
                             p_lease_seconds=self.config.job_lease_seconds,
                             p_max_attempts=self.config.job_max_attempts)

    def _report(self, pool, function: str, item: dict, **params) -> str:
        with pool.connection() as conn:
            outcome = database.call_one(conn, function, p_item_id=item["item_id"],
                                        p_lease_token=item["lease_token"], **params)["outcome"]
        if outcome == "lease_lost":
            raise LeaseLost()
        return outcome

    def handle(self, pool, item: dict) -> str:
        kind = item["kind"]
        if kind in ("check_run_create", "workflow_dispatch") and not item["is_current"]:
            # Superseded or closed meanwhile: nothing to start any more.
            return self._report(pool, "outbox_skip", item, p_outcome="superseded")
        return getattr(self, f"_{kind}")(pool, item)

    def _check_run_create(self, pool, item: dict) -> str:
        ref = external_id(item["release_run_id"])
        existing = self.host.find_check_run(item["installation_id"], item["repository"], item["head_sha"], ref)
        check_run = existing or self.host.create_check_run(item["installation_id"], item["repository"],
                                                           item["head_sha"], ref, QUEUED_SUMMARY)
        return self._report(pool, "outbox_check_run_created", item, p_check_run_id=check_run["id"])

    def _workflow_dispatch(self, pool, item: dict) -> str:
        inputs = {"attempt_id": item["attempt_ref"], "head_sha": item["head_sha"],
                  "pull_request": str(item["pr_number"])}
        try:
            details = self.host.dispatch_workflow(item["installation_id"], item["repository"],
                                                  item["params"].get("dispatchRef") or "main", inputs)
        except HostPermanent as exc:
            if exc.status == 404:
                return self._report(pool, "outbox_dispatch_workflow_missing", item)
            raise
        return self._report(pool, "outbox_dispatch_succeeded", item,
                            p_workflow_run_id=details.get("workflow_run_id"),
                            p_installation_id=item["installation_id"])

    def _check_run_complete(self, pool, item: dict) -> str:
        params = item["params"]
        if item["check_run_id"] is None:
            # The check run was never created (superseded before): nothing to close.
            return self._report(pool, "outbox_skip", item, p_outcome="no_check_run")
        self.host.update_check_run(item["installation_id"], item["repository"], item["check_run_id"], {
            "status": "completed", "conclusion": params["conclusion"],
            "completed_at": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z"),
            "output": {"title": params["title"][:255], "summary": params["summary"][:65535]},
        })
        return self._report(pool, "outbox_check_run_completed", item)

    def fail(self, conn, item: dict, exc: BaseException) -> dict:
        if isinstance(exc, HostUncertain) and item["kind"] == "workflow_dispatch":
            return database.call_one(conn, "outbox_dispatch_uncertain", p_item_id=item["item_id"],
                                     p_lease_token=item["lease_token"], p_error_class=type(exc).__name__)
        reason, error_class = failure_codes(exc)
        return database.call_one(
            conn, "outbox_fail", p_item_id=item["item_id"], p_lease_token=item["lease_token"],
            p_reason_code=reason, p_error_class=error_class, p_max_attempts=self.config.job_max_attempts,
            p_not_before=exc.not_before if isinstance(exc, HostRetryable) else None,
            # A request the host refused will be refused again: dead-letter it now.
            p_final=isinstance(exc, HostPermanent))

    def release(self, conn, item: dict) -> None:
        database.call(conn, "outbox_release", p_item_id=item["item_id"], p_lease_token=item["lease_token"])

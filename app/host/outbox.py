"""The outbox queue: code host calls for release runs, made by the outbox
worker and, for one synchronous result publication, by the API.

Each item kind is one call; its result is reported through one SQL function,
which also queues what comes next (a created check run queues the dispatch).
A repeat never creates a second check run: creation first looks for ours by
its external_id, which binds the release run.
"""
from __future__ import annotations

import datetime as dt

from app import channels, database, queries, sql_api
from app.host import publication
from app.host.client import HostClient
from app.host.decision_output import decision_output
from app.host.errors import HostPermanent, HostRetryable, HostUncertain
from app.host.workflow_runs import find_attempt_run
from app.queueing import LeaseLost, SqlQueue, failure_codes

QUEUED_SUMMARY = ("boardready is starting the release-readiness workflow for this commit. "
                  "The result appears here when the KiCad checks finish.")


def _now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def external_id(release_run_id: int) -> str:
    return f"boardready:release_run:{release_run_id}"


class OutboxQueue(SqlQueue):
    name = "outbox"
    channel = channels.OUTBOX
    table = "work_items"
    #: Its kinds in work_items (queue.sql.j2's work_queue_kinds('outbox')).
    work_queue = "outbox"
    id_field = "item_id"
    claim_function = staticmethod(sql_api.outbox_claim)

    def __init__(self, config, host: HostClient | None):
        super().__init__(config)
        self.host = host
        # One handler per kind of the outbox's work items (tests/workers/test_worker_registry.py
        # checks them against the schema, in both directions).
        self.handlers = {"check_run_create": self._check_run_create, "workflow_dispatch": self._workflow_dispatch,
                         "check_run_complete": self._check_run_complete,
                         "check_run_decision": self._check_run_decision, "pr_comment": self._pr_comment}

    def _report(self, pool, outcome: str, item: dict, **facts) -> str:
        """Report the item's outcome with what it carries (sql/functions/outbox.sql, outbox_report)."""
        with database.connection(pool) as conn:
            outcome = sql_api.outbox_report(conn, item_id=item["item_id"], lease_token=item["lease_token"],
                                            outcome=outcome, **facts)["outcome"]
        if outcome == "lease_lost":
            raise LeaseLost()
        return outcome

    def _hold_before_sending(self, pool, item: dict) -> None:
        """Right before a call that a repeat would double (create a check run
        or a comment, dispatch a workflow), renew the item's lease, and stop
        if it was taken over: a worker starved past its lease (a busy machine,
        a fleet restarting at once) then never sends the call that the new
        holder sends too. The lookups before each call cover a holder that
        died; this covers one that is still running."""
        with database.connection(pool) as conn:
            held = sql_api.work_renew_leases(conn, ids=[item["item_id"]], lease_tokens=[item["lease_token"]],
                                             lease_seconds=self.lease_seconds)
        if not held:
            raise LeaseLost()

    def handle(self, pool, item: dict) -> str:
        kind = item["kind"]
        if kind in ("check_run_create", "workflow_dispatch") and not item["is_current"]:
            # Superseded or closed meanwhile: nothing to start any more.
            return self._report(pool, "superseded", item)
        return super().handle(pool, item)

    def _check_run_create(self, pool, item: dict) -> str:
        ref = external_id(item["release_run_id"])
        check_run = self.host.find_check_run(item["installation_id"], item["repository"], item["head_sha"], ref)
        if check_run is None:
            self._hold_before_sending(pool, item)
            check_run = self.host.create_check_run(item["installation_id"], item["repository"], item["head_sha"], ref,
                                                   QUEUED_SUMMARY)
        return self._report(pool, "check_run_created", item, check_run_id=check_run["id"])

    def _workflow_dispatch(self, pool, item: dict) -> str:
        ref = item["params"].get("dispatchRef") or "main"
        if item["attempts"] > 1:
            # An earlier claim may have sent this dispatch and died before it
            # could report (or its lease ran out mid-call): dispatching again
            # would start a second run for one attempt. The run name carries
            # the attempt id, so look first; a lookup that fails is retried.
            started = find_attempt_run(self.host, item["installation_id"], item["repository"], ref,
                                       item["attempt_started_at"], item["attempt_ref"])
            if started is not None:
                return self._report(pool, "dispatched", item, workflow_run_id=started["id"],
                                    installation_id=item["installation_id"])
        inputs = {"attempt_id": item["attempt_ref"], "head_sha": item["head_sha"],
                  "pull_request": str(item["pr_number"])}
        self._hold_before_sending(pool, item)
        try:
            details = self.host.dispatch_workflow(item["installation_id"], item["repository"], ref, inputs)
        except HostPermanent as exc:
            if exc.status == 404:
                return self._report(pool, "workflow_missing", item)
            raise
        return self._report(pool, "dispatched", item,
                            workflow_run_id=details.get("workflow_run_id"),
                            installation_id=item["installation_id"])

    def review_url(self, item: dict) -> str:
        return f"{self.config.public_url}/release-runs/{item['release_run_id']}"

    def _check_run_complete(self, pool, item: dict) -> str:
        if item["check_run_id"] is None:
            # The check run was never created (superseded before): nothing to close.
            return self._report(pool, "no_check_run", item)
        if item["run_result_id"] is None:
            # Closed without a result (workflow missing, superseded): words only.
            params = item["params"]
            self._update_check_run(item, {"status": "completed", "conclusion": params["conclusion"],
                                          "completed_at": _now(), "output": publication.closed_output(params)})
            return self._report(pool, "check_run_completed", item)
        return self._publish_result(pool, item)

    def _check_run_decision(self, pool, item: dict) -> str:
        """The run's release decision changed after its check run was completed
        (sql/functions/reviews.sql): show the current one."""
        with database.connection(pool) as conn:
            row = sql_api.release_decision_publication(conn, item_id=item["item_id"], lease_token=item["lease_token"])
        if row["outcome"] == "lease_lost":
            raise LeaseLost()
        if row["outcome"] != "publish":
            return self._report(pool, row["outcome"], item)
        with database.connection(pool) as conn:   # what the pull request relaxed (reviews_relaxed.sql)
            relaxed = [{"relaxed": r["relaxed"]} for r in queries.fetch_all(
                conn, "release_run_relaxed", release_run_id=item["release_run_id"])]
        self._update_check_run(item, {"status": "completed", "conclusion": row["conclusion"],
                                      "output": decision_output(row, self.review_url(item), relaxed)})
        return self._report(pool, "decision_published", item, decision=row["decision"])

    def _update_check_run(self, item: dict, body: dict) -> None:
        self.host.update_check_run(item["installation_id"], item["repository"], item["check_run_id"], body)

    def _result(self, pool, item: dict) -> dict:
        with database.connection(pool) as conn:
            return sql_api.run_result_publication(conn, run_result_id=item["run_result_id"])

    def _publish_result(self, pool, item: dict) -> str:
        """The conclusion with the first 50 annotations, then the rest 50 at a
        time; progress is recorded after each request, so a retry resumes
        where the last one stopped instead of sending annotations twice."""
        result = self._result(pool, item)
        output = publication.check_run_output(result, self.review_url(item))
        chunks = publication.batches(publication.annotations(result["findings"]))
        for index in range(self._batches_already_sent(item, chunks), len(chunks)):
            body = {"output": {**output, "annotations": chunks[index]}}
            if index == 0:
                body.update(status="completed", conclusion=result["conclusion"], completed_at=_now())
            self._update_check_run(item, body)
            self._report(pool, "progress_recorded", item, progress=index + 1,
                         published_conclusion=result["conclusion"] if index == 0 else None)
        return self._report(pool, "check_run_completed", item)

    def _batches_already_sent(self, item: dict, chunks: list[list]) -> int:
        """On a retry, the host's own count of annotations says how many batches
        landed: a worker may have died, or a request timed out, after the host
        applied an update but before its progress was recorded."""
        if item["attempts"] <= 1 and item["progress"] == 0:
            return 0
        check_run = self.host.get_check_run(item["installation_id"], item["repository"], item["check_run_id"])
        if check_run.get("status") != "completed":
            return 0  # not even the first update landed
        landed = (check_run.get("output") or {}).get("annotations_count") or 0
        sent, total = 0, 0
        for chunk in chunks:
            total += len(chunk)
            if total > landed:
                break
            sent += 1
        return max(item["progress"], sent, 1)

    def _pr_comment(self, pool, item: dict) -> str:
        """One comment per pull request, updated by later results: the stored id,
        else ours found by its marker (a crash after creating it), else a new one."""
        body = publication.comment_body(self._result(pool, item), self.review_url(item))
        installation, repository = item["installation_id"], item["repository"]
        comment_id = item["comment_id"]
        if comment_id is None:
            comment_id = next((c["id"] for c in self.host.list_comments(installation, repository, item["pr_number"])
                               if publication.COMMENT_MARKER in (c.get("body") or "") and self._ours(c)), None)
        if comment_id is not None:
            try:
                self.host.update_comment(installation, repository, comment_id, body)
            except HostPermanent as exc:
                if exc.status != 404:
                    raise
                comment_id = None  # deleted by someone: post a new one
        if comment_id is None:
            self._hold_before_sending(pool, item)
            comment_id = self.host.create_comment(installation, repository, item["pr_number"], body)["id"]
        return self._report(pool, "comment_posted", item, comment_id=comment_id)

    def _ours(self, comment: dict) -> bool:
        """A comment this app wrote: anyone can put the marker in a comment of theirs, and
        updating it would publish the result under their name (and leave theirs in place)."""
        app = comment.get("performed_via_github_app") or {}
        return (comment.get("user") or {}).get("type") == "Bot" and \
            (app.get("id") is None or str(app["id"]) == str(self.config.host_app_id))

    def fail(self, conn, item: dict, exc: BaseException) -> dict:
        reason, error_class = failure_codes(exc)
        if isinstance(exc, HostUncertain) and item["kind"] == "workflow_dispatch":
            reason = "dispatch_uncertain"  # may have started a run: dead-lettered at once, never replayed
        return sql_api.outbox_fail(
            conn, item_id=item["item_id"], lease_token=item["lease_token"], reason_code=reason,
            error_class=error_class, max_attempts=self.config.job_max_attempts,
            not_before=exc.not_before if isinstance(exc, HostRetryable) else None,
            # A request the host refused will be refused again: dead-letter it now.
            final=isinstance(exc, HostPermanent))


class SynchronousPublisher:
    """POST /api/v1/runs/result completes the check run before answering: it
    claims the completion the result queued and runs the outbox handler on it
    in the request. If the host fails, the item is failed as the worker would
    fail it, and the worker publishes it later."""

    def __init__(self, queue: OutboxQueue, pool, worker_id: str):
        self.queue, self.pool, self.worker_id = queue, pool, worker_id

    def publish_now(self, release_run_id: int) -> bool:
        with database.connection(self.pool) as conn:
            pending = sql_api.outbox_pending_item(conn, release_run_id=release_run_id, kind="check_run_complete")
            if not pending:
                return False
            claimed = sql_api.outbox_claim(conn, worker=self.worker_id, limit=1,
                                           lease_seconds=self.queue.config.job_lease_seconds,
                                           max_attempts=self.queue.config.job_max_attempts,
                                           item_id=pending[0]["item_id"])
        if not claimed:
            return False  # a worker has it already
        item = claimed[0]
        try:
            self.queue.handle(self.pool, item)
            return True
        except Exception as exc:
            with database.connection(self.pool) as conn:
                self.queue.fail(conn, item, exc)
            return False

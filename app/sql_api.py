"""The SQL API's Python client: one function per public SQL function.

The public functions are the `boardready` schema's (the helpers they call
live in `boardready_private`, which the API role cannot reach). Each Python
function takes the connection and keyword arguments named as the SQL
function's without their `p_` prefix; an argument whose SQL declares a
DEFAULT may be left out (its default is then the SQL function's own).
None passes SQL NULL, which every argument accepts (the function decides what
it means). A function answers one row (a `RETURNS TABLE ... ROWS 1`, which
every outcome function is), a list of rows, or its value.

Everything below the "Generated" line is written from pg_proc by
tools/sql_api.py, and tests/sql/test_sql_api.py checks it against the
database in both directions (docs/sql-api.md).
What is above it is written by hand: the outcome vocabularies (`<Name>Outcome`
types the outcome column of <name>'s rows; the test checks every word
appears in its function) and the functions only the previous release calls.

On the API's request paths, app/web/db.py runs these on a pool connection:
`db.call(pool, config, sql_api.session_delete, idempotent=True, token_sha256=...)`.
"""
from __future__ import annotations

from datetime import datetime
from typing import Any, Literal, TypedDict
from uuid import UUID

from psycopg import Connection
from psycopg.types.json import Jsonb

from app.database import call, call_one


class _Default:
    __slots__ = ()

    def __repr__(self) -> str:
        return "DEFAULT"


#: An argument left out: the SQL function's DEFAULT applies.
DEFAULT: Any = _Default()


def given(**params: Any) -> dict[str, Any]:
    """The optional arguments the caller passed."""
    return {name: value for name, value in params.items() if value is not DEFAULT}


# -- Outcome vocabularies ----------------------------------------------------------------------------------------------

ComponentProviderAcquireOutcome = Literal["allowed", "trial", "breaker_open", "trial_in_flight", "rate_limited"]
ArtifactStoreOutcome = Literal["stored", "unchanged", "attempt_not_found", "repository_mismatch", "run_id_mismatch",
                               "result_not_found", "report_not_announced", "report_mismatch"]
DeadLetterReplayOutcome = Literal["replayed", "already_applied", "idempotency_key_reused", "not_found",
                                  "not_replayable"]
ErasureStepOutcome = Literal["idle", "busy", "skipped", "withdrawn", "blocked", "erasing", "completed"]
WorkFailOutcome = Literal["retry_scheduled", "dead_letter", "lease_lost"]
JobFailOutcome = WorkFailOutcome
WorkReleaseOutcome = Literal["released", "lease_lost"]
JobReleaseOutcome = WorkReleaseOutcome
ScheduleReleaseOutcome = WorkReleaseOutcome
WorkDeferOutcome = Literal["deferred", "lease_lost"]
SupplyWorkCompleteOutcome = Literal["completed", "unavailable", "refreshed", "not_refreshed", "not_pending",
                                    "lease_lost"]
IntakeAcceptDeliveriesOutcome = Literal["accepted", "duplicate"]
IntakeAcceptDeliveryOutcome = IntakeAcceptDeliveriesOutcome
LegalHoldPlaceOutcome = Literal["placed", "already_applied", "idempotency_key_reused", "account_not_found"]
LegalHoldReleaseOutcome = Literal["released", "already_released", "already_applied", "idempotency_key_reused",
                                  "not_found"]
MarketplaceApplyEventOutcome = Literal["applied", "stale", "cancellation_kept", "recorded"]
ReleaseDecisionPublicationOutcome = Literal["publish", "skip", "unchanged", "lease_lost"]
ReleaseResultAcceptOutcome = Literal["accepted", "duplicate", "conflict", "attempt_not_found", "attempt_not_current",
                                     "repository_mismatch", "run_id_mismatch", "head_sha_mismatch",
                                     "oidc_result_required"]
RepositorySettingsGetOutcome = Literal["found", "repository_not_found"]
RepositorySettingsUpdateOutcome = Literal["updated", "unchanged", "repository_not_found"]
RetentionPurgeBatchOutcome = Literal["purged", "completed", "idle", "busy"]
ReviewRecordApprovalV2Outcome = Literal["recorded", "already_applied", "not_found", "self_approval_not_allowed",
                                        "rate_limited"]
ReviewRecordApprovalCommentV2Outcome = Literal[ReviewRecordApprovalV2Outcome, "invalid_comment"]
RunIngestOutcome = Literal["accepted", "repository_unknown"]
SessionAuthenticateV2Outcome = Literal["valid", "unknown", "expired", "limited"]
SessionCreateOutcome = Literal["created"]
SessionCreateV2Outcome = SessionCreateOutcome
SessionDeleteOutcome = Literal["deleted", "not_found"]
SessionPermissionReplaceOutcome = Literal["updated", "ended", "not_found"]
SignInBeginOutcome = Literal["started"]
SignInFinishOutcome = Literal["ok", "unknown", "expired", "state_mismatch"]
TokenCreateOutcome = Literal["created", "repository_not_found", "repository_removed", "account_canceled"]
TokenCreateV2Outcome = TokenCreateOutcome
TokenRevokeOutcome = Literal["revoked", "already_revoked", "not_found"]
TokenRevokeV2Outcome = TokenRevokeOutcome
TokenVerifyV2Outcome = Literal["valid", "unknown", "revoked", "expired", "repository_removed", "account_canceled"]
WatchedBoardGetOutcome = Literal["found", "not_watched"]
WatchedBoardWatchOutcome = Literal["watched", "unchanged", "repository_not_found", "account_canceled",
                                   "plan_limit_watched_boards"]
WatchedBoardUnwatchOutcome = Literal["unwatched", "not_watched"]
WaiverCreateV2Outcome = Literal["created", "not_found", "waiver_exists", "invalid_expires_at", "rate_limited"]
WaiverCreateV3Outcome = Literal["created", "not_found", "waiver_exists", "invalid_expires_at", "rate_limited",
                                "finding_not_waivable"]
WaiverDeleteOutcome = Literal["deleted", "already_deleted", "not_found"]
InstallationSuspensionSetOutcome = Literal["changed", "unchanged"]


# ---- Generated by tools/sql_api.py from pg_proc below this line: change the SQL, then run it. ----


# -- artifacts.sql ---------------------------------------------------------------------------------------------------


class ArtifactStoreRow(TypedDict):
    outcome: ArtifactStoreOutcome
    artifact_id: int
    release_run_id: int


def artifact_store(conn: Connection, *, attempt_ref: str, repository_id: int, workflow_run_id: int, sha256: str,
                   content: bytes, size_bytes: int, now: datetime = DEFAULT) -> ArtifactStoreRow:
    """The readiness workflow's HTML report, uploaded after its signed result was
    accepted, with the same OIDC identity: bound to the attempt (its id and
    nonce), the repository and the dispatched workflow run, exactly as the
    result was, and attached to the attempt's standing result. One report per
    result: the first stored stays. The report must be the one the signed
    result announced in its `reportArtifact` (SHA-256 and size, which the
    result's digest covers): anything else is refused and nothing is stored.
    Outcomes: stored, unchanged (a report is already attached),
    attempt_not_found, repository_mismatch, run_id_mismatch, result_not_found
    (no accepted result for the attempt yet), report_not_announced (the result
    names no report), report_mismatch (not the announced hash and size).
    """
    return call_one(conn, "artifact_store", p_attempt_ref=attempt_ref, p_repository_id=repository_id,
                    p_workflow_run_id=workflow_run_id, p_sha256=sha256, p_content=content, p_size_bytes=size_bytes,
                    **given(p_now=now))


# -- auth_throttle.sql -----------------------------------------------------------------------------------------------


class AuthThrottleCheckRow(TypedDict):
    limited: bool
    failures: int
    retry_after_seconds: int


def auth_throttle_check(conn: Connection, *, limiter: str, client_key: str, limit: int,
                        now: datetime = DEFAULT) -> AuthThrottleCheckRow:
    """Is the client over the limit? retry_after_seconds counts to the end of the window."""
    return call_one(conn, "auth_throttle_check", p_limiter=limiter, p_client_key=client_key, p_limit=limit,
                    **given(p_now=now))


class AuthThrottleRecordFailureRow(TypedDict):
    failures: int


def auth_throttle_record_failure(conn: Connection, *, limiter: str, client_key: str,
                                 now: datetime = DEFAULT) -> AuthThrottleRecordFailureRow:
    """Count one failure; returns the client's failures in the current window."""
    return call_one(conn, "auth_throttle_record_failure", p_limiter=limiter, p_client_key=client_key,
                    **given(p_now=now))


class RateTakeRow(TypedDict):
    allowed: bool
    hits: int
    retry_after_seconds: int


def rate_take(conn: Connection, *, limiter: str, subject: str, limit: int, now: datetime = DEFAULT) -> RateTakeRow:
    """Rate limits that protect people rather than lock them out (issue 25):
    sign-in starts and callbacks per client address, decisions per person and
    repository. Each call takes one hit in the subject's current one-minute
    window, unless the window already holds p_limit (then allowed is false and
    nothing is counted).
    """
    return call_one(conn, "rate_take", p_limiter=limiter, p_subject=subject, p_limit=limit, **given(p_now=now))


# -- erasure.sql -----------------------------------------------------------------------------------------------------


class ErasureStepRow(TypedDict):
    outcome: ErasureStepOutcome
    erasure_request_id: int
    account_id: int
    hold_id: int
    deleted: Any
    deleted_rows: int
    audit_event_id: UUID


def erasure_step(conn: Connection, *, batch_size: int, now: datetime = DEFAULT) -> ErasureStepRow:
    """One step of the erasure sweep. Outcomes:
      idle       nothing due
      busy       due requests exist, each being erased by another worker right now
      skipped    the request changed before its lock was taken (withdrawn); call again
      withdrawn  the account is no longer canceled (a newer purchase): stopped
      blocked    an active legal hold: recorded, nothing deleted
      erasing    rows deleted (counts in `deleted`); call again
      completed  nothing was left: the request is completed and audited
    """
    return call_one(conn, "erasure_step", p_batch_size=batch_size, **given(p_now=now))


# -- health.sql ------------------------------------------------------------------------------------------------------


class HealthProbeRow(TypedDict):
    ok: bool


def health_probe(conn: Connection) -> HealthProbeRow:
    """Readiness probe: proves the schema is migrated and the queue table is
    readable (a lock held on it shows as database-timeout, not as healthy).
    """
    return call_one(conn, "health_probe")


# -- intake.sql ------------------------------------------------------------------------------------------------------


class IntakeAcceptDeliveriesRow(TypedDict):
    delivery_id: str
    outcome: IntakeAcceptDeliveriesOutcome
    inbox_id: int
    awaits_job: bool


def intake_accept_deliveries(conn: Connection, *, provider: str, delivery_ids: list[str], events: list[str],
                             actions: list[str], installation_ids: list[int], normalized: list[Jsonb],
                             payload_sha256s: list[str], payload_bytes: list[int], acceptance_ms: list[int],
                             now: datetime = DEFAULT) -> list[IntakeAcceptDeliveriesRow]:
    """A batch of deliveries in one transaction: the API stores the deliveries
    that arrive together with one call and one commit (app/web/intake_batch.py),
    and answers each only after that commit. Row n of the result is input n:
    `accepted` for a new delivery, `duplicate` for a delivery id stored before
    or earlier in the same batch.
    """
    return call(conn, "intake_accept_deliveries", p_provider=provider, p_delivery_ids=delivery_ids, p_events=events,
                p_actions=actions, p_installation_ids=installation_ids, p_normalized=normalized,
                p_payload_sha256s=payload_sha256s, p_payload_bytes=payload_bytes, p_acceptance_ms=acceptance_ms,
                **given(p_now=now))


class IntakeAcceptDeliveryRow(TypedDict):
    outcome: IntakeAcceptDeliveryOutcome
    inbox_id: int
    awaits_job: bool


def intake_accept_delivery(conn: Connection, *, provider: str, delivery_id: str, event: str, action: str,
                           installation_id: int, actions: Jsonb, payload_sha256: str, payload_bytes: int,
                           acceptance_ms: int = DEFAULT, now: datetime = DEFAULT) -> IntakeAcceptDeliveryRow:
    """One delivery: a batch of one (operator tools and tests store deliveries
    one at a time).
    """
    return call_one(conn, "intake_accept_delivery", p_provider=provider, p_delivery_id=delivery_id, p_event=event,
                    p_action=action, p_installation_id=installation_id, p_actions=actions,
                    p_payload_sha256=payload_sha256, p_payload_bytes=payload_bytes,
                    **given(p_acceptance_ms=acceptance_ms, p_now=now))


# -- jobs.sql --------------------------------------------------------------------------------------------------------


class JobClaimRow(TypedDict):
    job_id: int
    lease_token: UUID
    kind: str
    action: str
    installation_id: int
    actions: Any
    attempts: int


def job_claim(conn: Connection, *, worker: str, limit: int, lease_seconds: int, max_attempts: int,
              now: datetime = DEFAULT) -> list[JobClaimRow]:
    """Claim due jobs, first making the jobs of up to 500 deliveries that await
    one (more when the claim may take more): a burst becomes jobs at once, so
    a backlog waits as jobs, counted and aged as it always was. Its commit
    does not wait for the WAL flush, for the reasons lifecycle_job_run gives
    (lifecycle.sql): lost in a crash, its deliveries await their jobs again.
    """
    return call(conn, "job_claim", p_worker=worker, p_limit=limit, p_lease_seconds=lease_seconds,
                p_max_attempts=max_attempts, **given(p_now=now))


# -- legal_holds.sql -------------------------------------------------------------------------------------------------


class LegalHoldPlaceRow(TypedDict):
    outcome: LegalHoldPlaceOutcome
    hold_id: int
    audit_event_id: UUID
    placed_at: datetime


def legal_hold_place(conn: Connection, *, account_id: int, reason: str, reference: str, idempotency_key: str,
                     actor: str, now: datetime = DEFAULT) -> LegalHoldPlaceRow:
    """POST /api/v1/operator/accounts/{accountId}/legal-holds. Outcomes: placed,
    already_applied (same key, same request: the same hold and audit event),
    idempotency_key_reused, account_not_found.
    """
    return call_one(conn, "legal_hold_place", p_account_id=account_id, p_reason=reason, p_reference=reference,
                    p_idempotency_key=idempotency_key, p_actor=actor, **given(p_now=now))


class LegalHoldReleaseRow(TypedDict):
    outcome: LegalHoldReleaseOutcome
    hold_id: int
    audit_event_id: UUID
    released_at: datetime
    erasure_request_id: int
    erasure_resumed: bool


def legal_hold_release(conn: Connection, *, account_id: int, hold_id: int, idempotency_key: str, actor: str,
                       now: datetime = DEFAULT) -> LegalHoldReleaseRow:
    """DELETE /api/v1/operator/accounts/{accountId}/legal-holds/{holdId}.
    Outcomes: released, already_applied, idempotency_key_reused, not_found (no
    such hold on this account), already_released (nothing changes, nothing is
    recorded). When the last active hold goes, an erasure request it blocked is
    due again (pending, or erasing if it had begun) and the sweep is woken.
    """
    return call_one(conn, "legal_hold_release", p_account_id=account_id, p_hold_id=hold_id,
                    p_idempotency_key=idempotency_key, p_actor=actor, **given(p_now=now))


# -- lifecycle.sql ---------------------------------------------------------------------------------------------------


class LifecycleJobRunRow(TypedDict):
    outcome: str
    outbox_waiting: bool


def lifecycle_job_run(conn: Connection, *, job_id: int, lease_token: UUID | str,
                      now: datetime = DEFAULT) -> LifecycleJobRunRow:
    """The handler as this release's lifecycle worker calls it: outbox work the
    job queues sends no NOTIFY (outbox_enqueue, release_runs.sql); instead
    outbox_waiting tells the caller to wake the outbox workers after its
    commit (app/wakeup.py). A NOTIFY makes its commit take a cluster-wide lock
    held through the commit record's flush, so the jobs' commits queued behind
    each other, and every job woke every listening session.

    Its commit does not wait for the WAL flush (synchronous_commit off, this
    transaction only): a crash may lose the last few hundred milliseconds of
    jobs, whole transactions only, which leave nothing behind: their jobs are
    claimed again once their leases run out. Nothing outside the database acts on
    a job's effect before a later durable commit: the outbox claims its work,
    and a request changes what it read, in transactions of their own, whose
    flush covers every commit before them in the WAL, this one included. The
    delivery itself was stored durably before the intake answered.
    """
    return call_one(conn, "lifecycle_job_run", p_job_id=job_id, p_lease_token=lease_token, **given(p_now=now))


# -- marketplace.sql -------------------------------------------------------------------------------------------------


class MarketplaceApplyEventRow(TypedDict):
    outcome: MarketplaceApplyEventOutcome
    account_state: str
    tokens_revoked: int
    erasure_request_id: int


def marketplace_apply_event(conn: Connection, *, delivery_id: str, action: str, account_id: int, account_login: str,
                            account_type: str, effective_date: datetime, payload_sha256: str, payload_bytes: int,
                            now: datetime = DEFAULT) -> MarketplaceApplyEventRow:
    return call_one(conn, "marketplace_apply_event", p_delivery_id=delivery_id, p_action=action,
                    p_account_id=account_id, p_account_login=account_login, p_account_type=account_type,
                    p_effective_date=effective_date, p_payload_sha256=payload_sha256, p_payload_bytes=payload_bytes,
                    **given(p_now=now))


# -- metrics.sql -----------------------------------------------------------------------------------------------------


class MetricsQueuesRow(TypedDict):
    queue: str
    kind: str
    depth: int
    oldest_age_seconds: float


def metrics_queues(conn: Connection, *, now: datetime = DEFAULT) -> list[MetricsQueuesRow]:
    """GET /metrics: each queue's open items by kind, and the age of the oldest
    (from when it was created, so a job that keeps failing and backing off
    still ages). Open: accepted or leased. Only the partial indexes of open
    items are read (lifecycle_jobs_due/_leased, outbox_items_due/_leased,
    reconciliation_items' open index), so the cost follows the backlog, not
    the tables. Aggregates only: no tenant data.
    """
    return call(conn, "metrics_queues", **given(p_now=now))


# -- outbox.sql ------------------------------------------------------------------------------------------------------


class OutboxClaimRow(TypedDict):
    item_id: int
    lease_token: UUID
    attempts: int
    kind: str
    params: Any
    installation_id: int
    release_run_id: int
    attempt_id: int
    attempt_ref: str
    repository: str
    pr_number: int
    head_sha: str
    check_run_id: int
    run_status: str
    is_current: bool
    run_result_id: int
    progress: int
    comment_id: int
    attempt_started_at: datetime


def outbox_claim(conn: Connection, *, worker: str, limit: int, lease_seconds: int, max_attempts: int,
                 now: datetime = DEFAULT, item_id: int = DEFAULT) -> list[OutboxClaimRow]:
    """Claimed items with what their call needs. p_item_id claims one given item
    (the synchronous result endpoint publishes its own check run).
    attempt_started_at bounds the search for a run a dispatch that died may
    have started (app/host/outbox.py).
    """
    return call(conn, "outbox_claim", p_worker=worker, p_limit=limit, p_lease_seconds=lease_seconds,
                p_max_attempts=max_attempts, **given(p_now=now, p_item_id=item_id))


class OutboxFailRow(TypedDict):
    outcome: str
    run_after: datetime


def outbox_fail(conn: Connection, *, item_id: int, lease_token: UUID | str, reason_code: str, error_class: str,
                max_attempts: int, not_before: datetime = DEFAULT, final: bool = DEFAULT,
                now: datetime = DEFAULT) -> OutboxFailRow:
    """A failed call. A failed check run publication is also remembered on its
    run result (last_publication_error); the result itself never changes.
    dispatch_uncertain: the dispatch request was sent but no answer came back,
    so the workflow may or may not be running. Retrying could start it twice,
    so the item becomes a dead letter at once, which replay refuses
    (reconciliation resolves it). It replaces outbox_dispatch_uncertain, which
    repeated this function's lease check.
    """
    return call_one(conn, "outbox_fail", p_item_id=item_id, p_lease_token=lease_token, p_reason_code=reason_code,
                    p_error_class=error_class, p_max_attempts=max_attempts,
                    **given(p_not_before=not_before, p_final=final, p_now=now))


class OutboxPendingItemRow(TypedDict):
    item_id: int


def outbox_pending_item(conn: Connection, *, release_run_id: int, kind: str) -> list[OutboxPendingItemRow]:
    """The pending item of one kind for a release run (the synchronous result
    endpoint publishes its check run completion itself).
    Only an item that is due: one held (for a supply check) or backing off
    after a failure is left to the workers, which take it when its time comes.
    """
    return call(conn, "outbox_pending_item", p_release_run_id=release_run_id, p_kind=kind)


class OutboxReportRow(TypedDict):
    outcome: str


def outbox_report(conn: Connection, *, item_id: int, lease_token: UUID | str, outcome: str, check_run_id: int = DEFAULT,
                  workflow_run_id: int = DEFAULT, installation_id: int = DEFAULT, progress: int = DEFAULT,
                  published_conclusion: str = DEFAULT, comment_id: int = DEFAULT, decision: str = DEFAULT,
                  now: datetime = DEFAULT) -> OutboxReportRow:
    """Every report on a claimed outbox item, in one transaction: when the
    caller's lease is still the current one, the item is completed with
    p_outcome (a progress report keeps it leased) and the outcome's effects are
    applied; otherwise 'lease_lost' (the new holder's report counts). What an
    outcome carries: check_run_created p_check_run_id; dispatched
    p_workflow_run_id and p_installation_id; progress_recorded p_progress and
    p_published_conclusion; comment_posted p_comment_id; decision_published
    p_decision. One function with a branch per outcome replaces one function
    per outcome, each of which began with the same lease check.
    """
    return call_one(conn, "outbox_report", p_item_id=item_id, p_lease_token=lease_token, p_outcome=outcome,
                    **given(p_check_run_id=check_run_id, p_workflow_run_id=workflow_run_id, p_installation_id=installation_id, p_progress=progress, p_published_conclusion=published_conclusion, p_comment_id=comment_id, p_decision=decision, p_now=now))


# -- pages.sql -------------------------------------------------------------------------------------------------------


class PeopleLoginsRow(TypedDict):
    actor: str
    shown: str


def people_logins(conn: Connection, *, actors: list[str]) -> list[PeopleLoginsRow]:
    """What the pages show for the actors of a run's history (host-user:<id>,
    token:<uuid>, operator:<id>, system): the login the service kept when the
    person last signed in or opened a pull request, the token's name. At most
    200 actors a call; an actor nothing is known of is left out.
    """
    return call(conn, "people_logins", p_actors=actors)


class SessionCanceledAccountsRow(TypedDict):
    login: str


def session_canceled_accounts(conn: Connection, *, session_id: UUID | str) -> list[SessionCanceledAccountsRow]:
    """The canceled accounts behind a session's installations (logins only): the
    /runs page of a viewer who sees no repository says why, instead of an empty
    list. Nothing about any other session or account.
    """
    return call(conn, "session_canceled_accounts", p_session_id=session_id)


# -- queue.sql.j2 ----------------------------------------------------------------------------------------------------


def job_complete(conn: Connection, *, job_id: int, lease_token: UUID | str, outcome: str,
                 now: datetime = DEFAULT) -> bool:
    """The work of a leased job is done: completed with its outcome, if the
    lease is still the caller's.
    """
    return call_one(conn, "job_complete", p_job_id=job_id, p_lease_token=lease_token, p_outcome=outcome,
                    **given(p_now=now))["job_complete"]


class JobFailRow(TypedDict):
    outcome: JobFailOutcome
    run_after: datetime


def job_fail(conn: Connection, *, job_id: int, lease_token: UUID | str, reason_code: str, error_class: str,
             max_attempts: int, now: datetime = DEFAULT, not_before: datetime = DEFAULT,
             final: bool = DEFAULT) -> JobFailRow:
    """A failed attempt: back off and retry, or dead-letter after the last attempt
    (or at once when p_final); queue_retry_after decides.
    """
    return call_one(conn, "job_fail", p_job_id=job_id, p_lease_token=lease_token, p_reason_code=reason_code,
                    p_error_class=error_class, p_max_attempts=max_attempts,
                    **given(p_now=now, p_not_before=not_before, p_final=final))


class JobReleaseRow(TypedDict):
    outcome: JobReleaseOutcome


def job_release(conn: Connection, *, job_id: int, lease_token: UUID | str, now: datetime = DEFAULT) -> JobReleaseRow:
    """Give a claimed job back untouched (a worker shutting down): not an
    attempt, due at once for another worker.
    """
    return call_one(conn, "job_release", p_job_id=job_id, p_lease_token=lease_token, **given(p_now=now))


def job_renew_leases(conn: Connection, *, ids: list[int], lease_tokens: list[UUID | str], lease_seconds: int,
                     now: datetime = DEFAULT) -> list[int]:
    """Extend the leases a live worker still holds on jobs it is running
    (workers/queue_worker.py renews them a few times per lease), so that one
    slower than its lease is not claimed and run a second time by another
    worker meanwhile. A lease already taken over (another token) or ended is
    left alone. Returns the ids whose lease was extended.
    """
    return [row["job_renew_leases"] for row in call(conn, "job_renew_leases", p_ids=ids, p_lease_tokens=lease_tokens,
                                                    p_lease_seconds=lease_seconds, **given(p_now=now))]


class ScheduleClaimRow(TypedDict):
    schedule_id: int
    lease_token: UUID
    name: str
    attempts: int


def schedule_claim(conn: Connection, *, names: list[str], worker: str, lease_seconds: int, now: datetime = DEFAULT,
                   due_now: list[str] = DEFAULT) -> list[ScheduleClaimRow]:
    return call(conn, "schedule_claim", p_names=names, p_worker=worker, p_lease_seconds=lease_seconds,
                **given(p_now=now, p_due_now=due_now))


def schedule_complete(conn: Connection, *, schedule_id: int, lease_token: UUID | str, interval_ms: int, outcome: str,
                      reason_code: str = DEFAULT, error_class: str = DEFAULT, now: datetime = DEFAULT) -> bool:
    """A tick ended (p_reason_code set: it failed): due again p_interval_ms after
    it ended. Returns false when the lease was lost (the tick ran too long and
    another replica took it over).
    """
    return call_one(conn, "schedule_complete", p_schedule_id=schedule_id, p_lease_token=lease_token,
                    p_interval_ms=interval_ms, p_outcome=outcome,
                    **given(p_reason_code=reason_code, p_error_class=error_class, p_now=now))["schedule_complete"]


class ScheduleReleaseRow(TypedDict):
    outcome: ScheduleReleaseOutcome


def schedule_release(conn: Connection, *, schedule_id: int, lease_token: UUID | str,
                     now: datetime = DEFAULT) -> ScheduleReleaseRow:
    """Give a claimed tick back untouched (a worker shutting down): not an
    attempt, due at once for another worker.
    """
    return call_one(conn, "schedule_release", p_schedule_id=schedule_id, p_lease_token=lease_token, **given(p_now=now))


def schedule_renew_leases(conn: Connection, *, ids: list[int], lease_tokens: list[UUID | str], lease_seconds: int,
                          now: datetime = DEFAULT) -> list[int]:
    """Extend the leases a live worker still holds on ticks it is running
    (workers/queue_worker.py renews them a few times per lease), so that one
    slower than its lease is not claimed and run a second time by another
    worker meanwhile. A lease already taken over (another token) or ended is
    left alone. Returns the ids whose lease was extended.
    """
    return [row["schedule_renew_leases"] for row in call(conn, "schedule_renew_leases", p_ids=ids,
                                                         p_lease_tokens=lease_tokens, p_lease_seconds=lease_seconds,
                                                         **given(p_now=now))]


class WorkClaimRow(TypedDict):
    item_id: int
    lease_token: UUID
    kind: str
    subject_id: int
    installation_id: int
    attempts: int


def work_claim(conn: Connection, *, kinds: list[str], worker: str, limit: int, lease_seconds: int, max_attempts: int,
               now: datetime = DEFAULT) -> list[WorkClaimRow]:
    """Claim due items of the given kinds with their subject ids (supply work)."""
    return call(conn, "work_claim", p_kinds=kinds, p_worker=worker, p_limit=limit, p_lease_seconds=lease_seconds,
                p_max_attempts=max_attempts, **given(p_now=now))


def work_complete(conn: Connection, *, item_id: int, lease_token: UUID | str, outcome: str,
                  now: datetime = DEFAULT) -> bool:
    """The work of a leased item is done: completed with its outcome, if the
    lease is still the caller's.
    """
    return call_one(conn, "work_complete", p_item_id=item_id, p_lease_token=lease_token, p_outcome=outcome,
                    **given(p_now=now))["work_complete"]


class WorkDeferRow(TypedDict):
    outcome: WorkDeferOutcome


def work_defer(conn: Connection, *, item_id: int, lease_token: UUID | str, run_after: datetime,
               now: datetime = DEFAULT) -> WorkDeferRow:
    """Put a leased item back until p_run_after without counting the attempt
    (the provider's budget is spent: the work waits, it did not fail).
    """
    return call_one(conn, "work_defer", p_item_id=item_id, p_lease_token=lease_token, p_run_after=run_after,
                    **given(p_now=now))


class WorkFailRow(TypedDict):
    outcome: WorkFailOutcome
    run_after: datetime


def work_fail(conn: Connection, *, item_id: int, lease_token: UUID | str, reason_code: str, error_class: str,
              max_attempts: int, now: datetime = DEFAULT, not_before: datetime = DEFAULT,
              final: bool = DEFAULT) -> WorkFailRow:
    """A failed attempt: back off and retry, or dead-letter after the last attempt
    (or at once when p_final); queue_retry_after decides.
    """
    return call_one(conn, "work_fail", p_item_id=item_id, p_lease_token=lease_token, p_reason_code=reason_code,
                    p_error_class=error_class, p_max_attempts=max_attempts,
                    **given(p_now=now, p_not_before=not_before, p_final=final))


class WorkReleaseRow(TypedDict):
    outcome: WorkReleaseOutcome


def work_release(conn: Connection, *, item_id: int, lease_token: UUID | str, now: datetime = DEFAULT) -> WorkReleaseRow:
    """Give a claimed item back untouched (a worker shutting down): not an
    attempt, due at once for another worker.
    """
    return call_one(conn, "work_release", p_item_id=item_id, p_lease_token=lease_token, **given(p_now=now))


def work_renew_leases(conn: Connection, *, ids: list[int], lease_tokens: list[UUID | str], lease_seconds: int,
                      now: datetime = DEFAULT) -> list[int]:
    """Extend the leases a live worker still holds on items it is running
    (workers/queue_worker.py renews them a few times per lease), so that one
    slower than its lease is not claimed and run a second time by another
    worker meanwhile. A lease already taken over (another token) or ended is
    left alone. Returns the ids whose lease was extended.
    """
    return [row["work_renew_leases"] for row in call(conn, "work_renew_leases", p_ids=ids, p_lease_tokens=lease_tokens,
                                                     p_lease_seconds=lease_seconds, **given(p_now=now))]


# -- reconciliation.sql ----------------------------------------------------------------------------------------------


def reconciler_heartbeat(conn: Connection, *, reconciler: str, succeeded: bool, now: datetime = DEFAULT) -> None:
    call(conn, "reconciler_heartbeat", p_reconciler=reconciler, p_succeeded=succeeded, **given(p_now=now))


class ReconciliationClaimRow(TypedDict):
    item_id: int
    lease_token: UUID
    attempts: int
    reason_code: str
    deadline_at: datetime
    subject_id: int


def reconciliation_claim(conn: Connection, *, kind: str, worker: str, limit: int, lease_seconds: int, max_attempts: int,
                         now: datetime = DEFAULT) -> list[ReconciliationClaimRow]:
    """The claimed items of one kind with their own columns, read in a statement
    of its own after the claim, so that its snapshot sees every row the claim
    took (queue.sql.j2). What an observation needs of an item's subject (which is
    older than the item) the worker reads next from the kind's subjects view
    below (workers/reconcile.py).
    """
    return call(conn, "reconciliation_claim", p_kind=kind, p_worker=worker, p_limit=limit,
                p_lease_seconds=lease_seconds, p_max_attempts=max_attempts, **given(p_now=now))


class ReconciliationDetectRow(TypedDict):
    item_id: int
    subject_id: int
    installation_id: int
    reason_code: str


def reconciliation_detect(conn: Connection, *, kind: str, observation_seconds: int, deadline_seconds: int,
                          now: datetime = DEFAULT) -> list[ReconciliationDetectRow]:
    """Detection of one kind (p_kind): its candidates, each opened as an item
    (reconciliation_open_items). One function for the three kinds, which
    differed only in the candidates they select.
     workflow_attempt: the current attempt of an open release run whose
      workflow was dispatched (with or without a run id: a 204 answer) or whose
      dispatch is uncertain, with no result, past the observation window since
      the attempt began. Its deadline counts from the same instant.
     release_run (check run publication): a terminal release run with a check
      run and no publication timestamp past the observation window, once the
      outbox has no check run update pending for it (it gave up, or the
      completion was lost).
     lifecycle_inbox (inbox and job drift), only for deliveries that resolve to
      a persisted installation (whose account is not canceled: its new jobs are
      blocked). lifecycle_job_missing: a non-terminal inbox row without a job,
      older than the observation window. lifecycle_inbox_state_drift: the inbox
      state is not the projection of its job's status
      (lifecycle_inbox_state_for), and neither changed within the window.
      Terminal inbox rows without a job are evidence (ping, events the service
      does not act on): left alone.
    """
    return call(conn, "reconciliation_detect", p_kind=kind, p_observation_seconds=observation_seconds,
                p_deadline_seconds=deadline_seconds, **given(p_now=now))


class ReconciliationReportRow(TypedDict):
    outcome: str
    reason_code: str
    terminal: bool
    release_run_id: int
    inbox_id: int
    job_id: int


def reconciliation_report(conn: Connection, *, item_id: int, lease_token: UUID | str, observation: str = DEFAULT,
                          next_check_seconds: int = DEFAULT, conclusion: str = DEFAULT, workflow_run_id: int = DEFAULT,
                          now: datetime = DEFAULT) -> ReconciliationReportRow:
    """What a reconciler saw of one leased item, applied in one transaction: the
    lease is checked here once (a lost one applies nothing: lease_lost), then
    the item's kind decides (above). p_observation, p_conclusion and
    p_workflow_run_id are what a lookup found (the lifecycle repair looks
    itself and takes none); terminal says whether the item ended.
    """
    return call_one(conn, "reconciliation_report", p_item_id=item_id, p_lease_token=lease_token,
                    **given(p_observation=observation, p_next_check_seconds=next_check_seconds, p_conclusion=conclusion, p_workflow_run_id=workflow_run_id, p_now=now))


class ReconciliationStatusRow(TypedDict):
    reconciler: str
    kind: str
    last_poll_at: datetime
    last_success_at: datetime
    open_items: int
    due_items: int
    oldest_open_at: datetime
    completed_items: int
    failed_items: int
    dead_letter_items: int


def reconciliation_status(conn: Connection, *, now: datetime = DEFAULT) -> list[ReconciliationStatusRow]:
    """One row per reconciler for the operator endpoint and ops.reconciliation."""
    return call(conn, "reconciliation_status", **given(p_now=now))


# -- replay.sql ------------------------------------------------------------------------------------------------------


class DeadLetterReplayRow(TypedDict):
    outcome: DeadLetterReplayOutcome
    audit_event_id: UUID


def dead_letter_replay(conn: Connection, *, installation_id: int, item_type: str, item_id: int, idempotency_key: str,
                       actor: str, operation_id: str, now: datetime = DEFAULT) -> DeadLetterReplayRow:
    """Outcomes: replayed, already_applied (same key, same request: same audit
    event), idempotency_key_reused (same key, another request), not_found,
    not_replayable.
    """
    return call_one(conn, "dead_letter_replay", p_installation_id=installation_id, p_item_type=item_type,
                    p_item_id=item_id, p_idempotency_key=idempotency_key, p_actor=actor, p_operation_id=operation_id,
                    **given(p_now=now))


# -- repository_settings.sql -----------------------------------------------------------------------------------------


class RepositorySettingsGetRow(TypedDict):
    outcome: RepositorySettingsGetOutcome
    token_published_results: bool


def repository_settings_get(conn: Connection, *, repository_id: int) -> RepositorySettingsGetRow:
    return call_one(conn, "repository_settings_get", p_repository_id=repository_id)


class RepositorySettingsUpdateRow(TypedDict):
    outcome: RepositorySettingsUpdateOutcome
    token_published_results: bool
    audit_event_id: UUID


def repository_settings_update(conn: Connection, *, repository_id: int, token_published_results: bool, actor: str,
                               now: datetime = DEFAULT) -> RepositorySettingsUpdateRow:
    return call_one(conn, "repository_settings_update", p_repository_id=repository_id,
                    p_token_published_results=token_published_results, p_actor=actor, **given(p_now=now))


# -- results.sql -----------------------------------------------------------------------------------------------------


def release_attempt_dispatch_ref(conn: Connection, *, attempt_ref: str) -> str:
    """The branch the readiness workflow of an attempt ("<attempt id>-<nonce>") was
    dispatched on (the repository's default branch), or NULL for an unknown
    attempt: the workflow result callback accepts an OIDC token only when its
    job_workflow_ref is readiness-runner.yml at that branch (app/web/runs.py).
    """
    return call_one(conn, "release_attempt_dispatch_ref", p_attempt_ref=attempt_ref)["release_attempt_dispatch_ref"]


class ReleaseResultAcceptRow(TypedDict):
    outcome: ReleaseResultAcceptOutcome
    run_result_id: int
    release_run_id: int
    decision: str
    conclusion: str
    check_run_id: int


def release_result_accept(conn: Connection, *, attempt_ref: str, repository_id: int, workflow_run_id: int, source: str,
                          result: Jsonb, digest: str, api_token_id: str, oidc_jti: str,
                          now: datetime = DEFAULT) -> ReleaseResultAcceptRow:
    """A release run's result, from the signed workflow callback (p_workflow_run_id
    from the ID token) or a bearer token (p_workflow_run_id NULL). Refusals
    write nothing; acceptance stores the result, decides, closes the attempt,
    writes an audit event and queues the check run completion and the comment.
    A bearer result decides only where the repository opted in
    (token_published_results; else oidc_result_required), and the signed result
    is never locked out by it: arriving later for the same attempt, it
    supersedes the token's result, decision and publication.
    """
    return call_one(conn, "release_result_accept", p_attempt_ref=attempt_ref, p_repository_id=repository_id,
                    p_workflow_run_id=workflow_run_id, p_source=source, p_result=result, p_digest=digest,
                    p_api_token_id=api_token_id, p_oidc_jti=oidc_jti, **given(p_now=now))


class RunIngestRow(TypedDict):
    outcome: RunIngestOutcome
    run_result_id: int
    decision: str


def run_ingest(conn: Connection, *, repository_id: int, api_token_id: str, result: Jsonb,
               now: datetime = DEFAULT) -> RunIngestRow:
    """POST /api/v1/runs: a run for the review pages. Touches no check run."""
    return call_one(conn, "run_ingest", p_repository_id=repository_id, p_api_token_id=api_token_id, p_result=result,
                    **given(p_now=now))


class RunResultPublicationRow(TypedDict):
    readiness: str
    score: int
    decision: str
    conclusion: str
    tool_name: str
    tool_version: str
    kicad_version: str
    head_sha: str
    source: str
    api_token_id: str
    findings: Any


def run_result_publication(conn: Connection, *, run_result_id: int) -> RunResultPublicationRow:
    """What the check run and the comment show: the result and its findings in
    order, with the decision its completion shows (run_result_completion_decision).
    (source and api_token_id: a token-published result says so on the check
    run; the older shape is dropped by migration 0031.)
    """
    return call_one(conn, "run_result_publication", p_run_result_id=run_result_id)


# -- retention.sql ---------------------------------------------------------------------------------------------------


class RetentionPurgeBatchRow(TypedDict):
    outcome: RetentionPurgeBatchOutcome
    sweep_id: int
    deleted: Any
    deleted_rows: int
    remaining: int
    audit_event_id: UUID


def retention_purge_batch(conn: Connection, *, retention_days: int, batch_size: int,
                          now: datetime = DEFAULT) -> RetentionPurgeBatchRow:
    """Outcomes: purged (rows deleted; call again), completed (nothing was left:
    the sweep is closed and audited), idle (nothing to do, no sweep open), busy
    (another replica's batch is running). `remaining` is what is still to
    delete after this batch, counted up to the batch size per kind (runs,
    ingested results, inbox rows, comments): a lower bound, cheap to count.
    """
    return call_one(conn, "retention_purge_batch", p_retention_days=retention_days, p_batch_size=batch_size,
                    **given(p_now=now))


def work_items_purge(conn: Connection, *, retention_days: int, batch_size: int, now: datetime = DEFAULT) -> int:
    """Finished supply work items (supply checks, board refreshes) older than
    the retention window, at most p_batch_size per call; they hold ids and
    codes only. Dead letters stay for the operator; the outbox calls and
    reconciliation items go with their release runs and inbox rows. Returns
    the rows deleted.
    """
    return call_one(conn, "work_items_purge", p_retention_days=retention_days, p_batch_size=batch_size,
                    **given(p_now=now))["work_items_purge"]


# -- reviews.sql -----------------------------------------------------------------------------------------------------


class ReleaseDecisionPublicationRow(TypedDict):
    outcome: ReleaseDecisionPublicationOutcome
    decision: str
    conclusion: str
    readiness: str
    score: int
    review_decision: str
    blocking: int
    unwaived_blocking: int
    waived: int
    tool_name: str
    tool_version: str


def release_decision_publication(conn: Connection, *, item_id: int, lease_token: UUID | str,
                                 now: datetime = DEFAULT) -> ReleaseDecisionPublicationRow:
    """The outbox worker updates a check run to its run's decision: recompute it
    now (a waiver may have expired) and say what to send. Outcomes: lease_lost,
    skip (superseded, not current, no completed check run yet: the completion
    will queue it), unchanged (the check run already shows it), publish.
    """
    return call_one(conn, "release_decision_publication", p_item_id=item_id, p_lease_token=lease_token,
                    **given(p_now=now))


class ReviewRecordApprovalCommentV2Row(TypedDict):
    outcome: ReviewRecordApprovalCommentV2Outcome
    approval_id: int
    status: str
    break_glass: bool
    review_decision: str
    release_run_id: int
    release_decision: str
    updated_at: datetime
    retry_after_seconds: int


def review_record_approval_comment_v2(conn: Connection, *, review_id: int, repository_ids: list[int], actor: str,
                                      status: str, break_glass: bool, break_glass_reason: str, comment: str, limit: int,
                                      now: datetime = DEFAULT) -> ReviewRecordApprovalCommentV2Row:
    """review_record_approval_v2 with the reviewer's comment, in the same
    transaction: a request for changes that is recorded keeps p_comment on the
    approval (shown in the run page's history while comment_at = updated_at).
    A comment goes only with changes_requested (invalid_comment otherwise). The
    same standing request again (already_applied: nothing published) with a
    comment replaces the comment, so one the code host did not take can be sent
    again; a refused approval keeps what it had.
    """
    return call_one(conn, "review_record_approval_comment_v2", p_review_id=review_id, p_repository_ids=repository_ids,
                    p_actor=actor, p_status=status, p_break_glass=break_glass, p_break_glass_reason=break_glass_reason,
                    p_comment=comment, p_limit=limit, **given(p_now=now))


class ReviewRecordApprovalV2Row(TypedDict):
    outcome: ReviewRecordApprovalV2Outcome
    approval_id: int
    status: str
    break_glass: bool
    review_decision: str
    release_run_id: int
    release_decision: str
    updated_at: datetime
    retry_after_seconds: int


def review_record_approval_v2(conn: Connection, *, review_id: int, repository_ids: list[int], actor: str, status: str,
                              break_glass: bool, break_glass_reason: str, limit: int,
                              now: datetime = DEFAULT) -> ReviewRecordApprovalV2Row:
    """A review approval (review_approval_record): at most p_limit decisions a minute
    per actor and repository (rate_limited, nothing recorded), and the same
    standing approval again is already_applied (nothing recorded, nothing
    published). p_actor is the person: a token minted by a person acts as them.
    """
    return call_one(conn, "review_record_approval_v2", p_review_id=review_id, p_repository_ids=repository_ids,
                    p_actor=actor, p_status=status, p_break_glass=break_glass, p_break_glass_reason=break_glass_reason,
                    p_limit=limit, **given(p_now=now))


class WaiverCreateV2Row(TypedDict):
    outcome: WaiverCreateV2Outcome
    waiver_id: int
    created_at: datetime
    decisions_changed: int
    retry_after_seconds: int


def waiver_create_v2(conn: Connection, *, repository_id: int, repository_ids: list[int], fingerprint: str, reason: str,
                     expires_at: datetime, actor: str, max_days: int, limit: int,
                     now: datetime = DEFAULT) -> WaiverCreateV2Row:
    """Release 0.7.0's waiver (its code has no answer for finding_not_waivable):
    waiver_create_v3 without that refusal.
    """
    return call_one(conn, "waiver_create_v2", p_repository_id=repository_id, p_repository_ids=repository_ids,
                    p_fingerprint=fingerprint, p_reason=reason, p_expires_at=expires_at, p_actor=actor,
                    p_max_days=max_days, p_limit=limit, **given(p_now=now))


class WaiverCreateV3Row(TypedDict):
    outcome: WaiverCreateV3Outcome
    waiver_id: int
    created_at: datetime
    decisions_changed: int
    retry_after_seconds: int


def waiver_create_v3(conn: Connection, *, repository_id: int, repository_ids: list[int], fingerprint: str, reason: str,
                     expires_at: datetime, actor: str, max_days: int, limit: int,
                     now: datetime = DEFAULT) -> WaiverCreateV3Row:
    """A waiver (waiver_store): the decisions limit as for approvals, and
    an expiry at most p_max_days ahead (invalid_expires_at, nothing stored).
    A fingerprint the repository's runs report as checker.rule-failed (a rule
    that did not run: the check is incomplete) is never waived
    (finding_not_waivable, nothing stored), as the checker refuses to let the
    repository's .boardready.toml lower it: what a rule did not look at cannot
    be accepted as looked at.
    """
    return call_one(conn, "waiver_create_v3", p_repository_id=repository_id, p_repository_ids=repository_ids,
                    p_fingerprint=fingerprint, p_reason=reason, p_expires_at=expires_at, p_actor=actor,
                    p_max_days=max_days, p_limit=limit, **given(p_now=now))


class WaiverDeleteRow(TypedDict):
    outcome: WaiverDeleteOutcome
    waiver_id: int
    deleted_at: datetime
    decisions_changed: int


def waiver_delete(conn: Connection, *, repository_id: int, repository_ids: list[int], waiver_id: int, actor: str,
                  now: datetime = DEFAULT) -> WaiverDeleteRow:
    """DELETE /api/v1/repositories/{id}/waivers?waiverId=. Outcomes: not_found,
    already_deleted, deleted.
    """
    return call_one(conn, "waiver_delete", p_repository_id=repository_id, p_repository_ids=repository_ids,
                    p_waiver_id=waiver_id, p_actor=actor, **given(p_now=now))


# -- sessions.sql ----------------------------------------------------------------------------------------------------


class AccessRemovedRow(TypedDict):
    sessions_ended: int
    tokens_revoked: int


def access_removed(conn: Connection, *, person_id: int, account_id: int, installation_id: int,
                   repository_ids: list[int], reason: str, now: datetime = DEFAULT) -> AccessRemovedRow:
    """The code host says a person lost access (organization member_removed,
    member removed, an installation's repositories removed, the installation
    deleted or suspended): end that person's sessions that reached the scope
    and revoke the tokens they minted there, each with an audit event.
    p_person_id NULL: everyone's (the installation or repositories are gone).
    The scope is p_repository_ids when given, else every repository of the
    installation p_installation_id or of the account p_account_id's
    installations. Idempotent: a redelivery finds nothing left to do.
    """
    return call_one(conn, "access_removed", p_person_id=person_id, p_account_id=account_id,
                    p_installation_id=installation_id, p_repository_ids=repository_ids, p_reason=reason,
                    **given(p_now=now))


class InstallationSuspensionSetRow(TypedDict):
    outcome: InstallationSuspensionSetOutcome


def installation_suspension_set(conn: Connection, *, installation_id: int, suspended: bool,
                                now: datetime = DEFAULT) -> InstallationSuspensionSetRow:
    """Whether an installation is suspended, as the code host says when asked
    (app/web/membership.py reads it on each suspend or unsuspend delivery, so
    the order deliveries arrive in does not matter). A suspended installation's
    repositories are out of reach for every credential
    (session_visible_repositories, repository_access_denial) until it is
    unsuspended. A deleted installation stays deleted.
    """
    return call_one(conn, "installation_suspension_set", p_installation_id=installation_id, p_suspended=suspended,
                    **given(p_now=now))


class PersonPermissionReplaceRow(TypedDict):
    sessions_updated: int
    sessions_ended: int


def person_permission_replace(conn: Connection, *, person_id: int, repository_id: int, role: str,
                              now: datetime = DEFAULT) -> PersonPermissionReplaceRow:
    """The code host re-read a person's permission on one repository (p_role:
    admin, write, read or none) after a membership delivery: every session of
    theirs gets it (session_permission_replace, each with its own outcome; a
    session left with nothing is ended). Their tokens are cut to it at each
    change (app/web/authority.py) and revoked with access_removed on none.
    """
    return call_one(conn, "person_permission_replace", p_person_id=person_id, p_repository_id=repository_id,
                    p_role=role, **given(p_now=now))


class PersonReachRow(TypedDict):
    repository_id: int
    installation_id: int
    full_name: str


def person_reach(conn: Connection, *, person_id: int, account_id: int, installation_id: int,
                 repository_ids: list[int]) -> list[PersonReachRow]:
    """The repositories within a scope (p_repository_ids, else every repository of
    the installation p_installation_id or of the account p_account_id's
    installations) that a person's sessions or live tokens reach: the ones whose
    permission app/web/membership.py re-reads from the code host when a
    membership delivery says the person's rights may have changed.
    """
    return call(conn, "person_reach", p_person_id=person_id, p_account_id=account_id, p_installation_id=installation_id,
                p_repository_ids=repository_ids)


class SessionAuthenticateV2Row(TypedDict):
    outcome: SessionAuthenticateV2Outcome
    retry_after_seconds: int
    session_id: UUID
    viewer_id: int
    viewer_login: str
    repository_ids: list[int]
    admin_repository_ids: list[int]
    write_repository_ids: list[int]
    permissions_checked_at: datetime
    expires_at: datetime


def session_authenticate_v2(conn: Connection, *, token_sha256: bytes, client_key: str, limit: int,
                            now: datetime = DEFAULT) -> SessionAuthenticateV2Row:
    """One round trip per session request. A valid session is never refused
    because of other clients' failures: it is looked up first. Only an unknown
    cookie meets the client's failed-authentication limiter (limited) and, when
    not limited, counts as a failure. The rights are those visible now; a
    session of the previous release (no rights recorded) may only read.
    """
    return call_one(conn, "session_authenticate_v2", p_token_sha256=token_sha256, p_client_key=client_key,
                    p_limit=limit, **given(p_now=now))


class SessionCreateRow(TypedDict):
    outcome: SessionCreateOutcome
    session_id: UUID
    expires_at: datetime


def session_create(conn: Connection, *, token_sha256: bytes, viewer_id: int, viewer_login: str,
                   installation_ids: list[int], repository_ids: list[int], ttl_hours: int,
                   now: datetime = DEFAULT) -> SessionCreateRow:
    """A session for a viewer, with the installations and repositories the code
    host said the viewer can reach (kept as ids; what is visible is decided
    again on every request by session_verify).
    """
    return call_one(conn, "session_create", p_token_sha256=token_sha256, p_viewer_id=viewer_id,
                    p_viewer_login=viewer_login, p_installation_ids=installation_ids, p_repository_ids=repository_ids,
                    p_ttl_hours=ttl_hours, **given(p_now=now))


class SessionCreateV2Row(TypedDict):
    outcome: SessionCreateV2Outcome
    session_id: UUID
    expires_at: datetime


def session_create_v2(conn: Connection, *, token_sha256: bytes, viewer_id: int, viewer_login: str,
                      installation_ids: list[int], repository_ids: list[int], admin_repository_ids: list[int],
                      write_repository_ids: list[int], ttl_hours: int, now: datetime = DEFAULT) -> SessionCreateV2Row:
    """session_create with the viewer's rights per repository as the code host
    reported them at sign-in: admin (admin or maintain) and write (push)
    repositories, each also among p_repository_ids (which all read).
    """
    return call_one(conn, "session_create_v2", p_token_sha256=token_sha256, p_viewer_id=viewer_id,
                    p_viewer_login=viewer_login, p_installation_ids=installation_ids, p_repository_ids=repository_ids,
                    p_admin_repository_ids=admin_repository_ids, p_write_repository_ids=write_repository_ids,
                    p_ttl_hours=ttl_hours, **given(p_now=now))


class SessionDeleteRow(TypedDict):
    outcome: SessionDeleteOutcome


def session_delete(conn: Connection, *, token_sha256: bytes) -> SessionDeleteRow:
    return call_one(conn, "session_delete", p_token_sha256=token_sha256)


class SessionPermissionReplaceRow(TypedDict):
    outcome: SessionPermissionReplaceOutcome


def session_permission_replace(conn: Connection, *, session_id: UUID | str, repository_id: int, role: str,
                               now: datetime = DEFAULT) -> SessionPermissionReplaceRow:
    """The code host re-read one repository's permission for a session's viewer
    (p_role: admin, write, read or none). The session's rights there are
    replaced; with no access left anywhere the session is ended (outcome
    ended), else updated.
    """
    return call_one(conn, "session_permission_replace", p_session_id=session_id, p_repository_id=repository_id,
                    p_role=role, **given(p_now=now))


class SessionsPermissionsStaleRow(TypedDict):
    sessions_marked: int


def sessions_permissions_stale(conn: Connection, *, repository_ids: list[int]) -> SessionsPermissionsStaleRow:
    """A repository's permissions changed on the code host for people the delivery
    does not name (a team's access to it edited, added or removed): every session
    reaching it has its rights read again before its next change, whatever
    SERVICE_PERMISSION_TTL_SECONDS says (tokens minted by people are read again
    before every change anyway).
    """
    return call_one(conn, "sessions_permissions_stale", p_repository_ids=repository_ids)


class SignInBeginRow(TypedDict):
    outcome: SignInBeginOutcome
    expires_at: datetime


def sign_in_begin(conn: Connection, *, cookie_sha256: bytes, state: str, return_to: str, ttl_seconds: int,
                  now: datetime = DEFAULT) -> SignInBeginRow:
    """A sign-in begins: remember the pre-session cookie's hash, the OAuth state
    bound to it and where to return. Old attempts are swept on the way.
    """
    return call_one(conn, "sign_in_begin", p_cookie_sha256=cookie_sha256, p_state=state, p_return_to=return_to,
                    p_ttl_seconds=ttl_seconds, **given(p_now=now))


class SignInFinishRow(TypedDict):
    outcome: SignInFinishOutcome
    return_to: str


def sign_in_finish(conn: Connection, *, cookie_sha256: bytes, state: str, now: datetime = DEFAULT) -> SignInFinishRow:
    """The code host sent the browser back: the attempt is used up whatever the
    outcome (a refused state cannot be tried again). Outcomes: ok, unknown
    (no such pre-session), expired, state_mismatch.
    """
    return call_one(conn, "sign_in_finish", p_cookie_sha256=cookie_sha256, p_state=state, **given(p_now=now))


# -- slo.sql ---------------------------------------------------------------------------------------------------------


class SloSnapshotRow(TypedDict):
    taken_at: datetime
    webhook_deliveries: int
    webhook_acceptance_p95_ms: float
    lifecycle_accepted: int
    lifecycle_leased: int
    lifecycle_dead_letter: int
    lifecycle_queue_age_seconds: float
    outbox_accepted: int
    outbox_leased: int
    outbox_dead_letter: int
    outbox_lag_seconds: float
    reconciliation_backlog: int
    reconciliation_backlog_by_kind: Any
    stale_attempts: int
    terminal_runs: int
    failed_runs: int
    terminal_failure_rate_bp: int
    reconcilers: Any


def slo_snapshot(conn: Connection, *, deadline_seconds: int, acceptance_window_seconds: int = DEFAULT,
                 failure_window_seconds: int = DEFAULT, now: datetime = DEFAULT) -> SloSnapshotRow:
    """The aggregate SLI snapshot the SLO policy host-cloud-ga-v1 evaluates and
    GET /metrics exposes. Counts, ages and percentiles only: no tenant data.

      webhook_acceptance_p95_ms   p95 of the server-side acceptance time of the deliveries received in
                                  the last p_acceptance_window_seconds (NULL without deliveries)
      lifecycle_queue_age_seconds age of the oldest accepted or leased lifecycle job (0 when none)
      outbox_lag_seconds          how long the oldest due outbox item has waited past its due time
      reconciliation_backlog      open reconciliation items (all kinds; per kind in the jsonb)
      stale_attempts              current attempts of open release runs older than the reconciliation
                                  deadline: reconciliation should have closed them
      terminal_*                  release runs that ended in the last p_failure_window_seconds, and how
                                  many of them failed or timed out (superseded runs do not count)
    """
    return call_one(conn, "slo_snapshot", p_deadline_seconds=deadline_seconds,
                    **given(p_acceptance_window_seconds=acceptance_window_seconds, p_failure_window_seconds=failure_window_seconds, p_now=now))


# -- supply.sql ------------------------------------------------------------------------------------------------------


class ComponentProviderAcquireRow(TypedDict):
    outcome: ComponentProviderAcquireOutcome
    trial_token: UUID
    retry_after_ms: int
    breaker_state: str


def component_provider_acquire(conn: Connection, *, installation_id: int, limit_per_minute: int, cooldown_ms: int,
                               trial_lease_ms: int = DEFAULT, now: datetime = DEFAULT) -> ComponentProviderAcquireRow:
    return call_one(conn, "component_provider_acquire", p_installation_id=installation_id,
                    p_limit_per_minute=limit_per_minute, p_cooldown_ms=cooldown_ms,
                    **given(p_trial_lease_ms=trial_lease_ms, p_now=now))


class ComponentProviderRecordRow(TypedDict):
    breaker_state: str
    transitioned: bool


def component_provider_record(conn: Connection, *, installation_id: int, success: bool, trial_token: UUID | str,
                              threshold: int, now: datetime = DEFAULT) -> ComponentProviderRecordRow:
    """The outcome of a call acquire allowed. In half-open only the trial's
    outcome counts; late outcomes of calls made before the breaker opened
    change nothing while it is open.
    """
    return call_one(conn, "component_provider_record", p_installation_id=installation_id, p_success=success,
                    p_trial_token=trial_token, p_threshold=threshold, **given(p_now=now))


def supply_boards_enqueue(conn: Connection, *, now: datetime = DEFAULT) -> int:
    """The watched boards due for their refresh become work items; a board whose
    last refresh item was dead-lettered since it became due waits for the
    operator's replay instead of failing again. Returns the items made.
    """
    return call_one(conn, "supply_boards_enqueue", **given(p_now=now))["supply_boards_enqueue"]


def supply_observations_record(conn: Connection, *, installation_id: int, parts: Jsonb, now: datetime = DEFAULT) -> int:
    """One observation per part of one fetch. p_parts: [{partKey, manufacturer,
    mpn, matched, providerPartId, lifecycle, sellers}] as the client parsed them.
    """
    return call_one(conn, "supply_observations_record", p_installation_id=installation_id, p_parts=parts,
                    **given(p_now=now))["supply_observations_record"]


class SupplyWorkClaimV2Row(TypedDict):
    item_id: int
    lease_token: UUID
    kind: str
    subject_id: int
    installation_id: int
    attempts: int
    parts: Any


def supply_work_claim_v2(conn: Connection, *, worker: str, limit: int, lease_seconds: int, max_attempts: int,
                         max_age_hours: int, now: datetime = DEFAULT) -> list[SupplyWorkClaimV2Row]:
    """Claim supply work (checks first: a pull request waits for them) with what
    each item fetches.
    """
    return call(conn, "supply_work_claim_v2", p_worker=worker, p_limit=limit, p_lease_seconds=lease_seconds,
                p_max_attempts=max_attempts, p_max_age_hours=max_age_hours, **given(p_now=now))


class SupplyWorkCompleteRow(TypedDict):
    outcome: SupplyWorkCompleteOutcome
    findings_added: int


def supply_work_complete(conn: Connection, *, item_id: int, lease_token: UUID | str, unavailable_reason: str = DEFAULT,
                         refreshed: bool = DEFAULT, next_after: datetime = DEFAULT,
                         now: datetime = DEFAULT) -> SupplyWorkCompleteRow:
    """A leased supply item's work is done, in one transaction with its lease
    checked: a check's findings are applied (p_unavailable_reason: parts whose
    data could not be had), a board's refresh recorded (p_refreshed false: it
    could not be, and comes back at p_next_after). Outcomes: completed,
    unavailable, refreshed, not_refreshed, not_pending, lease_lost.
    """
    return call_one(conn, "supply_work_complete", p_item_id=item_id, p_lease_token=lease_token,
                    **given(p_unavailable_reason=unavailable_reason, p_refreshed=refreshed, p_next_after=next_after, p_now=now))


class WatchedBoardGetRow(TypedDict):
    outcome: WatchedBoardGetOutcome
    board_id: int
    path: str
    created_at: datetime
    created_by: str
    refreshed_at: datetime
    bom_run_result_id: int


def watched_board_get(conn: Connection, *, repository_id: int, now: datetime = DEFAULT) -> WatchedBoardGetRow:
    return call_one(conn, "watched_board_get", p_repository_id=repository_id, **given(p_now=now))


class WatchedBoardSupplyRow(TypedDict):
    ordinal: int
    refs: list[str]
    quantity: int
    value: str
    footprint: str
    manufacturer: str
    mpn: str
    dnp: bool
    part_key: str
    observed: bool
    matched: bool
    provider_part_id: str
    lifecycle_status: str
    distributor_classification: str
    price_breaks: Any
    stock: int
    authorized_stock: int
    fetched_at: datetime


def watched_board_supply(conn: Connection, *, board_id: int, bom_run_id: int, after_ordinal: int,
                         limit: int) -> list[WatchedBoardSupplyRow]:
    """A page of the board's BOM lines (GET .../supply): those of p_bom_run_id, the
    run watched_board_get named, in the checker's order after p_after_ordinal,
    each with its part's latest observation. A keyset page on the lines' primary
    key; no offset. (Dropped first: it grew the ordinal and the paging.)
    """
    return call(conn, "watched_board_supply", p_board_id=board_id, p_bom_run_id=bom_run_id,
                p_after_ordinal=after_ordinal, p_limit=limit)


class WatchedBoardUnwatchRow(TypedDict):
    outcome: WatchedBoardUnwatchOutcome
    board_id: int


def watched_board_unwatch(conn: Connection, *, repository_id: int, actor: str,
                          now: datetime = DEFAULT) -> WatchedBoardUnwatchRow:
    return call_one(conn, "watched_board_unwatch", p_repository_id=repository_id, p_actor=actor, **given(p_now=now))


class WatchedBoardWatchRow(TypedDict):
    outcome: WatchedBoardWatchOutcome
    board_id: int
    path: str
    created_at: datetime


def watched_board_watch(conn: Connection, *, repository_id: int, path: str, actor: str,
                        now: datetime = DEFAULT) -> WatchedBoardWatchRow:
    """Outcomes: watched, unchanged (the same path again), repository_not_found,
    account_canceled, plan_limit_watched_boards (another repository of the
    installation's account has the board). Watching another path of the same
    repository moves the board (watched).
    """
    return call_one(conn, "watched_board_watch", p_repository_id=repository_id, p_path=path, p_actor=actor,
                    **given(p_now=now))


# -- tokens.sql ------------------------------------------------------------------------------------------------------


class TokenCreateRow(TypedDict):
    outcome: TokenCreateOutcome
    token_id: UUID
    created_at: datetime
    expires_at: datetime


def token_create(conn: Connection, *, repository_id: int, name: str, scopes: list[str], duration_days: int,
                 token_sha256: bytes, token_prefix: str, created_by: str, now: datetime = DEFAULT) -> TokenCreateRow:
    return call_one(conn, "token_create", p_repository_id=repository_id, p_name=name, p_scopes=scopes,
                    p_duration_days=duration_days, p_token_sha256=token_sha256, p_token_prefix=token_prefix,
                    p_created_by=created_by, **given(p_now=now))


class TokenCreateV2Row(TypedDict):
    outcome: TokenCreateV2Outcome
    token_id: UUID
    created_at: datetime
    expires_at: datetime


def token_create_v2(conn: Connection, *, repository_id: int, name: str, scopes: list[str], duration_days: int,
                    token_sha256: bytes, token_prefix: str, created_by: str, person_id: int,
                    now: datetime = DEFAULT) -> TokenCreateV2Row:
    """token_create with the person the token acts as (p_person_id: the viewer of
    the session that mints it, or the person of the token that mints it; NULL
    for an operator's token). An admin token is audited with its person.
    """
    return call_one(conn, "token_create_v2", p_repository_id=repository_id, p_name=name, p_scopes=scopes,
                    p_duration_days=duration_days, p_token_sha256=token_sha256, p_token_prefix=token_prefix,
                    p_created_by=created_by, p_person_id=person_id, **given(p_now=now))


class TokenListRow(TypedDict):
    token_id: UUID
    name: str
    token_prefix: str
    scopes: list[str]
    status: str
    created_at: datetime
    expires_at: datetime
    last_used_at: datetime
    revoked_at: datetime
    created_by: str


def token_list(conn: Connection, *, repository_id: int, now: datetime = DEFAULT) -> list[TokenListRow]:
    return call(conn, "token_list", p_repository_id=repository_id, **given(p_now=now))


def token_repository_within(conn: Connection, *, token_id: UUID | str, repository_ids: list[int]) -> int:
    """The repository of a token among p_repository_ids (NULL elsewhere): a
    session's rights there are re-read before it revokes the token.
    """
    return call_one(conn, "token_repository_within", p_token_id=token_id,
                    p_repository_ids=repository_ids)["token_repository_within"]


class TokenRevokeRow(TypedDict):
    outcome: TokenRevokeOutcome
    revoked_at: datetime


def token_revoke(conn: Connection, *, token_id: UUID | str, repository_id: int, reason: str,
                 now: datetime = DEFAULT) -> TokenRevokeRow:
    """Revoke one token. p_repository_id is the caller's repository scope (the API
    passes the bearer token's repository): a token of another repository is
    not_found, exactly like one that does not exist. NULL (operator CLI) means any.
    """
    return call_one(conn, "token_revoke", p_token_id=token_id, p_repository_id=repository_id, p_reason=reason,
                    **given(p_now=now))


class TokenRevokeV2Row(TypedDict):
    outcome: TokenRevokeV2Outcome
    revoked_at: datetime


def token_revoke_v2(conn: Connection, *, token_id: UUID | str, admin_repository_ids: list[int],
                    own_repository_ids: list[int], person_id: int, actor: str,
                    now: datetime = DEFAULT) -> TokenRevokeV2Row:
    """DELETE /api/v1/tokens by a caller that is admin of p_admin_repository_ids
    and may revoke its own person's tokens in p_own_repository_ids. A token
    outside both is not_found. Revoking another person's token is audited.
    """
    return call_one(conn, "token_revoke_v2", p_token_id=token_id, p_admin_repository_ids=admin_repository_ids,
                    p_own_repository_ids=own_repository_ids, p_person_id=person_id, p_actor=actor, **given(p_now=now))


class TokenVerifyV2Row(TypedDict):
    outcome: TokenVerifyV2Outcome
    token_id: UUID
    repository_id: int
    scopes: list[str]
    expires_at: datetime
    person_id: int


def token_verify_v2(conn: Connection, *, token_sha256: bytes, now: datetime = DEFAULT) -> TokenVerifyV2Row:
    """Authenticate a bearer token by the SHA-256 of its value, with the person it
    acts as (NULL: itself). Outcomes: valid, unknown, revoked, expired,
    account_canceled, repository_removed.
    last_used_at is written only when the stored value is at least 60 s old, so
    a busy token costs at most one write a minute, not one per request.
    """
    return call_one(conn, "token_verify_v2", p_token_sha256=token_sha256, **given(p_now=now))


#: Every public function by its identity arguments: app/migrations.py grants the API role
#: EXECUTE on each, and on nothing else in the boardready schema.
PUBLIC_FUNCTIONS: dict[str, str] = {
    "access_removed": "p_person_id bigint, p_account_id bigint, p_installation_id bigint, p_repository_ids bigint[], p_reason text, p_now timestamp with time zone",
    "artifact_store": "p_attempt_ref text, p_repository_id bigint, p_workflow_run_id bigint, p_sha256 text, p_content bytea, p_size_bytes integer, p_now timestamp with time zone",
    "auth_throttle_check": "p_limiter text, p_client_key text, p_limit integer, p_now timestamp with time zone",
    "auth_throttle_record_failure": "p_limiter text, p_client_key text, p_now timestamp with time zone",
    "component_provider_acquire": "p_installation_id bigint, p_limit_per_minute integer, p_cooldown_ms integer, p_trial_lease_ms integer, p_now timestamp with time zone",
    "component_provider_record": "p_installation_id bigint, p_success boolean, p_trial_token uuid, p_threshold integer, p_now timestamp with time zone",
    "dead_letter_replay": "p_installation_id bigint, p_item_type text, p_item_id bigint, p_idempotency_key text, p_actor text, p_operation_id text, p_now timestamp with time zone",
    "erasure_step": "p_batch_size integer, p_now timestamp with time zone",
    "health_probe": "",
    "installation_suspension_set": "p_installation_id bigint, p_suspended boolean, p_now timestamp with time zone",
    "intake_accept_deliveries": "p_provider text, p_delivery_ids text[], p_events text[], p_actions text[], p_installation_ids bigint[], p_normalized jsonb[], p_payload_sha256s text[], p_payload_bytes integer[], p_acceptance_ms integer[], p_now timestamp with time zone",
    "intake_accept_delivery": "p_provider text, p_delivery_id text, p_event text, p_action text, p_installation_id bigint, p_actions jsonb, p_payload_sha256 text, p_payload_bytes integer, p_acceptance_ms integer, p_now timestamp with time zone",
    "job_claim": "p_worker text, p_limit integer, p_lease_seconds integer, p_max_attempts integer, p_now timestamp with time zone",
    "job_complete": "p_job_id bigint, p_lease_token uuid, p_outcome text, p_now timestamp with time zone",
    "job_fail": "p_job_id bigint, p_lease_token uuid, p_reason_code text, p_error_class text, p_max_attempts integer, p_now timestamp with time zone, p_not_before timestamp with time zone, p_final boolean",
    "job_release": "p_job_id bigint, p_lease_token uuid, p_now timestamp with time zone",
    "job_renew_leases": "p_ids bigint[], p_lease_tokens uuid[], p_lease_seconds integer, p_now timestamp with time zone",
    "legal_hold_place": "p_account_id bigint, p_reason text, p_reference text, p_idempotency_key text, p_actor text, p_now timestamp with time zone",
    "legal_hold_release": "p_account_id bigint, p_hold_id bigint, p_idempotency_key text, p_actor text, p_now timestamp with time zone",
    "lifecycle_job_run": "p_job_id bigint, p_lease_token uuid, p_now timestamp with time zone",
    "marketplace_apply_event": "p_delivery_id text, p_action text, p_account_id bigint, p_account_login text, p_account_type text, p_effective_date timestamp with time zone, p_payload_sha256 text, p_payload_bytes integer, p_now timestamp with time zone",
    "metrics_queues": "p_now timestamp with time zone",
    "outbox_claim": "p_worker text, p_limit integer, p_lease_seconds integer, p_max_attempts integer, p_now timestamp with time zone, p_item_id bigint",
    "outbox_fail": "p_item_id bigint, p_lease_token uuid, p_reason_code text, p_error_class text, p_max_attempts integer, p_not_before timestamp with time zone, p_final boolean, p_now timestamp with time zone",
    "outbox_pending_item": "p_release_run_id bigint, p_kind text",
    "outbox_report": "p_item_id bigint, p_lease_token uuid, p_outcome text, p_check_run_id bigint, p_workflow_run_id bigint, p_installation_id bigint, p_progress integer, p_published_conclusion text, p_comment_id bigint, p_decision text, p_now timestamp with time zone",
    "people_logins": "p_actors text[]",
    "person_permission_replace": "p_person_id bigint, p_repository_id bigint, p_role text, p_now timestamp with time zone",
    "person_reach": "p_person_id bigint, p_account_id bigint, p_installation_id bigint, p_repository_ids bigint[]",
    "rate_take": "p_limiter text, p_subject text, p_limit integer, p_now timestamp with time zone",
    "reconciler_heartbeat": "p_reconciler text, p_succeeded boolean, p_now timestamp with time zone",
    "reconciliation_claim": "p_kind text, p_worker text, p_limit integer, p_lease_seconds integer, p_max_attempts integer, p_now timestamp with time zone",
    "reconciliation_detect": "p_kind text, p_observation_seconds integer, p_deadline_seconds integer, p_now timestamp with time zone",
    "reconciliation_report": "p_item_id bigint, p_lease_token uuid, p_observation text, p_next_check_seconds integer, p_conclusion text, p_workflow_run_id bigint, p_now timestamp with time zone",
    "reconciliation_status": "p_now timestamp with time zone",
    "release_attempt_dispatch_ref": "p_attempt_ref text",
    "release_decision_publication": "p_item_id bigint, p_lease_token uuid, p_now timestamp with time zone",
    "release_result_accept": "p_attempt_ref text, p_repository_id bigint, p_workflow_run_id bigint, p_source text, p_result jsonb, p_digest text, p_api_token_id text, p_oidc_jti text, p_now timestamp with time zone",
    "repository_settings_get": "p_repository_id bigint",
    "repository_settings_update": "p_repository_id bigint, p_token_published_results boolean, p_actor text, p_now timestamp with time zone",
    "retention_purge_batch": "p_retention_days integer, p_batch_size integer, p_now timestamp with time zone",
    "review_record_approval_comment_v2": "p_review_id bigint, p_repository_ids bigint[], p_actor text, p_status text, p_break_glass boolean, p_break_glass_reason text, p_comment text, p_limit integer, p_now timestamp with time zone",
    "review_record_approval_v2": "p_review_id bigint, p_repository_ids bigint[], p_actor text, p_status text, p_break_glass boolean, p_break_glass_reason text, p_limit integer, p_now timestamp with time zone",
    "run_ingest": "p_repository_id bigint, p_api_token_id text, p_result jsonb, p_now timestamp with time zone",
    "run_result_publication": "p_run_result_id bigint",
    "schedule_claim": "p_names text[], p_worker text, p_lease_seconds integer, p_now timestamp with time zone, p_due_now text[]",
    "schedule_complete": "p_schedule_id bigint, p_lease_token uuid, p_interval_ms integer, p_outcome text, p_reason_code text, p_error_class text, p_now timestamp with time zone",
    "schedule_release": "p_schedule_id bigint, p_lease_token uuid, p_now timestamp with time zone",
    "schedule_renew_leases": "p_ids bigint[], p_lease_tokens uuid[], p_lease_seconds integer, p_now timestamp with time zone",
    "session_authenticate_v2": "p_token_sha256 bytea, p_client_key text, p_limit integer, p_now timestamp with time zone",
    "session_canceled_accounts": "p_session_id uuid",
    "session_create": "p_token_sha256 bytea, p_viewer_id bigint, p_viewer_login text, p_installation_ids bigint[], p_repository_ids bigint[], p_ttl_hours integer, p_now timestamp with time zone",
    "session_create_v2": "p_token_sha256 bytea, p_viewer_id bigint, p_viewer_login text, p_installation_ids bigint[], p_repository_ids bigint[], p_admin_repository_ids bigint[], p_write_repository_ids bigint[], p_ttl_hours integer, p_now timestamp with time zone",
    "session_delete": "p_token_sha256 bytea",
    "session_permission_replace": "p_session_id uuid, p_repository_id bigint, p_role text, p_now timestamp with time zone",
    "sessions_permissions_stale": "p_repository_ids bigint[]",
    "sign_in_begin": "p_cookie_sha256 bytea, p_state text, p_return_to text, p_ttl_seconds integer, p_now timestamp with time zone",
    "sign_in_finish": "p_cookie_sha256 bytea, p_state text, p_now timestamp with time zone",
    "slo_snapshot": "p_deadline_seconds integer, p_acceptance_window_seconds integer, p_failure_window_seconds integer, p_now timestamp with time zone",
    "supply_boards_enqueue": "p_now timestamp with time zone",
    "supply_observations_record": "p_installation_id bigint, p_parts jsonb, p_now timestamp with time zone",
    "supply_work_claim_v2": "p_worker text, p_limit integer, p_lease_seconds integer, p_max_attempts integer, p_max_age_hours integer, p_now timestamp with time zone",
    "supply_work_complete": "p_item_id bigint, p_lease_token uuid, p_unavailable_reason text, p_refreshed boolean, p_next_after timestamp with time zone, p_now timestamp with time zone",
    "token_create": "p_repository_id bigint, p_name text, p_scopes text[], p_duration_days integer, p_token_sha256 bytea, p_token_prefix text, p_created_by text, p_now timestamp with time zone",
    "token_create_v2": "p_repository_id bigint, p_name text, p_scopes text[], p_duration_days integer, p_token_sha256 bytea, p_token_prefix text, p_created_by text, p_person_id bigint, p_now timestamp with time zone",
    "token_list": "p_repository_id bigint, p_now timestamp with time zone",
    "token_repository_within": "p_token_id uuid, p_repository_ids bigint[]",
    "token_revoke": "p_token_id uuid, p_repository_id bigint, p_reason text, p_now timestamp with time zone",
    "token_revoke_v2": "p_token_id uuid, p_admin_repository_ids bigint[], p_own_repository_ids bigint[], p_person_id bigint, p_actor text, p_now timestamp with time zone",
    "token_verify_v2": "p_token_sha256 bytea, p_now timestamp with time zone",
    "waiver_create_v2": "p_repository_id bigint, p_repository_ids bigint[], p_fingerprint text, p_reason text, p_expires_at timestamp with time zone, p_actor text, p_max_days integer, p_limit integer, p_now timestamp with time zone",
    "waiver_create_v3": "p_repository_id bigint, p_repository_ids bigint[], p_fingerprint text, p_reason text, p_expires_at timestamp with time zone, p_actor text, p_max_days integer, p_limit integer, p_now timestamp with time zone",
    "waiver_delete": "p_repository_id bigint, p_repository_ids bigint[], p_waiver_id bigint, p_actor text, p_now timestamp with time zone",
    "watched_board_get": "p_repository_id bigint, p_now timestamp with time zone",
    "watched_board_supply": "p_board_id bigint, p_bom_run_id bigint, p_after_ordinal integer, p_limit integer",
    "watched_board_unwatch": "p_repository_id bigint, p_actor text, p_now timestamp with time zone",
    "watched_board_watch": "p_repository_id bigint, p_path text, p_actor text, p_now timestamp with time zone",
    "work_claim": "p_kinds text[], p_worker text, p_limit integer, p_lease_seconds integer, p_max_attempts integer, p_now timestamp with time zone",
    "work_complete": "p_item_id bigint, p_lease_token uuid, p_outcome text, p_now timestamp with time zone",
    "work_defer": "p_item_id bigint, p_lease_token uuid, p_run_after timestamp with time zone, p_now timestamp with time zone",
    "work_fail": "p_item_id bigint, p_lease_token uuid, p_reason_code text, p_error_class text, p_max_attempts integer, p_now timestamp with time zone, p_not_before timestamp with time zone, p_final boolean",
    "work_items_purge": "p_retention_days integer, p_batch_size integer, p_now timestamp with time zone",
    "work_release": "p_item_id bigint, p_lease_token uuid, p_now timestamp with time zone",
    "work_renew_leases": "p_ids bigint[], p_lease_tokens uuid[], p_lease_seconds integer, p_now timestamp with time zone",
}

#: Public functions only the previous release's processes call (sql/compat: they stay, granted,
#: until its contract migration); this release calls the successor named. No Python function.
PREVIOUS_RELEASE_ONLY: dict[str, str] = {
    "review_record_approval": "review_record_approval_v2",
    "supply_board_refreshed": "supply_work_complete",
    "supply_check_apply": "supply_work_complete",
    "token_verify": "token_verify_v2",
    "waiver_create": "waiver_create_v2",
}

-- Operator views: read state with psql (docs/operations.md, "Operator recipes").
-- Views never expose payloads, actions or secrets.

CREATE OR REPLACE VIEW ops.inbox AS
SELECT i.id, i.idempotency_key, i.event, i.action, i.installation_id, i.state, i.payload_bytes,
       i.received_at, i.updated_at, j.id AS job_id, j.status AS job_status, i.awaiting_job
  FROM boardready.webhook_inbox i
  LEFT JOIN boardready.lifecycle_jobs j ON j.inbox_id = i.id;

CREATE OR REPLACE VIEW ops.jobs AS
SELECT j.id, j.kind, j.action, j.installation_id, j.status, j.attempts, j.outcome, j.reason_code,
       j.error_class, j.run_after, j.leased_until, j.leased_by, j.failed_at, j.completed_at,
       j.created_at, j.updated_at
  FROM boardready.lifecycle_jobs j;

CREATE OR REPLACE VIEW ops.job_queue AS
SELECT status, count(*) AS jobs, min(created_at) AS oldest_created_at,
       max(now() - created_at) FILTER (WHERE status IN ('accepted', 'leased')) AS oldest_pending_age
  FROM boardready.lifecycle_jobs GROUP BY status
UNION ALL
-- Deliveries a worker has not turned into a job yet (jobs.sql, lifecycle_jobs_from_inbox).
SELECT 'awaiting_job', count(*), min(received_at), max(now() - received_at)
  FROM boardready.webhook_inbox WHERE awaiting_job HAVING count(*) > 0;

-- One shape for every kind of dead letter, so that each kind is one more
-- UNION ALL branch: (item_type, item_id, installation_id, repository,
-- reason_code, error_class, attempts, failed_at, replay_safe). The operator
-- API (dead_letter_list in replay.sql) pages over this view.
CREATE OR REPLACE VIEW ops.dead_letters AS
SELECT 'job'::text AS item_type, j.id AS item_id, j.installation_id, r.full_name AS repository,
       j.reason_code, j.error_class, j.attempts, j.failed_at,
       -- Handlers are upserts, so a job is safe to run again, except for a
       -- canceled account, whose new lifecycle jobs are blocked.
       NOT boardready_private.installation_account_canceled(j.installation_id, NULL) AS replay_safe
  FROM boardready.lifecycle_jobs j
  JOIN boardready.webhook_inbox i ON i.id = j.inbox_id
  LEFT JOIN boardready.repositories r ON r.id = (i.actions #>> '{repository,id}')::bigint
 WHERE j.status = 'dead_letter'
UNION ALL
SELECT 'outbox'::text, o.id, o.installation_id, r.full_name, o.reason_code, o.error_class, o.attempts, o.failed_at,
       -- An uncertain dispatch with no persisted workflow run id may have
       -- started a workflow: sending it again could run it twice.
       o.replay_safe AND NOT (o.kind = 'workflow_dispatch' AND a.dispatch_state = 'uncertain'
                              AND a.workflow_run_id IS NULL) AS replay_safe
  FROM boardready.outbox_items o
  JOIN boardready.release_runs rr ON rr.id = o.release_run_id
  JOIN boardready.repositories r ON r.id = rr.repository_id
  LEFT JOIN boardready.release_run_attempts a ON a.id = o.attempt_id
 WHERE o.status = 'dead_letter'
UNION ALL
-- Supply work (a pull request's supply check, a watched board's refresh):
-- fetching observations and applying findings again is idempotent.
SELECT 'supply'::text, w.id, w.installation_id, r.full_name, w.reason_code, w.error_class, w.attempts, w.failed_at,
       true AS replay_safe
  FROM boardready.work_items w
  LEFT JOIN boardready.supply_checks c ON w.kind = 'supply_check' AND c.run_result_id = w.subject_id
  LEFT JOIN boardready.watched_boards b ON b.id = CASE w.kind WHEN 'board_refresh' THEN w.subject_id
                                                              ELSE c.watched_board_id END
  LEFT JOIN boardready.repositories r ON r.id = b.repository_id
 WHERE w.status = 'dead_letter' AND w.kind IN ('supply_check', 'board_refresh');

-- Every work item (supply work, outbox calls, reconciliation items: 0032) and
-- the periodic schedules (0020_work_items_schedules).
CREATE OR REPLACE VIEW ops.work_items AS
SELECT w.id, w.kind, w.subject_id, w.installation_id, w.status, w.attempts, w.outcome, w.reason_code,
       w.error_class, w.run_after, w.leased_until, w.leased_by, w.failed_at, w.completed_at, w.created_at
  FROM boardready.work_items w;

CREATE OR REPLACE VIEW ops.schedules AS
SELECT s.name, s.status, s.run_after, s.leased_until, s.leased_by, s.outcome, s.reason_code, s.error_class,
       s.completed_at, s.updated_at
  FROM boardready.schedules s;

CREATE OR REPLACE VIEW ops.installations AS
SELECT i.id, a.login AS account, a.type AS account_type, i.status,
       count(r.id) FILTER (WHERE r.removed_at IS NULL) AS repositories, i.updated_at
  FROM boardready.installations i
  LEFT JOIN boardready.accounts a ON a.id = i.account_id
  LEFT JOIN boardready.repositories r ON r.installation_id = i.id
 GROUP BY i.id, a.login, a.type, i.status, i.updated_at;

CREATE OR REPLACE VIEW ops.release_runs AS
SELECT rr.id, r.full_name AS repository, rr.pr_number, rr.head_sha, rr.trigger_action, rr.status, rr.decision,
       rr.conclusion, rr.failure_reason, a.attempt_number, a.dispatch_state, a.workflow_run_id, rr.check_run_id,
       rr.check_run_published_at, rr.superseded_by, rr.started_at, rr.completed_at
  FROM boardready.release_runs rr
  JOIN boardready.repositories r ON r.id = rr.repository_id
  LEFT JOIN boardready.release_run_attempts a ON a.id = rr.current_attempt_id;

CREATE OR REPLACE VIEW ops.outbox AS
SELECT o.id, o.release_run_id, o.kind, o.installation_id, o.status, o.attempts, o.outcome, o.replay_safe,
       o.reason_code, o.error_class, o.run_after, o.leased_until, o.failed_at, o.completed_at, o.created_at
  FROM boardready.outbox_items o;

-- Accounts and access (0002_access). Token hashes are never shown.
CREATE OR REPLACE VIEW ops.marketplace_accounts AS
SELECT m.account_id, a.login AS account, a.type AS account_type, m.state, m.tier, m.effective_date,
       m.last_delivery_id, m.activated_at, m.canceled_at, m.updated_at
  FROM boardready.marketplace_accounts m JOIN boardready.accounts a ON a.id = m.account_id;

CREATE OR REPLACE VIEW ops.marketplace_deliveries AS
SELECT d.id, d.idempotency_key, d.action, d.account_id, d.effective_date, d.outcome, d.payload_bytes, d.received_at
  FROM boardready.marketplace_deliveries d;

CREATE OR REPLACE VIEW ops.erasure_requests AS
SELECT e.id, e.account_id, e.account_type, e.status, e.effective_date, e.due_at, e.blocked_by_legal_hold,
       e.requested_by_delivery, e.created_at, e.withdrawn_at, e.completed_at,
       -- Erasure (erasure.sql): the hold that blocked it, progress, rows deleted per table.
       e.blocked_hold_id, e.blocked_at, e.started_at, e.batches, e.deleted, e.audit_event_id
  FROM boardready.erasure_requests e;

CREATE OR REPLACE VIEW ops.api_tokens AS
SELECT t.id, r.full_name AS repository, t.repository_id, t.name, t.token_prefix, t.scopes, t.expires_at,
       t.created_by, t.created_at, t.revoked_at, t.revoked_reason, t.last_used_at
  FROM boardready.api_tokens t JOIN boardready.repositories r ON r.id = t.repository_id;

CREATE OR REPLACE VIEW ops.auth_failures AS
SELECT f.limiter, f.client_key, f.window_start, f.failures FROM boardready.auth_failures f;

CREATE OR REPLACE VIEW ops.audit_events AS
SELECT e.id, e.event_type, e.installation_id, e.actor, e.operation_id, e.item_type, e.item_id, e.occurred_at,
       e.details
  FROM boardready.audit_events e;

-- Run results (never findings' text or payloads): what was decided, and how
-- its check run publication went.
CREATE OR REPLACE VIEW ops.run_results AS
SELECT rr.id, r.full_name AS repository, rr.release_run_id, rr.source, rr.trigger_kind, rr.head_sha, rr.readiness,
       rr.score, rr.decision, rr.conclusion, rr.published_conclusion, rr.last_publication_error, rr.findings_count,
       rr.tool_name, rr.tool_version, rr.received_at
  FROM boardready.run_results rr JOIN boardready.repositories r ON r.id = rr.repository_id;

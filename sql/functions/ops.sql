-- Operator views: read state with psql (README, "Operator recipes").
-- Views never expose payloads, actions or secrets.

CREATE OR REPLACE VIEW ops.inbox AS
SELECT i.id, i.idempotency_key, i.event, i.action, i.installation_id, i.state, i.payload_bytes,
       i.received_at, i.updated_at, j.id AS job_id, j.status AS job_status
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
  FROM boardready.lifecycle_jobs GROUP BY status;

-- One shape for every kind of dead letter, so that each kind is one more
-- UNION ALL branch: (item_type, item_id, installation_id, repository,
-- reason_code, error_class, attempts, failed_at, replay_safe). The operator
-- API (dead_letter_list in replay.sql) pages over this view.
CREATE OR REPLACE VIEW ops.dead_letters AS
SELECT 'job'::text AS item_type, j.id AS item_id, j.installation_id, r.full_name AS repository,
       j.reason_code, j.error_class, j.attempts, j.failed_at,
       -- Handlers are upserts, so a job is safe to run again, except for a
       -- canceled account, whose new lifecycle jobs are blocked.
       NOT boardready.installation_account_canceled(j.installation_id, NULL) AS replay_safe
  FROM boardready.lifecycle_jobs j
  LEFT JOIN boardready.repositories r ON r.id = (j.actions #>> '{repository,id}')::bigint
 WHERE j.status = 'dead_letter';

CREATE OR REPLACE VIEW ops.installations AS
SELECT i.id, a.login AS account, a.type AS account_type, i.status,
       count(r.id) FILTER (WHERE r.removed_at IS NULL) AS repositories, i.updated_at
  FROM boardready.installations i
  LEFT JOIN boardready.accounts a ON a.id = i.account_id
  LEFT JOIN boardready.repositories r ON r.installation_id = i.id
 GROUP BY i.id, a.login, a.type, i.status, i.updated_at;

CREATE OR REPLACE VIEW ops.release_candidates AS
SELECT c.id, r.full_name AS repository, c.pr_number, c.head_sha, c.trigger_action, c.created_at
  FROM boardready.release_candidates c JOIN boardready.repositories r ON r.id = c.repository_id;

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
       e.requested_by_delivery, e.created_at, e.withdrawn_at, e.completed_at
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

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

CREATE OR REPLACE VIEW ops.dead_letters AS
SELECT 'job'::text AS item_type, j.id AS item_id, j.installation_id, r.full_name AS repository,
       j.reason_code, j.error_class, j.attempts, j.failed_at
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

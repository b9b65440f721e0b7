-- The code before 0017 makes a delivery's job in the intake: give the rows
-- still awaiting one their job now, so that none waits for reconciliation.
INSERT INTO boardready.lifecycle_jobs (inbox_id, idempotency_key, installation_id, kind, action, status,
                                       run_after, created_at, updated_at)
SELECT i.id, i.idempotency_key, i.installation_id, i.event, i.action, 'accepted', now(), now(), now()
  FROM boardready.webhook_inbox i
 WHERE i.awaiting_job AND NOT EXISTS (SELECT 1 FROM boardready.lifecycle_jobs j WHERE j.inbox_id = i.id);
DROP INDEX boardready.webhook_inbox_awaiting_job;
-- CASCADE: the operator views that show the column (ops.inbox, ops.job_queue)
-- go with it; applying the functions of the code rolled back to recreates them.
ALTER TABLE boardready.webhook_inbox DROP COLUMN awaiting_job CASCADE;

DROP TRIGGER webhook_inbox_id_is_stable ON boardready.webhook_inbox;
DROP TRIGGER webhook_inbox_keep_jobs_parent ON boardready.webhook_inbox;
DROP FUNCTION boardready.webhook_inbox_refuse_orphaning();
ALTER TABLE boardready.lifecycle_jobs
  ADD CONSTRAINT lifecycle_jobs_inbox_id_fkey FOREIGN KEY (inbox_id) REFERENCES boardready.webhook_inbox (id),
  ADD CONSTRAINT lifecycle_jobs_idempotency_key_key UNIQUE (idempotency_key);

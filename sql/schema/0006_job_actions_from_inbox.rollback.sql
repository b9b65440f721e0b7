ALTER TABLE boardready.lifecycle_jobs ADD COLUMN actions jsonb;
UPDATE boardready.lifecycle_jobs j SET actions = i.actions FROM boardready.webhook_inbox i WHERE i.id = j.inbox_id;
ALTER TABLE boardready.lifecycle_jobs ALTER COLUMN actions SET NOT NULL;

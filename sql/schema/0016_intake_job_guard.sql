-- The intake's job insert paid for two checks on every delivery that guard
-- nothing the schema does not already guarantee another way, measured in
-- backend CPU per intake call (see README, Benchmarks):
--
-- * lifecycle_jobs.idempotency_key UNIQUE: a job copies its inbox row's key,
--   and inbox_id is UNIQUE and the inbox key is UNIQUE, so a second index on
--   the copy can never refuse anything the other two let through.
-- * The foreign key lifecycle_jobs.inbox_id -> webhook_inbox(id): its check
--   locks the parent row (FOR KEY SHARE), which writes the freshly inserted
--   inbox row again and logs the lock, about a quarter of the intake's
--   database time. Jobs are created in two places only, each holding its inbox
--   row: the intake (inserted in the same transaction) and the inbox
--   reconciler (locked FOR UPDATE). What the key really protects against is
--   an inbox row deleted from under its job, so that is checked where it can
--   happen, on DELETE (the retention purge and account erasure, both batched),
--   once per statement, and an inbox id never changes.
-- depends: 0014_report_artifacts_reference

ALTER TABLE boardready.lifecycle_jobs
  DROP CONSTRAINT lifecycle_jobs_idempotency_key_key,
  DROP CONSTRAINT lifecycle_jobs_inbox_id_fkey;

CREATE FUNCTION boardready.webhook_inbox_refuse_orphaning() RETURNS trigger
LANGUAGE plpgsql SET search_path = boardready, pg_temp AS $$
BEGIN
  IF TG_OP = 'UPDATE' THEN
    RAISE EXCEPTION 'webhook inbox ids never change' USING ERRCODE = '23503';
  END IF;
  IF EXISTS (SELECT 1 FROM removed_inbox r JOIN lifecycle_jobs j ON j.inbox_id = r.id) THEN
    RAISE EXCEPTION 'webhook inbox rows with a lifecycle job cannot be deleted'
      USING ERRCODE = '23503', HINT = 'delete the job first (inbox_purge does)';
  END IF;
  RETURN NULL;
END $$;

CREATE TRIGGER webhook_inbox_keep_jobs_parent AFTER DELETE ON boardready.webhook_inbox
  REFERENCING OLD TABLE AS removed_inbox FOR EACH STATEMENT
  EXECUTE FUNCTION boardready.webhook_inbox_refuse_orphaning();
CREATE TRIGGER webhook_inbox_id_is_stable BEFORE UPDATE OF id ON boardready.webhook_inbox
  FOR EACH ROW WHEN (OLD.id IS DISTINCT FROM NEW.id)
  EXECUTE FUNCTION boardready.webhook_inbox_refuse_orphaning();

-- What sql/functions dropped on every migrate, kept here once: functions and
-- views an earlier release had under another signature (none of them is
-- called by the previous release, 0.6.0, whose own migrate dropped them
-- already). sql/functions holds the current truth only, so the trigger that
-- keeps the inbox state the projection of its job's status lives here too
-- (its function is jobs.sql's; created here first for a database migrated
-- from empty, whose functions are applied after the migrations). CREATE OR
-- REPLACE TRIGGER: no moment without it under the previous release's workers.
-- depends: 0020_work_items_schedules

DROP FUNCTION IF EXISTS boardready.job_fail(bigint, uuid, text, text, integer, timestamptz);
DROP FUNCTION IF EXISTS boardready.job_release(bigint, uuid, timestamptz);
DROP FUNCTION IF EXISTS boardready.outbox_skip(bigint, uuid, text, timestamptz);
DROP FUNCTION IF EXISTS boardready.outbox_check_run_created(bigint, uuid, bigint, timestamptz);
DROP FUNCTION IF EXISTS boardready.outbox_dispatch_succeeded(bigint, uuid, bigint, bigint, timestamptz);
DROP FUNCTION IF EXISTS boardready.outbox_dispatch_workflow_missing(bigint, uuid, timestamptz);
DROP FUNCTION IF EXISTS boardready.outbox_check_run_completed(bigint, uuid, timestamptz);
DROP FUNCTION IF EXISTS boardready.outbox_check_run_progress(bigint, uuid, integer, text, timestamptz);
DROP FUNCTION IF EXISTS boardready.outbox_comment_posted(bigint, uuid, bigint, timestamptz);
DROP FUNCTION IF EXISTS boardready.outbox_complete_leased(bigint, uuid, text, timestamptz);
DROP FUNCTION IF EXISTS boardready.outbox_dispatch_uncertain(bigint, uuid, text, timestamptz);
DROP FUNCTION IF EXISTS boardready.outbox_release(bigint, uuid, timestamptz);
DROP FUNCTION IF EXISTS boardready.reconciliation_detect_workflow(integer, integer, timestamptz);
DROP FUNCTION IF EXISTS boardready.reconciliation_detect_check_runs(integer, integer, timestamptz);
DROP FUNCTION IF EXISTS boardready.reconciliation_detect_lifecycle(integer, integer, timestamptz);
DROP FUNCTION IF EXISTS boardready.reconciliation_claim_workflow(text, integer, integer, integer, timestamptz);
DROP FUNCTION IF EXISTS boardready.reconciliation_claim_check_runs(text, integer, integer, integer, timestamptz);
DROP FUNCTION IF EXISTS boardready.reconciliation_claim_lifecycle(text, integer, integer, integer, timestamptz);
DROP FUNCTION IF EXISTS boardready.reconciliation_fail(bigint, uuid, text, text, integer, timestamptz);
DROP FUNCTION IF EXISTS boardready.reconciliation_release(bigint, uuid, timestamptz);
DROP FUNCTION IF EXISTS boardready.reconciliation_workflow_observe(bigint, uuid, text, text, bigint, integer, timestamptz);
DROP FUNCTION IF EXISTS boardready.reconciliation_check_run_observe(bigint, uuid, text, integer, timestamptz);
DROP FUNCTION IF EXISTS boardready.reconciliation_lifecycle_repair(bigint, uuid, timestamptz);
DROP FUNCTION IF EXISTS boardready.watched_board_supply(bigint);
DROP FUNCTION IF EXISTS boardready.purge_rows(text, text, bigint[], integer, text, boolean);
DROP FUNCTION IF EXISTS boardready.purge_step(jsonb, integer, text, text, bigint[], text, boolean);
DROP FUNCTION IF EXISTS boardready.run_results_purge(bigint[], integer);
DROP FUNCTION IF EXISTS boardready.release_runs_purge(bigint[], integer);
DROP FUNCTION IF EXISTS boardready.inbox_purge(bigint[], integer);
DROP FUNCTION IF EXISTS boardready.retention_runs(timestamptz, integer);
DROP FUNCTION IF EXISTS boardready.retention_ingested_results(timestamptz, integer);
DROP FUNCTION IF EXISTS boardready.retention_inbox(timestamptz, integer);
DROP FUNCTION IF EXISTS boardready.retention_runs(timestamptz, timestamptz, bigint, integer);
DROP FUNCTION IF EXISTS boardready.retention_ingested_results(timestamptz, timestamptz, bigint, integer);
DROP FUNCTION IF EXISTS boardready.retention_inbox(timestamptz, timestamptz, bigint, integer);
DROP FUNCTION IF EXISTS boardready.dead_letter_list(bigint, timestamptz, integer);
DROP FUNCTION IF EXISTS boardready.dead_letter_replay_job(bigint, bigint, timestamptz);
DROP FUNCTION IF EXISTS boardready.dead_letter_replay_outbox(bigint, bigint, timestamptz);

CREATE OR REPLACE FUNCTION boardready.lifecycle_job_project_inbox()
RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE boardready.webhook_inbox
     SET state = boardready.lifecycle_inbox_state_for(NEW.status), updated_at = NEW.updated_at
   WHERE id = NEW.inbox_id AND state IS DISTINCT FROM boardready.lifecycle_inbox_state_for(NEW.status);
  RETURN NULL;
END $$;

CREATE OR REPLACE TRIGGER lifecycle_job_project_inbox
  AFTER UPDATE OF status ON boardready.lifecycle_jobs
  FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status)
  EXECUTE FUNCTION boardready.lifecycle_job_project_inbox();

-- Views over these tables, and functions whose signature names their row
-- types, are re-created by the next migrate.
DROP FUNCTION IF EXISTS boardready.outbox_complete_leased(bigint, uuid, text, timestamptz);
DROP VIEW IF EXISTS ops.dead_letters;
DROP VIEW IF EXISTS ops.release_runs;
DROP VIEW IF EXISTS ops.outbox;
DROP VIEW IF EXISTS boardready.reconciliation_workflow_subjects;
DROP VIEW IF EXISTS boardready.reconciliation_check_run_subjects;
DROP TABLE boardready.outbox_items;
ALTER TABLE boardready.release_runs DROP CONSTRAINT release_runs_current_attempt;
DROP TABLE boardready.release_run_attempts;
DROP TABLE boardready.release_runs;
CREATE TABLE boardready.release_candidates (
  id             bigserial PRIMARY KEY,
  repository_id  bigint NOT NULL REFERENCES boardready.repositories (id),
  pr_number      integer NOT NULL,
  head_sha       text NOT NULL,
  trigger_action text NOT NULL,
  job_id         bigint NOT NULL REFERENCES boardready.lifecycle_jobs (id),
  created_at     timestamptz NOT NULL,
  UNIQUE (repository_id, pr_number, head_sha)
);

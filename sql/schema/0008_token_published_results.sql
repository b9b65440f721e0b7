-- Only the signed workflow callback decides a release run, unless the
-- repository opted in to token-published results (POST /api/v1/runs/result);
-- even then the signed result, when it comes, supersedes the token's.
-- depends: 0006_job_actions_from_inbox
ALTER TABLE boardready.repositories ADD COLUMN token_published_results boolean NOT NULL DEFAULT false;

-- One current result per attempt; a superseded one is kept as evidence.
ALTER TABLE boardready.run_results ADD COLUMN superseded_at timestamptz;
ALTER TABLE boardready.run_results DROP CONSTRAINT run_results_attempt_id_key;
CREATE UNIQUE INDEX run_results_current_per_attempt ON boardready.run_results (attempt_id)
  WHERE superseded_at IS NULL;

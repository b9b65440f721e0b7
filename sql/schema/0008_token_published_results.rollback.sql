DROP INDEX boardready.run_results_current_per_attempt;
UPDATE boardready.run_results SET attempt_id = NULL WHERE superseded_at IS NOT NULL;
ALTER TABLE boardready.run_results ADD CONSTRAINT run_results_attempt_id_key UNIQUE (attempt_id);
ALTER TABLE boardready.run_results DROP COLUMN superseded_at;
ALTER TABLE boardready.repositories DROP COLUMN token_published_results;

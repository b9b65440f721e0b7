-- A failed check-run reconciliation is recorded on the release run itself,
-- so that a run that has no result (it failed before one came) still says
-- why its check run could not be put right. run_results.last_publication_error
-- stays, as the previous release reads and writes it.
-- depends: 0018_authority
ALTER TABLE boardready.release_runs ADD COLUMN last_publication_error text;

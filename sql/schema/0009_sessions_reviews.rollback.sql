-- Views over these tables are re-created by the next migrate.
DROP VIEW IF EXISTS ops.sessions;
DROP VIEW IF EXISTS ops.reviews;
DROP VIEW IF EXISTS ops.waivers;
REVOKE SELECT ON boardready.release_runs, boardready.repositories, boardready.run_results, boardready.run_findings
  FROM boardready_api;
DROP TABLE boardready.waivers;
DROP TABLE boardready.review_approvals;
DROP TABLE boardready.reviews;
DELETE FROM boardready.outbox_items WHERE kind = 'check_run_decision';
ALTER TABLE boardready.outbox_items DROP CONSTRAINT outbox_items_kind_check;
ALTER TABLE boardready.outbox_items ADD CONSTRAINT outbox_items_kind_check
  CHECK (kind IN ('check_run_create', 'workflow_dispatch', 'check_run_complete', 'pr_comment'));
DROP INDEX boardready.release_runs_repository_listing;
ALTER TABLE boardready.release_runs DROP COLUMN published_decision, DROP COLUMN decision_updates;
ALTER TABLE boardready.pull_requests DROP COLUMN author_id, DROP COLUMN author_login;
DROP TABLE boardready.sessions;
DROP TABLE boardready.sign_in_attempts;

DROP VIEW IF EXISTS ops.run_results;
ALTER TABLE boardready.outbox_items DROP COLUMN run_result_id;
ALTER TABLE boardready.outbox_items DROP COLUMN progress;
DROP TABLE boardready.pull_request_comments;
DROP TABLE boardready.run_findings;
DROP TABLE boardready.run_results;

REVOKE SELECT ON boardready.review_approvals, boardready.pull_requests FROM boardready_api;
DROP FUNCTION IF EXISTS boardready.artifact_store(text, bigint, bigint, text, bytea, integer, timestamptz);
DROP TABLE boardready.report_artifacts;

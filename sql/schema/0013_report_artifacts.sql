-- Report artifacts: the checker's HTML report, uploaded by the readiness
-- workflow with its signed result and served only through capability links
-- (app/web/pages/artifacts.py). The bytes live here, capped by the API at
-- SERVICE_ARTIFACT_MAX_BYTES; deleting the run result or the release run
-- (retention) deletes its report with it.
-- depends: 0010_reconciliation 0009_sessions_reviews

CREATE TABLE boardready.report_artifacts (
  id              bigserial PRIMARY KEY,
  run_result_id   bigint NOT NULL UNIQUE REFERENCES boardready.run_results (id) ON DELETE CASCADE,
  release_run_id  bigint NOT NULL REFERENCES boardready.release_runs (id) ON DELETE CASCADE,
  repository_id   bigint NOT NULL REFERENCES boardready.repositories (id),
  media_type      text NOT NULL CHECK (media_type = 'text/html'),
  sha256          text NOT NULL CHECK (sha256 ~ '^[0-9a-f]{64}$'),
  size_bytes      integer NOT NULL CHECK (size_bytes BETWEEN 1 AND 67108864),
  content         bytea NOT NULL CHECK (octet_length(content) = size_bytes),
  created_at      timestamptz NOT NULL
);
CREATE INDEX report_artifacts_release_run ON boardready.report_artifacts (release_run_id);

-- What the pages' named read queries (sql/queries/) read directly: the review
-- history and the pull request beside the run; artifacts only by id, after
-- the capability link was verified.
GRANT SELECT ON boardready.review_approvals, boardready.pull_requests, boardready.report_artifacts
  TO boardready_api;

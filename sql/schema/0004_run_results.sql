-- Run results and their findings: ingested runs (POST /api/v1/runs) and the
-- results of release runs (the workflow callback or POST /api/v1/runs/result).
-- depends: 0003_release_runs

CREATE TABLE boardready.run_results (
  id                      bigserial PRIMARY KEY,
  repository_id           bigint NOT NULL REFERENCES boardready.repositories (id),
  release_run_id          bigint REFERENCES boardready.release_runs (id),
  attempt_id              bigint UNIQUE REFERENCES boardready.release_run_attempts (id),  -- one result per attempt
  source                  text NOT NULL CHECK (source IN ('ingest', 'bearer_result', 'workflow_callback')),
  trigger_kind            text NOT NULL,
  head_sha                text,
  readiness               text NOT NULL CHECK (readiness IN ('ready', 'at-risk', 'blocked')),
  score                   integer NOT NULL CHECK (score BETWEEN 0 AND 100),
  decision                text NOT NULL CHECK (decision IN ('PASS', 'FAIL', 'CONDITIONAL', 'UNKNOWN')),
  conclusion              text NOT NULL,          -- the check run conclusion the decision maps to
  tool_name               text NOT NULL,
  tool_version            text NOT NULL,
  kicad_version           text,
  findings_count          integer NOT NULL,
  digest                  text,                   -- sha256 of the RFC 8785 form of the result
  api_token_id            text,                   -- who sent it, for ingest and bearer results
  oidc_jti                text,                   -- which ID token carried it, for the workflow callback
  -- Publication: the exact conclusion used when the check run was first
  -- completed, and the last error seen while publishing.
  published_conclusion    text,
  last_publication_error  text,
  received_at             timestamptz NOT NULL
);
CREATE INDEX run_results_repository ON boardready.run_results (repository_id, received_at DESC);
CREATE INDEX run_results_release_run ON boardready.run_results (release_run_id);

CREATE TABLE boardready.run_findings (
  run_result_id  bigint NOT NULL REFERENCES boardready.run_results (id) ON DELETE CASCADE,
  ordinal        integer NOT NULL,               -- the order the checker emitted: annotation batches follow it
  rule_id        text NOT NULL,
  severity       text NOT NULL CHECK (severity IN ('error', 'high', 'medium', 'low', 'info')),
  message        text NOT NULL,
  fingerprint    text NOT NULL,
  title          text,
  path           text,
  start_line     integer,
  end_line       integer,
  start_column   integer,
  end_column     integer,
  PRIMARY KEY (run_result_id, ordinal)
);

-- The one pull request comment per pull request, updated on later results.
CREATE TABLE boardready.pull_request_comments (
  repository_id  bigint NOT NULL,
  pr_number      integer NOT NULL,
  comment_id     bigint NOT NULL,
  updated_at     timestamptz NOT NULL,
  PRIMARY KEY (repository_id, pr_number)
);

ALTER TABLE boardready.outbox_items ADD COLUMN progress integer NOT NULL DEFAULT 0;  -- annotation batches sent
ALTER TABLE boardready.outbox_items ADD COLUMN run_result_id bigint REFERENCES boardready.run_results (id);

-- Sign-in sessions, reviews with their approvals, waivers, the release
-- decision that combines them, and the run listing's index.
-- depends: 0006_job_actions_from_inbox

-- A sign-in in progress: the pre-session cookie's SHA-256, the OAuth state it
-- is bound to and where to go afterwards. The PKCE verifier is derived from
-- the cookie value, so nothing here can finish a sign-in. One use, 10 minutes.
CREATE TABLE boardready.sign_in_attempts (
  cookie_sha256  bytea PRIMARY KEY CHECK (length(cookie_sha256) = 32),
  state          text NOT NULL CHECK (length(state) BETWEEN 16 AND 200),
  return_to      text NOT NULL CHECK (return_to ~ '^/' AND length(return_to) <= 2000),
  created_at     timestamptz NOT NULL,
  expires_at     timestamptz NOT NULL
);
CREATE INDEX sign_in_attempts_expiry ON boardready.sign_in_attempts (expires_at);

-- A signed-in browser session. Only the SHA-256 of the cookie is stored, with
-- the viewer and what the viewer could reach on the code host at sign-in.
-- No code host token, ever.
CREATE TABLE boardready.sessions (
  id                uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  token_sha256      bytea NOT NULL UNIQUE CHECK (length(token_sha256) = 32),
  viewer_id         bigint NOT NULL,
  viewer_login      text NOT NULL CHECK (length(viewer_login) BETWEEN 1 AND 100),
  installation_ids  bigint[] NOT NULL,
  repository_ids    bigint[] NOT NULL,
  created_at        timestamptz NOT NULL,
  expires_at        timestamptz NOT NULL
);
CREATE INDEX sessions_expiry ON boardready.sessions (expires_at);

-- Who opened the pull request (host-user:<id> becomes the review's creator).
ALTER TABLE boardready.pull_requests ADD COLUMN author_id bigint, ADD COLUMN author_login text;

-- release_runs.decision is the release decision (readiness, waivers and
-- review together), kept current by every change of its inputs.
-- published_decision is the one the check run was last updated to after its
-- first completion; decision_updates numbers those updates' outbox keys.
ALTER TABLE boardready.release_runs
  ADD COLUMN published_decision text CHECK (published_decision IN ('PASS', 'FAIL', 'CONDITIONAL', 'UNKNOWN')),
  ADD COLUMN decision_updates integer NOT NULL DEFAULT 0;
-- The run listing merges one keyset scan per visible repository.
CREATE INDEX release_runs_repository_listing ON boardready.release_runs (repository_id, started_at DESC, id DESC);

ALTER TABLE boardready.outbox_items DROP CONSTRAINT outbox_items_kind_check;
ALTER TABLE boardready.outbox_items ADD CONSTRAINT outbox_items_kind_check
  CHECK (kind IN ('check_run_create', 'workflow_dispatch', 'check_run_complete', 'pr_comment', 'check_run_decision'));

-- One review per release run, opened when its result is accepted.
CREATE TABLE boardready.reviews (
  id              bigserial PRIMARY KEY,
  release_run_id  bigint NOT NULL UNIQUE REFERENCES boardready.release_runs (id),
  repository_id   bigint NOT NULL REFERENCES boardready.repositories (id),
  created_by      text NOT NULL CHECK (created_by ~ '^(host-user:[0-9]+|token:[0-9a-f-]{36}|operator:[A-Za-z0-9._:-]+|system)$'),
  decision        text NOT NULL DEFAULT 'pending' CHECK (decision IN ('pending', 'approved', 'changes_requested')),
  created_at      timestamptz NOT NULL,
  updated_at      timestamptz NOT NULL
);
CREATE INDEX reviews_repository ON boardready.reviews (repository_id);

-- One standing approval per actor and review; a new status replaces the old.
CREATE TABLE boardready.review_approvals (
  id                  bigserial PRIMARY KEY,
  review_id           bigint NOT NULL REFERENCES boardready.reviews (id),
  approver_id         text NOT NULL,
  status              text NOT NULL CHECK (status IN ('approved', 'changes_requested')),
  break_glass         boolean NOT NULL DEFAULT false,
  break_glass_reason  text CHECK (length(break_glass_reason) BETWEEN 10 AND 1000),
  created_at          timestamptz NOT NULL,
  updated_at          timestamptz NOT NULL,
  UNIQUE (review_id, approver_id),
  CHECK (break_glass = (break_glass_reason IS NOT NULL))
);

-- A finding fingerprint that no longer counts toward the decisions of the
-- repository's runs, until it expires or is deleted (deleted rows are kept).
CREATE TABLE boardready.waivers (
  id             bigserial PRIMARY KEY,
  repository_id  bigint NOT NULL REFERENCES boardready.repositories (id),
  fingerprint    text NOT NULL CHECK (length(fingerprint) BETWEEN 1 AND 200),
  reason         text NOT NULL CHECK (length(reason) BETWEEN 1 AND 1000),
  expires_at     timestamptz,
  created_by     text NOT NULL,
  created_at     timestamptz NOT NULL,
  deleted_at     timestamptz,
  deleted_by     text,
  CHECK ((deleted_at IS NULL) = (deleted_by IS NULL))
);
-- At most one standing waiver per fingerprint (an expired one is retired when replaced).
CREATE UNIQUE INDEX waivers_standing ON boardready.waivers (repository_id, fingerprint) WHERE deleted_at IS NULL;
CREATE INDEX waivers_repository ON boardready.waivers (repository_id, id);

-- What the API's named read queries (sql/queries/) read directly.
GRANT SELECT ON boardready.release_runs, boardready.repositories, boardready.reviews, boardready.run_results,
  boardready.run_findings, boardready.waivers TO boardready_api;

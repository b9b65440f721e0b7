-- Release runs, their attempts, and the outbox of code host calls.
-- depends: 0001_spine

-- One readiness check of one pull request head. A newer head supersedes it.
CREATE TABLE boardready.release_runs (
  id                     bigserial PRIMARY KEY,
  repository_id          bigint NOT NULL REFERENCES boardready.repositories (id),
  installation_id        bigint NOT NULL REFERENCES boardready.installations (id),
  pr_number              integer NOT NULL,
  head_sha               text NOT NULL,
  trigger_action         text NOT NULL,
  status                 text NOT NULL CHECK (status IN ('queued', 'dispatched', 'completed', 'failed',
                                                         'timed_out', 'superseded')),
  decision               text CHECK (decision IN ('PASS', 'FAIL', 'CONDITIONAL', 'UNKNOWN')),
  conclusion             text,
  failure_reason         text,                   -- stable code, e.g. workflow_missing
  current_attempt_id     bigint,                 -- FK added below (circular)
  superseded_by          bigint REFERENCES boardready.release_runs (id),
  check_run_id           bigint,                 -- the code host's check run, once created
  check_run_published_at timestamptz,            -- when the terminal check run state was published
  started_at             timestamptz NOT NULL,
  completed_at           timestamptz,
  updated_at             timestamptz NOT NULL
);
-- At most one open (not superseded) run per pull request head.
CREATE UNIQUE INDEX release_runs_head ON boardready.release_runs (repository_id, pr_number, head_sha)
  WHERE status <> 'superseded';
CREATE INDEX release_runs_pull_request ON boardready.release_runs (repository_id, pr_number, id DESC);
CREATE INDEX release_runs_listing ON boardready.release_runs (started_at DESC, id DESC);

CREATE TABLE boardready.release_run_attempts (
  id                     bigserial PRIMARY KEY,
  release_run_id         bigint NOT NULL REFERENCES boardready.release_runs (id),
  attempt_number         integer NOT NULL,
  nonce                  text NOT NULL,          -- random, binds the dispatch inputs to this attempt
  dispatch_state         text NOT NULL DEFAULT 'pending'
                         CHECK (dispatch_state IN ('pending', 'dispatched', 'uncertain', 'failed', 'skipped')),
  workflow_run_id        bigint,                 -- persisted from the dispatch answer
  host_installation_id   bigint,
  dispatched_at          timestamptz,
  lease_closed_at        timestamptz,            -- the result callback closed it
  created_at             timestamptz NOT NULL,
  UNIQUE (release_run_id, attempt_number)
);
ALTER TABLE boardready.release_runs
  ADD CONSTRAINT release_runs_current_attempt FOREIGN KEY (current_attempt_id)
  REFERENCES boardready.release_run_attempts (id) DEFERRABLE INITIALLY DEFERRED;

-- Pending code host calls: same lease, retry, backoff and dead-letter rules as
-- lifecycle jobs. `params` holds only non-secret call parameters.
CREATE TABLE boardready.outbox_items (
  id               bigserial PRIMARY KEY,
  release_run_id   bigint NOT NULL REFERENCES boardready.release_runs (id),
  attempt_id       bigint REFERENCES boardready.release_run_attempts (id),
  installation_id  bigint NOT NULL,
  kind             text NOT NULL CHECK (kind IN ('check_run_create', 'workflow_dispatch', 'check_run_complete',
                                                 'pr_comment')),
  idempotency_key  text NOT NULL UNIQUE,          -- a repeat never creates a second check run or comment
  params           jsonb NOT NULL DEFAULT '{}',
  status           text NOT NULL CHECK (status IN ('accepted', 'leased', 'completed', 'dead_letter')),
  attempts         integer NOT NULL DEFAULT 0,
  run_after        timestamptz NOT NULL,
  leased_until     timestamptz,
  lease_token      uuid,
  leased_by        text,
  outcome          text,
  replay_safe      boolean NOT NULL DEFAULT true,
  reason_code      text,
  error_class      text,
  failed_at        timestamptz,
  completed_at     timestamptz,
  created_at       timestamptz NOT NULL,
  updated_at       timestamptz NOT NULL,
  CHECK ((status = 'leased') = (lease_token IS NOT NULL AND leased_until IS NOT NULL))
);
CREATE INDEX outbox_items_due ON boardready.outbox_items (run_after, id) WHERE status = 'accepted';
CREATE INDEX outbox_items_leased ON boardready.outbox_items (leased_until) WHERE status = 'leased';
CREATE INDEX outbox_items_dead ON boardready.outbox_items (installation_id, failed_at) WHERE status = 'dead_letter';
CREATE INDEX outbox_items_run ON boardready.outbox_items (release_run_id);

-- Release runs replace the release candidates the spine recorded.
DROP VIEW IF EXISTS ops.release_candidates;
DROP TABLE boardready.release_candidates;

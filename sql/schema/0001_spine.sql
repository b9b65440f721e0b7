-- Service spine: the boardready schema, the API role, installations and
-- repositories, the durable webhook inbox and lifecycle jobs.
-- depends:

DO $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'boardready_api') THEN
    CREATE ROLE boardready_api NOLOGIN;
  END IF;
END $$;
-- The owner hands the API role to its pool connections with SET ROLE.
GRANT boardready_api TO CURRENT_USER;

CREATE SCHEMA boardready;
CREATE SCHEMA ops;
GRANT USAGE ON SCHEMA boardready, ops TO boardready_api;

CREATE TABLE boardready.accounts (
  id          bigint PRIMARY KEY,               -- the code host's account (user or organization) id
  login       text NOT NULL,
  type        text NOT NULL CHECK (type IN ('User', 'Organization', 'Bot', 'Enterprise', 'Unknown')),
  created_at  timestamptz NOT NULL DEFAULT now(),
  updated_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE boardready.installations (
  id            bigint PRIMARY KEY,             -- the code host's installation id
  account_id    bigint REFERENCES boardready.accounts (id),
  status        text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'suspended', 'deleted')),
  created_at    timestamptz NOT NULL DEFAULT now(),
  updated_at    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX installations_account ON boardready.installations (account_id);

CREATE TABLE boardready.repositories (
  id               bigint PRIMARY KEY,          -- the code host's repository id
  installation_id  bigint NOT NULL REFERENCES boardready.installations (id),
  full_name        text NOT NULL,
  private          boolean,
  removed_at       timestamptz,                 -- removed from the installation (kept for history)
  created_at       timestamptz NOT NULL DEFAULT now(),
  updated_at       timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX repositories_installation ON boardready.repositories (installation_id);

-- One row per delivery ever accepted. The raw payload is not kept: only its
-- digest and size as evidence, and the normalized actions a job needs.
CREATE TABLE boardready.webhook_inbox (
  id               bigserial PRIMARY KEY,
  provider         text NOT NULL,
  delivery_id      text NOT NULL,
  idempotency_key  text NOT NULL UNIQUE,        -- <provider>:<delivery_id>
  event            text NOT NULL,
  action           text,
  installation_id  bigint,
  actions          jsonb NOT NULL,
  payload_sha256   text NOT NULL,
  payload_bytes    integer NOT NULL,
  state            text NOT NULL CHECK (state IN ('accepted', 'processing', 'processed', 'dead_letter')),
  received_at      timestamptz NOT NULL,
  updated_at       timestamptz NOT NULL
);
CREATE INDEX webhook_inbox_received ON boardready.webhook_inbox (received_at);
CREATE INDEX webhook_inbox_installation ON boardready.webhook_inbox (installation_id, received_at);

CREATE TABLE boardready.lifecycle_jobs (
  id               bigserial PRIMARY KEY,
  inbox_id         bigint NOT NULL UNIQUE REFERENCES boardready.webhook_inbox (id),
  idempotency_key  text NOT NULL UNIQUE,
  installation_id  bigint,
  kind             text NOT NULL,
  action           text,
  actions          jsonb NOT NULL,
  status           text NOT NULL CHECK (status IN ('accepted', 'leased', 'completed', 'dead_letter')),
  attempts         integer NOT NULL DEFAULT 0,  -- claims since creation or the last replay
  run_after        timestamptz NOT NULL,
  leased_until     timestamptz,
  lease_token      uuid,
  leased_by        text,
  outcome          text,                        -- what the handler did, e.g. 'installation_created', 'noop'
  reason_code      text,                        -- stable code of the last failure
  error_class      text,                        -- exception class of the last failure, never its message
  failed_at        timestamptz,
  completed_at     timestamptz,
  created_at       timestamptz NOT NULL,
  updated_at       timestamptz NOT NULL,
  CHECK ((status = 'leased') = (lease_token IS NOT NULL AND leased_until IS NOT NULL))
);
-- Claimable rows only: new or backed-off jobs by due time, and leases that may expire.
CREATE INDEX lifecycle_jobs_due ON boardready.lifecycle_jobs (run_after, id) WHERE status = 'accepted';
CREATE INDEX lifecycle_jobs_leased ON boardready.lifecycle_jobs (leased_until) WHERE status = 'leased';
CREATE INDEX lifecycle_jobs_dead ON boardready.lifecycle_jobs (installation_id, failed_at) WHERE status = 'dead_letter';

-- Open pull requests and their current head, kept by the pull_request handler.
CREATE TABLE boardready.pull_requests (
  repository_id  bigint NOT NULL REFERENCES boardready.repositories (id),
  number         integer NOT NULL,
  head_sha       text NOT NULL,
  head_ref       text,
  base_ref       text,
  state          text NOT NULL,
  draft          boolean NOT NULL DEFAULT false,
  updated_at     timestamptz NOT NULL,
  PRIMARY KEY (repository_id, number)
);

-- A pull request head that should be checked for readiness; the code host
-- capability turns each into a release run and dispatches the workflow.
CREATE TABLE boardready.release_candidates (
  id             bigserial PRIMARY KEY,
  repository_id  bigint NOT NULL REFERENCES boardready.repositories (id),
  pr_number      integer NOT NULL,
  head_sha       text NOT NULL,
  trigger_action text NOT NULL,
  job_id         bigint NOT NULL REFERENCES boardready.lifecycle_jobs (id),
  created_at     timestamptz NOT NULL,
  UNIQUE (repository_id, pr_number, head_sha)
);

-- Reconciliation items (workflow state, check run publication, inbox and job
-- drift), the reconcilers' poll and success times shared by every replica,
-- and each delivery's server-side acceptance time for the SLO policy.
-- depends: 0006_job_actions_from_inbox

-- One thing a reconciler watches until it converges or fails closed. The
-- queue columns follow lifecycle_jobs and outbox_items, so the lease rules of
-- queue.sql apply: run_after is the next check, attempts counts the claims
-- since the last observation, and a lease is checked on every report.
CREATE TABLE boardready.reconciliation_items (
  id               bigserial PRIMARY KEY,
  kind             text NOT NULL CHECK (kind IN ('workflow_attempt', 'release_run', 'lifecycle_inbox')),
  subject_id       bigint NOT NULL,              -- the attempt, release run or inbox row it watches
  installation_id  bigint,
  reason_code      text NOT NULL,                -- why it was detected, then the latest observation's reason
  deadline_at      timestamptz NOT NULL,         -- fail closed at or after it
  status           text NOT NULL CHECK (status IN ('accepted', 'leased', 'completed', 'dead_letter')),
  attempts         integer NOT NULL DEFAULT 0,
  observations     integer NOT NULL DEFAULT 0,
  run_after        timestamptz NOT NULL,         -- next check
  leased_until     timestamptz,
  lease_token      uuid,
  leased_by        text,
  outcome          text,                         -- the terminal outcome
  error_class      text,
  failed_at        timestamptz,
  completed_at     timestamptz,
  created_at       timestamptz NOT NULL,
  updated_at       timestamptz NOT NULL,
  CHECK ((status = 'leased') = (lease_token IS NOT NULL AND leased_until IS NOT NULL))
);
-- One open item per subject: two replicas detecting the same drift create one.
CREATE UNIQUE INDEX reconciliation_items_open ON boardready.reconciliation_items (kind, subject_id)
  WHERE status IN ('accepted', 'leased');
CREATE INDEX reconciliation_items_due ON boardready.reconciliation_items (kind, run_after, id) WHERE status = 'accepted';
CREATE INDEX reconciliation_items_leased ON boardready.reconciliation_items (leased_until) WHERE status = 'leased';
CREATE INDEX reconciliation_items_subject ON boardready.reconciliation_items (kind, subject_id);

-- When each reconciler last looked and last finished a pass without error,
-- written by whichever replica did it, so every replica reports the fleet's truth.
CREATE TABLE boardready.reconciler_heartbeats (
  reconciler       text PRIMARY KEY CHECK (reconciler IN ('workflow', 'check_run', 'lifecycle')),
  last_poll_at     timestamptz,
  last_success_at  timestamptz,
  updated_at       timestamptz NOT NULL
);

-- Milliseconds from the request's arrival to the call that stored it.
ALTER TABLE boardready.webhook_inbox ADD COLUMN acceptance_ms integer;

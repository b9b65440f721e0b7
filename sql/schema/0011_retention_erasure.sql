-- Retention of run summaries, erasure of canceled accounts, and legal holds
-- placed and released through the operator API.
-- depends: 0010_reconciliation 0009_sessions_reviews

-- An erasure request's life: pending (queued by a cancellation) -> erasing
-- (due, not held: deleted batch by batch) -> completed; blocked_legal_hold
-- while an active hold stops it once due (back to pending or erasing when the
-- last hold is released); withdrawn by a newer purchase before it completes.
ALTER TABLE boardready.erasure_requests DROP CONSTRAINT erasure_requests_status_check;
ALTER TABLE boardready.erasure_requests ADD CONSTRAINT erasure_requests_status_check
  CHECK (status IN ('pending', 'blocked_legal_hold', 'erasing', 'withdrawn', 'completed'));
ALTER TABLE boardready.erasure_requests
  ADD COLUMN blocked_hold_id bigint REFERENCES boardready.legal_holds (id),  -- the hold that blocked it last
  ADD COLUMN blocked_at      timestamptz,
  ADD COLUMN started_at      timestamptz,                                 -- the first batch
  ADD COLUMN batches         integer NOT NULL DEFAULT 0,
  ADD COLUMN deleted         jsonb NOT NULL DEFAULT '{}',                 -- rows deleted per table
  ADD COLUMN audit_event_id  uuid REFERENCES boardready.audit_events (id); -- control_plane.account_erasure_completed
-- One open request per account, whatever stage it is in: a repeated
-- cancellation moves the open one's deadline (marketplace.sql).
DROP INDEX boardready.erasure_requests_one_pending;
CREATE UNIQUE INDEX erasure_requests_one_open ON boardready.erasure_requests (account_id)
  WHERE status IN ('pending', 'blocked_legal_hold', 'erasing');
DROP INDEX boardready.erasure_requests_due;
CREATE INDEX erasure_requests_due ON boardready.erasure_requests (due_at) WHERE status IN ('pending', 'erasing');

-- Who placed and released a hold (the operator actor), and the operator's
-- optional reference (a case number). The reason is operator text: it stays on
-- the hold and never enters an audit event.
ALTER TABLE boardready.legal_holds
  ADD COLUMN reference   text CHECK (length(reference) BETWEEN 1 AND 200),
  ADD COLUMN placed_by   text,
  ADD COLUMN released_by text,
  ADD CONSTRAINT legal_holds_reason_length CHECK (length(reason) BETWEEN 1 AND 1000),
  ADD CONSTRAINT legal_holds_released CHECK (active = (released_at IS NULL));
CREATE INDEX legal_holds_account ON boardready.legal_holds (account_id, id DESC);

-- An operator's hold request by its Idempotency-Key, as replay_requests is for
-- replays: the same key for the same request answers the same hold and audit
-- event; the same key for another request is refused.
CREATE TABLE boardready.legal_hold_requests (
  idempotency_key  text PRIMARY KEY,
  operation        text NOT NULL CHECK (operation IN ('place', 'release')),
  account_id       bigint NOT NULL,
  hold_id          bigint NOT NULL REFERENCES boardready.legal_holds (id),
  request_sha256   bytea NOT NULL CHECK (length(request_sha256) = 32),  -- of what was asked
  audit_event_id   uuid NOT NULL REFERENCES boardready.audit_events (id),
  created_at       timestamptz NOT NULL
);

-- One row per retention sweep: open while batches run (a crash leaves it open
-- and the next batch carries on), closed when a batch finds nothing left.
-- Each kind's position, the oldest key a batch still has to look at, keeps
-- a sweep from scanning again what it found held or pending: every row
-- before it was deleted or kept for now (the next sweep starts over).
CREATE TABLE boardready.retention_sweeps (
  id               bigserial PRIMARY KEY,
  retention_days   integer NOT NULL CHECK (retention_days BETWEEN 1 AND 30),
  cutoff           timestamptz NOT NULL,         -- of the latest batch
  batches          integer NOT NULL DEFAULT 0,
  deleted          jsonb NOT NULL DEFAULT '{}',  -- rows deleted per table
  runs_from        timestamptz,                  -- release runs: (started_at, id) from here
  runs_from_id     bigint,
  ingested_from    timestamptz,                  -- ingested results: (received_at, id) from here
  ingested_from_id bigint,
  inbox_from       timestamptz,                  -- webhook inbox: (received_at, id) from here
  inbox_from_id    bigint,
  started_at       timestamptz NOT NULL,
  updated_at       timestamptz NOT NULL,
  completed_at     timestamptz,
  audit_event_id   uuid REFERENCES boardready.audit_events (id)  -- control_plane.retention_purged
);
CREATE UNIQUE INDEX retention_sweeps_one_open ON boardready.retention_sweeps ((true)) WHERE completed_at IS NULL;

-- Retention finds its oldest candidates by index: ingested results (no
-- release run) by arrival, terminal inbox rows by arrival (webhook_inbox_received),
-- release runs by start (release_runs_listing).
CREATE INDEX run_results_ingested_received ON boardready.run_results (received_at, id) WHERE release_run_id IS NULL;
-- Deleting a row makes PostgreSQL look for rows that still refer to it: without
-- these, every deleted run, attempt or result would scan a whole table.
CREATE INDEX release_runs_superseded_by ON boardready.release_runs (superseded_by) WHERE superseded_by IS NOT NULL;
CREATE INDEX release_runs_current_attempt ON boardready.release_runs (current_attempt_id);
CREATE INDEX outbox_items_run_result ON boardready.outbox_items (run_result_id) WHERE run_result_id IS NOT NULL;
CREATE INDEX outbox_items_attempt ON boardready.outbox_items (attempt_id) WHERE attempt_id IS NOT NULL;
CREATE INDEX run_results_attempt ON boardready.run_results (attempt_id) WHERE attempt_id IS NOT NULL;

-- The operator API's hold listing (sql/queries/legal_holds_page.sql) reads
-- the account and its holds directly.
GRANT SELECT ON boardready.accounts, boardready.legal_holds TO boardready_api;

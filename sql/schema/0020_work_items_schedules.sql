-- One queue table for the work that had none of the queue rules (component
-- supply: a pull request's supply check, a watched board's refresh), and one
-- row per periodic schedule so that two replicas never both run a tick.
--
-- work_items has the queue columns of lifecycle_jobs, outbox_items and
-- reconciliation_items, so queue.sql's lease, retry, backoff, dead-letter,
-- renewal and replay rules apply to it: a completion checks its lease token,
-- a dead letter is replayed through the operator API (item type `supply`).
-- What each kind needs is read from its subject (supply_checks,
-- watched_boards) when it is claimed. The previous release's supply worker
-- keeps calling supply_work_claim and friends, which now lease these rows.
-- depends: 0017_inbox_awaiting_job

-- The queue columns, written once: a queue table from here on is made LIKE
-- this empty shape (its lease check included), adding its own identity, its
-- kinds and its statuses. (lifecycle_jobs, outbox_items and
-- reconciliation_items, older, spell the same columns out; moving them is a
-- table rewrite under the previous release's processes, left for later.)
CREATE TABLE boardready.queue_item_shape (
  attempts         integer NOT NULL DEFAULT 0,
  run_after        timestamptz NOT NULL,
  status           text NOT NULL,
  leased_until     timestamptz,
  lease_token      uuid,
  leased_by        text,
  outcome          text,
  reason_code      text,
  error_class      text,
  failed_at        timestamptz,
  completed_at     timestamptz,
  created_at       timestamptz NOT NULL,
  updated_at       timestamptz NOT NULL,
  CONSTRAINT queue_item_lease CHECK ((status = 'leased') = (lease_token IS NOT NULL AND leased_until IS NOT NULL))
);

CREATE TABLE boardready.work_items (
  id               bigserial PRIMARY KEY,
  kind             text NOT NULL CHECK (kind IN ('supply_check', 'board_refresh')),
  subject_id       bigint NOT NULL,              -- the run result (supply_check) or watched board (board_refresh)
  installation_id  bigint,
  LIKE boardready.queue_item_shape INCLUDING DEFAULTS INCLUDING CONSTRAINTS,
  CHECK (status IN ('accepted', 'leased', 'completed', 'dead_letter'))
);
-- One open item per subject: a board due twice, or two replicas enqueuing it, make one.
CREATE UNIQUE INDEX work_items_open ON boardready.work_items (kind, subject_id) WHERE status IN ('accepted', 'leased');
CREATE INDEX work_items_due ON boardready.work_items (run_after, id) WHERE status = 'accepted';
CREATE INDEX work_items_leased ON boardready.work_items (leased_until) WHERE status = 'leased';
CREATE INDEX work_items_dead ON boardready.work_items (installation_id, failed_at) WHERE status = 'dead_letter';

-- The supply checks pending when this migration ran become work items; the
-- watched boards' refreshes are enqueued by the board_refresh schedule.
INSERT INTO boardready.work_items (kind, subject_id, installation_id, status, run_after, created_at, updated_at)
SELECT 'supply_check', c.run_result_id, c.installation_id, 'accepted', c.run_after, now(), now()
  FROM boardready.supply_checks c WHERE c.status = 'pending';

-- One row per periodic producer: the replica that leases a due row runs the
-- tick, then sets when it is due next. The queue columns, so that a live
-- worker renews the lease of a long tick (queue_renew_leases).
CREATE TABLE boardready.schedules (
  id    bigserial PRIMARY KEY,
  name  text NOT NULL UNIQUE CHECK (name IN ('reconciliation_detect', 'retention_sweep', 'slo_evaluate',
                                             'board_refresh')),
  LIKE boardready.queue_item_shape INCLUDING DEFAULTS INCLUDING CONSTRAINTS,
  -- A schedule is never dead-lettered: outcome, reason_code and error_class are its last tick's.
  CHECK (status IN ('accepted', 'leased'))
);
INSERT INTO boardready.schedules (name, status, run_after, created_at, updated_at)
SELECT name, 'accepted', now(), now(), now()
  FROM unnest(ARRAY['reconciliation_detect', 'retention_sweep', 'slo_evaluate', 'board_refresh']) AS name;

-- The outbox calls and reconciliation items back in tables of their own
-- (as 0003, 0004, 0009, 0010 and 0011 left them), with the ids they have in
-- work_items. Views and functions over them are re-created by the next migrate.
DROP VIEW IF EXISTS ops.dead_letters;
DROP VIEW IF EXISTS ops.outbox;
DROP VIEW IF EXISTS ops.reconciliation_items;
DROP VIEW IF EXISTS boardready.reconciliation_workflow_subjects;
DROP FUNCTION IF EXISTS boardready.reconciliation_workflow_observe(boardready.reconciliation_items, text, text, bigint,
                                                                   integer, timestamptz);
DROP FUNCTION IF EXISTS boardready.reconciliation_check_run_observe(boardready.reconciliation_items, text, integer,
                                                                    timestamptz);
DROP FUNCTION IF EXISTS boardready.reconciliation_lifecycle_repair(boardready.reconciliation_items, timestamptz);
DROP VIEW boardready.outbox_items;
DROP VIEW boardready.reconciliation_items;

CREATE TABLE boardready.outbox_items (
  id               bigserial PRIMARY KEY,
  release_run_id   bigint NOT NULL REFERENCES boardready.release_runs (id),
  attempt_id       bigint REFERENCES boardready.release_run_attempts (id),
  installation_id  bigint NOT NULL,
  kind             text NOT NULL CONSTRAINT outbox_items_kind_check
                     CHECK (kind IN ('check_run_create', 'workflow_dispatch', 'check_run_complete', 'pr_comment',
                                     'check_run_decision')),
  idempotency_key  text NOT NULL UNIQUE,
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
  progress         integer NOT NULL DEFAULT 0,
  run_result_id    bigint REFERENCES boardready.run_results (id),
  CHECK ((status = 'leased') = (lease_token IS NOT NULL AND leased_until IS NOT NULL))
);
CREATE INDEX outbox_items_due ON boardready.outbox_items (run_after, id) WHERE status = 'accepted';
CREATE INDEX outbox_items_leased ON boardready.outbox_items (leased_until) WHERE status = 'leased';
CREATE INDEX outbox_items_dead ON boardready.outbox_items (installation_id, failed_at) WHERE status = 'dead_letter';
CREATE INDEX outbox_items_run ON boardready.outbox_items (release_run_id);
CREATE INDEX outbox_items_run_result ON boardready.outbox_items (run_result_id) WHERE run_result_id IS NOT NULL;
CREATE INDEX outbox_items_attempt ON boardready.outbox_items (attempt_id) WHERE attempt_id IS NOT NULL;

CREATE TABLE boardready.reconciliation_items (
  id               bigserial PRIMARY KEY,
  kind             text NOT NULL CHECK (kind IN ('workflow_attempt', 'release_run', 'lifecycle_inbox')),
  subject_id       bigint NOT NULL,
  installation_id  bigint,
  reason_code      text NOT NULL,
  deadline_at      timestamptz NOT NULL,
  status           text NOT NULL CHECK (status IN ('accepted', 'leased', 'completed', 'dead_letter')),
  attempts         integer NOT NULL DEFAULT 0,
  observations     integer NOT NULL DEFAULT 0,
  run_after        timestamptz NOT NULL,
  leased_until     timestamptz,
  lease_token      uuid,
  leased_by        text,
  outcome          text,
  error_class      text,
  failed_at        timestamptz,
  completed_at     timestamptz,
  created_at       timestamptz NOT NULL,
  updated_at       timestamptz NOT NULL,
  CHECK ((status = 'leased') = (lease_token IS NOT NULL AND leased_until IS NOT NULL))
);
CREATE UNIQUE INDEX reconciliation_items_open ON boardready.reconciliation_items (kind, subject_id)
  WHERE status IN ('accepted', 'leased');
CREATE INDEX reconciliation_items_due ON boardready.reconciliation_items (kind, run_after, id) WHERE status = 'accepted';
CREATE INDEX reconciliation_items_leased ON boardready.reconciliation_items (leased_until) WHERE status = 'leased';
CREATE INDEX reconciliation_items_subject ON boardready.reconciliation_items (kind, subject_id);

INSERT INTO boardready.outbox_items (id, release_run_id, attempt_id, installation_id, kind, idempotency_key, params,
                                     status, attempts, run_after, leased_until, lease_token, leased_by, outcome,
                                     replay_safe, reason_code, error_class, failed_at, completed_at, created_at,
                                     updated_at, progress, run_result_id)
SELECT w.id, w.subject_id, w.attempt_id, w.installation_id, w.kind, w.idempotency_key, w.params, w.status, w.attempts,
       w.run_after, w.leased_until, w.lease_token, w.leased_by, w.outcome, w.replay_safe, w.reason_code,
       w.error_class, w.failed_at, w.completed_at, w.created_at, w.updated_at, w.progress, w.run_result_id
  FROM boardready.work_items w
 WHERE w.kind IN ('check_run_create', 'workflow_dispatch', 'check_run_complete', 'check_run_decision', 'pr_comment');
INSERT INTO boardready.reconciliation_items (id, kind, subject_id, installation_id, reason_code, deadline_at, status,
                                             attempts, observations, run_after, leased_until, lease_token, leased_by,
                                             outcome, error_class, failed_at, completed_at, created_at, updated_at)
SELECT w.id, w.kind, w.subject_id, w.installation_id, w.reason_code, w.deadline_at, w.status, w.attempts,
       w.observations, w.run_after, w.leased_until, w.lease_token, w.leased_by, w.outcome, w.error_class, w.failed_at,
       w.completed_at, w.created_at, w.updated_at
  FROM boardready.work_items w
 WHERE w.kind IN ('workflow_attempt', 'release_run', 'lifecycle_inbox');
SELECT setval('boardready.outbox_items_id_seq', greatest((SELECT max(id) FROM boardready.outbox_items), 1));
SELECT setval('boardready.reconciliation_items_id_seq',
              greatest((SELECT max(id) FROM boardready.reconciliation_items), 1));
DELETE FROM boardready.work_items WHERE kind NOT IN ('supply_check', 'board_refresh');

DROP INDEX boardready.work_items_attempt;
DROP INDEX boardready.work_items_run_result;
DROP INDEX boardready.work_items_subject;
DROP INDEX boardready.work_items_open;
CREATE UNIQUE INDEX work_items_open ON boardready.work_items (kind, subject_id) WHERE status IN ('accepted', 'leased');
ALTER TABLE boardready.work_items DROP CONSTRAINT work_items_reconciliation;
ALTER TABLE boardready.work_items DROP CONSTRAINT work_items_outbox_call;
ALTER TABLE boardready.work_items DROP CONSTRAINT work_items_kind_check;
ALTER TABLE boardready.work_items ADD CONSTRAINT work_items_kind_check CHECK (kind IN ('supply_check', 'board_refresh'));
ALTER TABLE boardready.work_items
  DROP COLUMN observations, DROP COLUMN deadline_at, DROP COLUMN replay_safe, DROP COLUMN progress,
  DROP COLUMN params, DROP COLUMN idempotency_key, DROP COLUMN run_result_id, DROP COLUMN attempt_id;

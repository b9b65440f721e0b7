-- One queue table for every kind of work but the lifecycle jobs: the outbox
-- calls and the reconciliation items move into work_items (with the supply
-- work already there since 0020), claimed, completed, failed, released and
-- renewed by static functions (sql/functions/queue.sql). What a kind needs of
-- its subject is read from the subject's tables and views when it is claimed.
--
-- The two older names stay as views of their kinds' rows, with their columns
-- as they were: the previous release's processes, the operator views, the
-- retention purge and the load tools read (and write, through the updatable
-- view) them by name. An outbox item keeps its id (the operator's dead
-- letters and 0.6.0's in-flight leases name it); the supply work and the
-- reconciliation items, which no operator replay names across an upgrade,
-- are numbered after them. A reconciliation lease held across the upgrade is
-- found again by its token (queue.sql, work_item_for_lease).
-- depends: 0031_more_function_tombstones

-- Every lock this migration needs, taken before anything else (app/migrations.py
-- bounds each wait and retries the migration whole): waiting for one while
-- holding another, under the previous release's running processes, is how a
-- deadlock starts (one of theirs reads run_results, then waits for
-- outbox_items behind this migration, which waits for run_results). ACCESS
-- EXCLUSIVE on the tables it drops and fills, on the views over them, and on
-- the tables their foreign keys reference (dropping a table drops its
-- foreign keys' triggers there; filling one locks the referenced rows);
-- EXCLUSIVE on replay_requests, whose rows it renumbers.
DO $$
BEGIN
  EXECUTE (SELECT 'LOCK TABLE ' || string_agg(DISTINCT r::text, ', ') || ' IN ACCESS EXCLUSIVE MODE'
             FROM (SELECT to_regclass(v) AS r
                     FROM unnest(ARRAY['boardready.outbox_items', 'boardready.reconciliation_items',
                                       'boardready.work_items', 'ops.dead_letters', 'ops.outbox',
                                       'ops.reconciliation_items', 'boardready.reconciliation_workflow_subjects']) v
                   UNION
                   SELECT c.confrelid::regclass FROM pg_constraint c
                    WHERE c.contype = 'f' AND c.conrelid IN ('boardready.outbox_items'::regclass,
                                                              'boardready.reconciliation_items'::regclass,
                                                              'boardready.work_items'::regclass)) locked
            WHERE r IS NOT NULL);
  LOCK TABLE boardready.replay_requests IN EXCLUSIVE MODE;
END $$;

-- What each kind carries of its own besides its subject: the outbox call's
-- attempt, run result, idempotency key, parameters, annotation progress and
-- whether a dead letter may be replayed; the reconciliation item's deadline
-- and observation count. subject_id is the release run of an outbox call.
ALTER TABLE boardready.work_items
  ADD COLUMN attempt_id      bigint REFERENCES boardready.release_run_attempts (id),
  ADD COLUMN run_result_id   bigint REFERENCES boardready.run_results (id),
  ADD COLUMN idempotency_key text UNIQUE,           -- a repeat never creates a second check run or comment
  ADD COLUMN params          jsonb NOT NULL DEFAULT '{}',
  ADD COLUMN progress        integer NOT NULL DEFAULT 0,
  ADD COLUMN replay_safe     boolean NOT NULL DEFAULT true,
  ADD COLUMN deadline_at     timestamptz,           -- a reconciliation item fails closed at or after it
  ADD COLUMN observations    integer NOT NULL DEFAULT 0;

ALTER TABLE boardready.work_items DROP CONSTRAINT work_items_kind_check;
ALTER TABLE boardready.work_items ADD CONSTRAINT work_items_kind_check CHECK (kind IN (
  'supply_check', 'board_refresh',
  'check_run_create', 'workflow_dispatch', 'check_run_complete', 'check_run_decision', 'pr_comment',
  'workflow_attempt', 'release_run', 'lifecycle_inbox'));
ALTER TABLE boardready.work_items ADD CONSTRAINT work_items_outbox_call CHECK (
  kind NOT IN ('check_run_create', 'workflow_dispatch', 'check_run_complete', 'check_run_decision', 'pr_comment')
  OR idempotency_key IS NOT NULL);
ALTER TABLE boardready.work_items ADD CONSTRAINT work_items_reconciliation CHECK (
  kind NOT IN ('workflow_attempt', 'release_run', 'lifecycle_inbox')
  OR (deadline_at IS NOT NULL AND reason_code IS NOT NULL));

-- One open item per subject for the kinds without an idempotency key (a
-- board due twice, a drift detected by two replicas); an outbox call is one
-- per key instead (a release run has several calls of one kind over its attempts).
DROP INDEX boardready.work_items_open;
CREATE UNIQUE INDEX work_items_open ON boardready.work_items (kind, subject_id)
  WHERE status IN ('accepted', 'leased') AND idempotency_key IS NULL;
CREATE INDEX work_items_subject ON boardready.work_items (subject_id, kind);
CREATE INDEX work_items_run_result ON boardready.work_items (run_result_id) WHERE run_result_id IS NOT NULL;
CREATE INDEX work_items_attempt ON boardready.work_items (attempt_id) WHERE attempt_id IS NOT NULL;

-- The views over the moved tables go with them (sql/functions recreates them
-- over the new views), as do the reconciliation steps that take an item's
-- row: their type is the view's from here on.
DROP VIEW IF EXISTS ops.dead_letters;
DROP VIEW IF EXISTS ops.outbox;
DROP VIEW IF EXISTS ops.reconciliation_items;
DROP VIEW IF EXISTS boardready.reconciliation_workflow_subjects;
DROP FUNCTION IF EXISTS boardready.reconciliation_workflow_observe(boardready.reconciliation_items, text, text, bigint,
                                                                   integer, timestamptz);
DROP FUNCTION IF EXISTS boardready.reconciliation_check_run_observe(boardready.reconciliation_items, text, integer,
                                                                    timestamptz);
DROP FUNCTION IF EXISTS boardready.reconciliation_lifecycle_repair(boardready.reconciliation_items, timestamptz);

-- The rows in flight move. Supply work first makes room above the outbox ids.
DO $$
DECLARE
  v_room bigint := greatest((SELECT max(id) FROM boardready.outbox_items), (SELECT max(id) FROM boardready.work_items),
                            0);
  v_after_supply bigint;
BEGIN
  UPDATE boardready.work_items SET id = id + v_room;
  UPDATE boardready.replay_requests SET item_id = item_id + v_room WHERE item_type = 'supply';

  INSERT INTO boardready.work_items (id, kind, subject_id, installation_id, attempt_id, run_result_id, idempotency_key,
                                     params, progress, replay_safe, attempts, run_after, status, leased_until,
                                     lease_token, leased_by, outcome, reason_code, error_class, failed_at,
                                     completed_at, created_at, updated_at)
  SELECT o.id, o.kind, o.release_run_id, o.installation_id, o.attempt_id, o.run_result_id, o.idempotency_key,
         o.params, o.progress, o.replay_safe, o.attempts, o.run_after, o.status, o.leased_until, o.lease_token,
         o.leased_by, o.outcome, o.reason_code, o.error_class, o.failed_at, o.completed_at, o.created_at, o.updated_at
    FROM boardready.outbox_items o;

  v_after_supply := greatest((SELECT max(id) FROM boardready.work_items), 0);
  INSERT INTO boardready.work_items (id, kind, subject_id, installation_id, reason_code, deadline_at, observations,
                                     attempts, run_after, status, leased_until, lease_token, leased_by, outcome,
                                     error_class, failed_at, completed_at, created_at, updated_at)
  SELECT v_after_supply + r.id, r.kind, r.subject_id, r.installation_id, r.reason_code, r.deadline_at,
         r.observations, r.attempts, r.run_after, r.status, r.leased_until, r.lease_token, r.leased_by, r.outcome,
         r.error_class, r.failed_at, r.completed_at, r.created_at, r.updated_at
    FROM boardready.reconciliation_items r;

  PERFORM setval('boardready.work_items_id_seq', greatest((SELECT max(id) FROM boardready.work_items), 1));
END $$;

DROP TABLE boardready.outbox_items;
DROP TABLE boardready.reconciliation_items;

-- The older names, as views of their kinds' rows with the columns they had
-- (simple views, so INSERT, UPDATE and DELETE through them reach work_items;
-- the check option keeps each view's rows of its own kinds).
CREATE VIEW boardready.outbox_items AS
SELECT w.id, w.subject_id AS release_run_id, w.attempt_id, w.installation_id, w.kind, w.idempotency_key, w.params,
       w.status, w.attempts, w.run_after, w.leased_until, w.lease_token, w.leased_by, w.outcome, w.replay_safe,
       w.reason_code, w.error_class, w.failed_at, w.completed_at, w.created_at, w.updated_at, w.progress,
       w.run_result_id
  FROM boardready.work_items w
 WHERE w.kind IN ('check_run_create', 'workflow_dispatch', 'check_run_complete', 'check_run_decision', 'pr_comment')
  WITH CHECK OPTION;

CREATE VIEW boardready.reconciliation_items AS
SELECT w.id, w.kind, w.subject_id, w.installation_id, w.reason_code, w.deadline_at, w.status, w.attempts,
       w.observations, w.run_after, w.leased_until, w.lease_token, w.leased_by, w.outcome, w.error_class,
       w.failed_at, w.completed_at, w.created_at, w.updated_at
  FROM boardready.work_items w
 WHERE w.kind IN ('workflow_attempt', 'release_run', 'lifecycle_inbox')
  WITH CHECK OPTION;

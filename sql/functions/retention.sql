-- Retention: run summaries older than SERVICE_RUN_RETENTION_DAYS (the
-- Community plan's 30 days at most) are deleted, and so are terminal webhook
-- inbox rows and lifecycle jobs of the same age. Erasure (erasure.sql) deletes
-- a canceled account's data with the same building blocks.
--
-- Bounded: one call deletes at most p_batch_size rows and commits, so a large
-- purge never holds long locks or grows one transaction. Resumable: what to
-- delete is read from the data each time (older than the cutoff, nothing
-- pending on it), so a crash between batches leaves nothing to repair; the
-- next batch carries on, and the open sweep row keeps the counts.
-- Legal holds: nothing of an account under an active hold is deleted. Placing
-- a hold waits for a batch in flight (legal_hold_place takes the key below
-- exclusively; a batch takes it shared and decides what to delete after), so
-- once a hold is placed, no batch deletes anything it covers.
-- Audit: one control_plane.retention_purged event per sweep, ids and counts.

-- ---------------------------------------------------------------------------
-- Building blocks, shared with erasure

-- Rows deleted per table, summed: {"run_findings": 12, ...}; zeros left out.
CREATE OR REPLACE FUNCTION boardready_private.purge_counts_add(p_a jsonb, p_b jsonb)
RETURNS jsonb LANGUAGE sql IMMUTABLE AS $$
  SELECT coalesce(jsonb_object_agg(t.key, t.rows ORDER BY t.key), '{}'::jsonb)
    FROM (SELECT c.key, sum((c.value #>> '{}')::bigint) AS rows
            FROM (SELECT * FROM jsonb_each(coalesce(p_a, '{}'::jsonb))
                  UNION ALL SELECT * FROM jsonb_each(coalesce(p_b, '{}'::jsonb))) c
           GROUP BY c.key HAVING sum((c.value #>> '{}')::bigint) > 0) t
$$;

CREATE OR REPLACE FUNCTION boardready_private.purge_counts_total(p_counts jsonb)
RETURNS integer LANGUAGE sql IMMUTABLE AS $$
  SELECT coalesce(sum((c.value #>> '{}')::bigint), 0)::integer FROM jsonb_each(coalesce(p_counts, '{}'::jsonb)) c
$$;

-- Delete at most p_limit rows of one table whose p_key is in p_ids (and that
-- match p_filter, a constant predicate from the caller's code); how many.
CREATE OR REPLACE FUNCTION boardready_private.purge_rows(
  p_table text, p_key text, p_ids bigint[], p_limit integer, p_filter text DEFAULT 'true')
RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
  v_rows integer;
BEGIN
  IF p_table !~ '^[a-z_]{1,63}$' OR p_key !~ '^[a-z_]{1,63}$' THEN
    RAISE EXCEPTION 'purge_invalid_table' USING ERRCODE = '22023';
  END IF;
  IF p_limit <= 0 OR coalesce(cardinality(p_ids), 0) = 0 THEN
    RETURN 0;
  END IF;
  -- A row is found again by its ctid, or by its id in a view (outbox_items
  -- and reconciliation_items are views of work_items since 0032).
  EXECUTE format('DELETE FROM boardready.%1$I WHERE %4$s = ANY (ARRAY(SELECT t.%4$s FROM boardready.%1$I t '
                 'WHERE t.%2$I = ANY ($1) AND (%3$s) LIMIT $2))', p_table, p_key, p_filter,
                 CASE (SELECT c.relkind FROM pg_class c WHERE c.oid = format('boardready.%I', p_table)::regclass)
                   WHEN 'v' THEN 'id' ELSE 'ctid' END)
    USING p_ids, p_limit;
  GET DIAGNOSTICS v_rows = ROW_COUNT;
  RETURN v_rows;
END $$;

-- One step of a purge: delete, count, and say how much budget is left.
CREATE OR REPLACE FUNCTION boardready_private.purge_step(
  INOUT p_counts jsonb, INOUT p_left integer, p_table text, p_key text, p_ids bigint[],
  p_filter text DEFAULT 'true')
LANGUAGE plpgsql AS $$
DECLARE
  v_rows integer := boardready_private.purge_rows(p_table, p_key, p_ids, p_left, p_filter);
BEGIN
  p_counts := boardready_private.purge_counts_add(p_counts, jsonb_build_object(p_table, v_rows));
  p_left := p_left - v_rows;
END $$;

-- purge_step for each of p_tables in turn, all keyed by p_key in p_ids.
CREATE OR REPLACE FUNCTION boardready_private.purge_steps(
  INOUT p_counts jsonb, INOUT p_left integer, p_tables text[], p_key text, p_ids bigint[])
LANGUAGE plpgsql AS $$
DECLARE
  v_table text;
BEGIN
  FOREACH v_table IN ARRAY p_tables LOOP
    SELECT * INTO p_counts, p_left FROM boardready_private.purge_step(p_counts, p_left, v_table, p_key, p_ids);
  END LOOP;
END $$;

-- The purges below of what belongs together (run results, release runs,
-- inbox rows) are steps like purge_step: each takes the counts so far and the
-- budget left, and returns both updated, so that a caller chains them without
-- adding their counts up itself. Their signatures before were (ids, budget)
-- returning the counts:

-- Run results (ingested ones, or those of release runs being purged): their
-- findings, BOM lines, supply checks and report artifacts first, then each result that has
-- nothing left. Leaves before the rows that refer to them, so a step that
-- ran out of budget is taken up again by the next batch.
CREATE OR REPLACE FUNCTION boardready_private.run_results_purge(
  INOUT p_counts jsonb, INOUT p_left integer, p_result_ids bigint[])
LANGUAGE plpgsql AS $$
BEGIN
  SELECT * INTO p_counts, p_left FROM boardready_private.purge_steps(
    p_counts, p_left, ARRAY['run_findings', 'run_bom_lines', 'supply_checks', 'report_artifacts'], 'run_result_id',
    p_result_ids);
  -- A result still referred to (an outbox item of a run not purged with it) stays.
  SELECT * INTO p_counts, p_left FROM boardready_private.purge_step(p_counts, p_left, 'run_results', 'id', p_result_ids,
    'NOT EXISTS (SELECT 1 FROM boardready.outbox_items o WHERE o.run_result_id = t.id)');
END $$;

-- Everything of the given release runs, then the runs themselves with their
-- attempts. The caller chose (and locked) the runs.
CREATE OR REPLACE FUNCTION boardready_private.release_runs_purge(
  INOUT p_counts jsonb, INOUT p_left integer, p_run_ids bigint[])
LANGUAGE plpgsql AS $$
DECLARE
  v_budget   integer := p_left;
  v_results  bigint[] := ARRAY(SELECT r.id FROM boardready.run_results r WHERE r.release_run_id = ANY (p_run_ids));
  v_reviews  bigint[] := ARRAY(SELECT v.id FROM boardready.reviews v WHERE v.release_run_id = ANY (p_run_ids));
  v_attempts bigint[] := ARRAY(SELECT a.id FROM boardready.release_run_attempts a
                                WHERE a.release_run_id = ANY (p_run_ids));
  v_runs     bigint[];
  v_rows     integer;
BEGIN
  IF coalesce(cardinality(p_run_ids), 0) = 0 THEN
    RETURN;
  END IF;
  SELECT * INTO p_counts, p_left FROM boardready_private.purge_step(p_counts, p_left, 'outbox_items', 'release_run_id', p_run_ids);
  SELECT * INTO p_counts, p_left FROM boardready_private.purge_step(p_counts, p_left, 'review_approvals', 'review_id', v_reviews);
  SELECT * INTO p_counts, p_left FROM boardready_private.purge_step(p_counts, p_left, 'reviews', 'release_run_id', p_run_ids);
  IF p_left <= 0 THEN
    RETURN;
  END IF;
  SELECT * INTO p_counts, p_left FROM boardready_private.run_results_purge(p_counts, p_left, v_results);
  SELECT * INTO p_counts, p_left FROM boardready_private.purge_step(p_counts, p_left, 'reconciliation_items', 'subject_id',
                                                            p_run_ids, 'kind = ''release_run''');
  SELECT * INTO p_counts, p_left FROM boardready_private.purge_step(p_counts, p_left, 'reconciliation_items', 'subject_id',
                                                            v_attempts, 'kind = ''workflow_attempt''');
  IF p_left <= 0 THEN
    RETURN;
  END IF;

  -- The runs with nothing left, oldest first, each with its attempts (a run
  -- and its current attempt refer to each other, so they go together), as many
  -- as the budget holds; when the whole budget is smaller than the first one,
  -- that one anyway, so a tiny budget still progresses.
  SELECT array_agg(c.id) INTO v_runs FROM (
    SELECT w.id, sum(w.weight) OVER (ORDER BY w.id) AS used, row_number() OVER (ORDER BY w.id) AS n
      FROM (SELECT rr.id, 1 + (SELECT count(*) FROM boardready.release_run_attempts a
                                WHERE a.release_run_id = rr.id) AS weight
              FROM boardready.release_runs rr
             WHERE rr.id = ANY (p_run_ids)
               -- (supply checks and report artifacts belong to results: gone with them)
               AND rr.id NOT IN (SELECT r.release_run_id FROM boardready.run_results r
                                  WHERE r.release_run_id = ANY (p_run_ids)
                                 UNION SELECT o.release_run_id FROM boardready.outbox_items o
                                  WHERE o.release_run_id = ANY (p_run_ids)
                                 UNION SELECT v.release_run_id FROM boardready.reviews v
                                  WHERE v.release_run_id = ANY (p_run_ids))) w) c
   WHERE c.used <= p_left OR (c.n = 1 AND p_left = v_budget);
  IF v_runs IS NULL THEN
    RETURN;
  END IF;
  -- A kept run that a purged one superseded loses the pointer to a row that is gone.
  UPDATE boardready.release_runs SET superseded_by = NULL
   WHERE superseded_by = ANY (v_runs) AND NOT (id = ANY (v_runs));
  WITH attempts AS (DELETE FROM boardready.release_run_attempts a WHERE a.release_run_id = ANY (v_runs) RETURNING 1),
       runs AS (DELETE FROM boardready.release_runs rr WHERE rr.id = ANY (v_runs) RETURNING 1)
  SELECT (SELECT count(*) FROM attempts) INTO v_rows;
  p_counts := boardready_private.purge_counts_add(p_counts, jsonb_build_object('release_run_attempts', v_rows,
                                                                       'release_runs', cardinality(v_runs)));
  p_left := p_left - v_rows - cardinality(v_runs);
END $$;

-- Webhook inbox rows with their lifecycle jobs and reconciliation items (jobs
-- refer to their inbox row).
CREATE OR REPLACE FUNCTION boardready_private.inbox_purge(INOUT p_counts jsonb, INOUT p_left integer, p_inbox_ids bigint[])
LANGUAGE plpgsql AS $$
BEGIN
  SELECT * INTO p_counts, p_left FROM boardready_private.purge_step(p_counts, p_left, 'reconciliation_items', 'subject_id',
                                                            p_inbox_ids, 'kind = ''lifecycle_inbox''');
  SELECT * INTO p_counts, p_left FROM boardready_private.purge_step(p_counts, p_left, 'lifecycle_jobs', 'inbox_id', p_inbox_ids);
  SELECT * INTO p_counts, p_left FROM boardready_private.purge_step(p_counts, p_left, 'webhook_inbox', 'id', p_inbox_ids,
    'NOT EXISTS (SELECT 1 FROM boardready.lifecycle_jobs j WHERE j.inbox_id = t.id)');
END $$;

-- ---------------------------------------------------------------------------
-- What retention may delete: older than the cutoff, not under an active legal
-- hold, nothing pending on it. Oldest first, at most p_limit.

CREATE OR REPLACE FUNCTION boardready_private.retention_held(p_installation_id bigint)
RETURNS boolean LANGUAGE sql STABLE AS $$
  SELECT EXISTS (SELECT 1 FROM boardready.installations i
                   JOIN boardready.legal_holds h ON h.account_id = i.account_id AND h.active
                  WHERE i.id = p_installation_id)
$$;

-- Each kind's candidates come with their key, oldest first from a sweep's
-- position (NULL: from the start). The signatures before positions existed:

-- What is still at work, read once per call from the partial indexes of
-- pending rows (it is as small as the work in flight, whatever the history):
-- release runs with a code host call, a reconciliation or a supply check
-- pending; and the installations of accounts under an active legal hold.
CREATE OR REPLACE FUNCTION boardready_private.retention_busy_runs()
RETURNS TABLE (id bigint) LANGUAGE sql STABLE AS $$
  SELECT o.release_run_id FROM boardready.outbox_items o WHERE o.status = 'accepted'
  UNION SELECT o.release_run_id FROM boardready.outbox_items o WHERE o.status = 'leased'
  UNION SELECT ri.subject_id FROM boardready.reconciliation_items ri
         WHERE ri.kind = 'release_run' AND ri.status IN ('accepted', 'leased')
  UNION SELECT a.release_run_id FROM boardready.reconciliation_items ri
          JOIN boardready.release_run_attempts a ON a.id = ri.subject_id
         WHERE ri.kind = 'workflow_attempt' AND ri.status IN ('accepted', 'leased')
  UNION SELECT sc.release_run_id FROM boardready.supply_checks sc WHERE sc.status = 'pending'
$$;

CREATE OR REPLACE FUNCTION boardready_private.retention_held_installations()
RETURNS TABLE (id bigint) LANGUAGE sql STABLE AS $$
  SELECT i.id FROM boardready.installations i
    JOIN boardready.legal_holds h ON h.account_id = i.account_id AND h.active
$$;

-- What retention may delete of one table (p_table: release_runs,
-- run_results, webhook_inbox), each row with the instant it counts from,
-- oldest first from a sweep's position (NULL: from the start), not under a
-- legal hold. One function for the three, which differed only in what makes
-- a row of theirs deletable:
--   release_runs: terminal, nothing at work on them;
--   run_results: ingested with POST /api/v1/runs (no release run);
--   webhook_inbox: terminal (processed or dead-lettered evidence) with a
--   terminal job or none, and no reconciliation under way.
-- Called with a constant p_table, the function is inlined and only that
-- table's branch planned.
CREATE OR REPLACE FUNCTION boardready_private.retention_candidates(
  p_table text, p_cutoff timestamptz, p_from timestamptz, p_from_id bigint, p_limit integer)
RETURNS TABLE (id bigint, at timestamptz) LANGUAGE sql STABLE AS $$
  SELECT c.id, c.at
    FROM (SELECT rr.id, rr.started_at AS at, rr.installation_id FROM boardready.release_runs rr
           WHERE p_table = 'release_runs'
             AND rr.status IN ('completed', 'failed', 'timed_out', 'superseded')
             AND rr.id NOT IN (SELECT b.id FROM boardready_private.retention_busy_runs() b WHERE b.id IS NOT NULL)
          UNION ALL
          SELECT r.id, r.received_at, rp.installation_id
            FROM boardready.run_results r JOIN boardready.repositories rp ON rp.id = r.repository_id
           WHERE p_table = 'run_results' AND r.release_run_id IS NULL
          UNION ALL
          SELECT i.id, i.received_at, coalesce(i.installation_id, 0) FROM boardready.webhook_inbox i
           WHERE p_table = 'webhook_inbox' AND i.state IN ('processed', 'dead_letter')
             AND i.id NOT IN (SELECT j.inbox_id FROM boardready.lifecycle_jobs j WHERE j.status = 'accepted'
                              UNION SELECT j.inbox_id FROM boardready.lifecycle_jobs j WHERE j.status = 'leased'
                              UNION SELECT ri.subject_id FROM boardready.reconciliation_items ri
                                     WHERE ri.kind = 'lifecycle_inbox' AND ri.status IN ('accepted', 'leased'))) c
   WHERE c.at < p_cutoff
     AND (c.at, c.id) >= (coalesce(p_from, '-infinity'), coalesce(p_from_id, 0))
     AND c.installation_id NOT IN (SELECT h.id FROM boardready_private.retention_held_installations() h)
   ORDER BY c.at, c.id
   LIMIT p_limit
$$;

-- The pull request comment bookkeeping (which comment to update) of pull
-- requests whose last result is older than the cutoff. A later result finds
-- the comment again by its marker. One row per pull request: no position.
CREATE OR REPLACE FUNCTION boardready_private.retention_comments(p_cutoff timestamptz, p_limit integer)
RETURNS TABLE (repository_id bigint, pr_number integer) LANGUAGE sql STABLE AS $$
  SELECT c.repository_id, c.pr_number FROM boardready.pull_request_comments c
    JOIN boardready.repositories rp ON rp.id = c.repository_id
   WHERE c.updated_at < p_cutoff
     AND rp.installation_id NOT IN (SELECT h.id FROM boardready_private.retention_held_installations() h)
   ORDER BY c.updated_at
   LIMIT p_limit
$$;

-- Where the next batch starts: the first candidate still there (the budget
-- ran out before it was gone), else the last one looked at. Every row before
-- it was deleted or kept (held, pending, locked): a later sweep sees those again.
CREATE OR REPLACE FUNCTION boardready_private.retention_next_position(
  p_table text, p_ids bigint[], p_ats timestamptz[], INOUT p_from timestamptz, INOUT p_from_id bigint)
LANGUAGE plpgsql AS $$
DECLARE
  v_at timestamptz;
  v_id bigint;
BEGIN
  IF coalesce(cardinality(p_ids), 0) = 0 THEN
    RETURN;
  END IF;
  EXECUTE format('SELECT c.at, c.id FROM unnest($1, $2) AS c (id, at) '
                 'WHERE EXISTS (SELECT 1 FROM boardready.%I t WHERE t.id = c.id) ORDER BY c.at, c.id LIMIT 1', p_table)
    INTO v_at, v_id USING p_ids, p_ats;
  IF v_id IS NULL THEN
    v_at := p_ats[cardinality(p_ats)];
    v_id := p_ids[cardinality(p_ids)];
  END IF;
  p_from := v_at;
  p_from_id := v_id;
END $$;

-- One table's part of a batch: its candidates from the sweep's position,
-- locked (rows another transaction holds, such as an approval being
-- recorded, are left for a later sweep), purged with everything they hold,
-- and the position moved past them.
CREATE OR REPLACE FUNCTION boardready_private.retention_purge_table(
  INOUT p_counts jsonb, INOUT p_left integer, INOUT p_from timestamptz, INOUT p_from_id bigint,
  p_table text, p_cutoff timestamptz, p_limit integer)
LANGUAGE plpgsql AS $$
DECLARE
  v_ids    bigint[];
  v_ats    timestamptz[];
  v_locked bigint[];
BEGIN
  SELECT array_agg(c.id ORDER BY c.at, c.id), array_agg(c.at ORDER BY c.at, c.id) INTO v_ids, v_ats
    FROM boardready_private.retention_candidates(p_table, p_cutoff, p_from, p_from_id, p_limit) c;
  EXECUTE format('SELECT ARRAY(SELECT t.id FROM boardready.%I t WHERE t.id = ANY ($1) ORDER BY t.id '
                 'FOR UPDATE SKIP LOCKED)', p_table)
    INTO v_locked USING v_ids;
  CASE p_table
    WHEN 'release_runs' THEN
      SELECT * INTO p_counts, p_left FROM boardready_private.release_runs_purge(p_counts, p_left, v_locked);
    WHEN 'run_results' THEN
      SELECT * INTO p_counts, p_left FROM boardready_private.run_results_purge(p_counts, p_left, v_locked);
    WHEN 'webhook_inbox' THEN
      SELECT * INTO p_counts, p_left FROM boardready_private.inbox_purge(p_counts, p_left, v_locked);
  END CASE;
  SELECT * INTO p_from, p_from_id FROM boardready_private.retention_next_position(p_table, v_ids, v_ats, p_from, p_from_id);
END $$;

-- ---------------------------------------------------------------------------
-- One batch

-- Outcomes: purged (rows deleted; call again), completed (nothing was left:
-- the sweep is closed and audited), idle (nothing to do, no sweep open), busy
-- (another replica's batch is running). `remaining` is what is still to
-- delete after this batch, counted up to the batch size per kind (runs,
-- ingested results, inbox rows, comments): a lower bound, cheap to count.
CREATE OR REPLACE FUNCTION boardready.retention_purge_batch(
  p_retention_days integer, p_batch_size integer, p_now timestamptz DEFAULT now())
RETURNS TABLE (outcome text, sweep_id bigint, deleted jsonb, deleted_rows integer, remaining integer,
               audit_event_id uuid)
LANGUAGE plpgsql ROWS 1 SECURITY DEFINER SET search_path = boardready, pg_temp AS $$
DECLARE
  v_cutoff  timestamptz := p_now - make_interval(days => p_retention_days);
  v_counts  jsonb := '{}';
  v_left    integer := p_batch_size;
  v_sweep   retention_sweeps%ROWTYPE;
  v_total   integer;
  v_audit   uuid;
  v_rows    integer;
BEGIN
  IF p_retention_days IS NULL OR p_retention_days NOT BETWEEN 1 AND 30
     OR p_batch_size IS NULL OR p_batch_size NOT BETWEEN 1 AND 100000 THEN
    RAISE EXCEPTION 'retention_invalid_settings' USING ERRCODE = '22023';
  END IF;
  -- One batch at a time across replicas: a second one would only wait for
  -- the first's rows. Not a lease: the lock ends with the transaction, crash or not.
  IF NOT pg_try_advisory_xact_lock(hashtextextended('boardready.retention_batch', 0)) THEN
    RETURN QUERY SELECT 'busy'::text, NULL::bigint, '{}'::jsonb, 0, NULL::integer, NULL::uuid;
    RETURN;
  END IF;
  -- Holds placed from here on wait for this batch; those placed before are
  -- seen by the statements below (each takes a new snapshot).
  PERFORM pg_advisory_xact_lock_shared(hashtextextended('boardready.legal_holds', 0));
  -- The open sweep and its positions (none: a new sweep, from the start).
  SELECT * INTO v_sweep FROM retention_sweeps s WHERE s.completed_at IS NULL FOR UPDATE;

  -- Release runs, each with everything it holds.
  SELECT * INTO v_counts, v_left, v_sweep.runs_from, v_sweep.runs_from_id
    FROM boardready_private.retention_purge_table(v_counts, v_left, v_sweep.runs_from, v_sweep.runs_from_id, 'release_runs', v_cutoff,
                               p_batch_size);

  IF v_left > 0 THEN
    SELECT * INTO v_counts, v_left, v_sweep.ingested_from, v_sweep.ingested_from_id
      FROM boardready_private.retention_purge_table(v_counts, v_left, v_sweep.ingested_from, v_sweep.ingested_from_id, 'run_results',
                                 v_cutoff, v_left);
  END IF;

  IF v_left > 0 THEN
    WITH gone AS (
      DELETE FROM pull_request_comments pc
       USING boardready_private.retention_comments(v_cutoff, v_left) c
       WHERE (pc.repository_id, pc.pr_number) = (c.repository_id, c.pr_number)
      RETURNING 1)
    SELECT count(*) INTO v_rows FROM gone;
    v_counts := boardready_private.purge_counts_add(v_counts, jsonb_build_object('pull_request_comments', v_rows));
    v_left := p_batch_size - boardready_private.purge_counts_total(v_counts);
  END IF;

  IF v_left > 0 THEN
    -- An inbox row with its job is two rows.
    SELECT * INTO v_counts, v_left, v_sweep.inbox_from, v_sweep.inbox_from_id
      FROM boardready_private.retention_purge_table(v_counts, v_left, v_sweep.inbox_from, v_sweep.inbox_from_id, 'webhook_inbox',
                                 v_cutoff, greatest(1, v_left / 2));
  END IF;

  v_total := boardready_private.purge_counts_total(v_counts);
  IF v_total > 0 THEN
    IF v_sweep.id IS NULL THEN
      INSERT INTO retention_sweeps (retention_days, cutoff, started_at, updated_at)
      VALUES (p_retention_days, v_cutoff, p_now, p_now) RETURNING id INTO v_sweep.id;
    END IF;
    UPDATE retention_sweeps s
       SET batches = s.batches + 1, deleted = boardready_private.purge_counts_add(s.deleted, v_counts), cutoff = v_cutoff,
           retention_days = p_retention_days, updated_at = p_now,
           runs_from = v_sweep.runs_from, runs_from_id = v_sweep.runs_from_id,
           ingested_from = v_sweep.ingested_from, ingested_from_id = v_sweep.ingested_from_id,
           inbox_from = v_sweep.inbox_from, inbox_from_id = v_sweep.inbox_from_id
     WHERE s.id = v_sweep.id;
    RETURN QUERY SELECT 'purged'::text, v_sweep.id, v_counts, v_total,
      ((SELECT count(*) FROM boardready_private.retention_candidates('release_runs', v_cutoff, v_sweep.runs_from, v_sweep.runs_from_id,
                                                  p_batch_size))
       + (SELECT count(*) FROM boardready_private.retention_candidates('run_results', v_cutoff, v_sweep.ingested_from,
                                                    v_sweep.ingested_from_id, p_batch_size))
       + (SELECT count(*) FROM boardready_private.retention_candidates('webhook_inbox', v_cutoff, v_sweep.inbox_from,
                                                    v_sweep.inbox_from_id, p_batch_size))
       + (SELECT count(*) FROM boardready_private.retention_comments(v_cutoff, p_batch_size)))::integer,
      NULL::uuid;
    RETURN;
  END IF;

  IF v_sweep.id IS NULL THEN
    RETURN QUERY SELECT 'idle'::text, NULL::bigint, '{}'::jsonb, 0, 0, NULL::uuid;
    RETURN;
  END IF;
  -- Nothing left: close the sweep with one audit event (ids and counts only).
  INSERT INTO audit_events (event_type, installation_id, actor, operation_id, item_type, item_id, occurred_at, details)
  VALUES ('control_plane.retention_purged', NULL, 'system', 'retention_sweep:' || v_sweep.id, 'retention_sweep',
          v_sweep.id::text, p_now,
          jsonb_build_object('sweepId', v_sweep.id, 'retentionDays', v_sweep.retention_days,
                             'cutoff', v_sweep.cutoff, 'batches', v_sweep.batches, 'deleted', v_sweep.deleted))
  RETURNING id INTO v_audit;
  UPDATE retention_sweeps s SET completed_at = p_now, updated_at = p_now, audit_event_id = v_audit
   WHERE s.id = v_sweep.id;
  RETURN QUERY SELECT 'completed'::text, v_sweep.id, '{}'::jsonb, 0, 0, v_audit;
END $$;

-- ---------------------------------------------------------------------------
-- For operators (docs/operations.md, "Retention, erasure and legal holds")

-- Every sweep: the open one shows a purge under way (batches, rows so far).
CREATE OR REPLACE VIEW ops.retention_sweeps AS
SELECT s.id, s.retention_days, s.cutoff, s.batches, s.deleted,
       boardready_private.purge_counts_total(s.deleted) AS deleted_rows, s.started_at, s.updated_at, s.completed_at,
       s.audit_event_id
  FROM boardready.retention_sweeps s;

-- What is past the retention window right now (the last sweep's setting, 30
-- days before any sweep ran): what the next sweep will delete, and what it
-- keeps because of a legal hold or work still pending. Counts the whole
-- tables: for psql, not for a dashboard polled every second.
CREATE OR REPLACE VIEW ops.retention_backlog AS
WITH setting AS (
  SELECT now() - make_interval(days => coalesce(
           (SELECT s.retention_days FROM boardready.retention_sweeps s ORDER BY s.id DESC LIMIT 1), 30)) AS cutoff
)
SELECT 'release_runs'::text AS kind, setting.cutoff,
       (SELECT count(*) FROM boardready_private.retention_candidates('release_runs', setting.cutoff, NULL, NULL, NULL)) AS due,
       (SELECT count(*) FROM boardready.release_runs rr
         WHERE rr.started_at < setting.cutoff AND boardready_private.retention_held(rr.installation_id)) AS held,
       (SELECT count(*) FROM boardready.release_runs rr WHERE rr.started_at < setting.cutoff) AS past_window
  FROM setting
UNION ALL
SELECT 'ingested_results', setting.cutoff,
       (SELECT count(*) FROM boardready_private.retention_candidates('run_results', setting.cutoff, NULL, NULL, NULL)),
       (SELECT count(*) FROM boardready.run_results r JOIN boardready.repositories rp ON rp.id = r.repository_id
         WHERE r.release_run_id IS NULL AND r.received_at < setting.cutoff
           AND boardready_private.retention_held(rp.installation_id)),
       (SELECT count(*) FROM boardready.run_results r WHERE r.release_run_id IS NULL AND r.received_at < setting.cutoff)
  FROM setting
UNION ALL
SELECT 'pull_request_comments', setting.cutoff,
       (SELECT count(*) FROM boardready_private.retention_comments(setting.cutoff, NULL)),
       (SELECT count(*) FROM boardready.pull_request_comments c JOIN boardready.repositories rp ON rp.id = c.repository_id
         WHERE c.updated_at < setting.cutoff AND boardready_private.retention_held(rp.installation_id)),
       (SELECT count(*) FROM boardready.pull_request_comments c WHERE c.updated_at < setting.cutoff)
  FROM setting
UNION ALL
SELECT 'webhook_inbox', setting.cutoff,
       (SELECT count(*) FROM boardready_private.retention_candidates('webhook_inbox', setting.cutoff, NULL, NULL, NULL)),
       (SELECT count(*) FROM boardready.webhook_inbox i
         WHERE i.received_at < setting.cutoff AND boardready_private.retention_held(i.installation_id)),
       (SELECT count(*) FROM boardready.webhook_inbox i WHERE i.received_at < setting.cutoff)
  FROM setting;

-- Finished supply work items (supply checks, board refreshes) older than
-- the retention window, at most p_batch_size per call; they hold ids and
-- codes only. Dead letters stay for the operator; the outbox calls and
-- reconciliation items go with their release runs and inbox rows. Returns
-- the rows deleted.
CREATE OR REPLACE FUNCTION boardready.work_items_purge(
  p_retention_days integer, p_batch_size integer, p_now timestamptz DEFAULT now())
RETURNS integer
LANGUAGE plpgsql SECURITY DEFINER SET search_path = boardready, pg_temp AS $$
DECLARE
  v_deleted integer;
BEGIN
  DELETE FROM work_items w
   WHERE w.id IN (SELECT x.id FROM work_items x
                   WHERE x.status = 'completed' AND x.completed_at < p_now - make_interval(days => p_retention_days)
                     AND x.kind IN ('supply_check', 'board_refresh')
                   ORDER BY x.id LIMIT p_batch_size
                     FOR UPDATE SKIP LOCKED);
  GET DIAGNOSTICS v_deleted = ROW_COUNT;
  RETURN v_deleted;
END $$;

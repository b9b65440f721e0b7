-- The lease, retry, backoff and dead-letter rules of the queue tables, in
-- static SQL (no table name is ever a value).
--
--   lifecycle_jobs  the webhook lifecycle jobs (the spec's drift rules are about them): job_*
--   work_items      every other kind of work, one `kind` per row: the outbox calls, the
--                   reconciliation items and the supply work (0032): work_*
--   schedules       one row per periodic producer: schedule_* (leases and renewals only)
--
-- What a rule decides is written once and shared: boardready_private.queue_retry_after (back
-- off, or dead-letter) and boardready_private.queue_expired_status (an expired lease: claimable
-- again, or a dead letter). Each queue's claim returns what its handlers
-- need, read from the item's subject in a statement of its own.

-- A failed attempt's next run: exponential backoff, 1 s doubling per attempt,
-- capped at 5 minutes, with +-25 % jitter so that a burst of failures does
-- not retry in lockstep, never before p_not_before (the code host's
-- Retry-After). NULL: no further attempt, the item becomes a dead letter
-- (its last attempt failed, or the failure is final).
CREATE OR REPLACE FUNCTION boardready_private.queue_retry_after(
  p_attempts integer, p_max_attempts integer, p_final boolean, p_not_before timestamptz, p_now timestamptz)
RETURNS timestamptz LANGUAGE sql VOLATILE AS $$
  SELECT CASE WHEN p_final OR p_attempts >= p_max_attempts THEN NULL
              ELSE greatest(p_now + make_interval(secs => least(300, power(2, p_attempts - 1))
                                                          * (0.75 + random() * 0.5)),
                            p_not_before) END
$$;

-- A lease that ran out (its worker died or hung): the item is claimable
-- again, unless that was its last attempt, which is not run again.
CREATE OR REPLACE FUNCTION boardready_private.queue_expired_status(p_attempts integer, p_max_attempts integer)
RETURNS text LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE WHEN p_attempts >= p_max_attempts THEN 'dead_letter' ELSE 'accepted' END
$$;

-- ---------------------------------------------------------------------------
-- work_items

-- Lease due items of the given kinds, oldest due first (or the one given
-- item, when it is claimable: its due time is not waited for, the caller
-- publishes it right now). Returns the claimed ids with their tokens; each
-- queue's claim joins them to what its handlers need in a statement of its
-- own: joined in the claiming statement itself, a row committed after that
-- statement's snapshot but claimed by its inner UPDATE would be leased yet
-- missing from the result, and wait for its lease to expire.
CREATE OR REPLACE FUNCTION boardready_private.work_lease_due(
  p_kinds text[], p_worker text, p_limit integer, p_lease_seconds integer, p_max_attempts integer,
  p_now timestamptz, p_item_id bigint DEFAULT NULL)
RETURNS boardready.queue_claimed[]
LANGUAGE plpgsql AS $$
DECLARE
  v_claimed boardready.queue_claimed[];
BEGIN
  UPDATE boardready.work_items q
     SET status = boardready_private.queue_expired_status(q.attempts, p_max_attempts), run_after = p_now,
         reason_code = CASE WHEN q.attempts >= p_max_attempts THEN 'lease_expired' ELSE q.reason_code END,
         error_class = CASE WHEN q.attempts >= p_max_attempts THEN 'LeaseExpired' ELSE q.error_class END,
         failed_at = CASE WHEN q.attempts >= p_max_attempts THEN p_now ELSE q.failed_at END,
         lease_token = NULL, leased_until = NULL, leased_by = NULL, updated_at = p_now
   WHERE q.id IN (SELECT x.id FROM boardready.work_items x
                   WHERE x.status = 'leased' AND x.leased_until < p_now AND x.kind = ANY (p_kinds)
                     FOR UPDATE SKIP LOCKED);
  IF p_item_id IS NOT NULL THEN
    WITH claimed AS (
      UPDATE boardready.work_items q
         SET status = 'leased', attempts = q.attempts + 1, lease_token = gen_random_uuid(),
             leased_until = p_now + make_interval(secs => p_lease_seconds), leased_by = p_worker, updated_at = p_now
       WHERE q.id = (SELECT x.id FROM boardready.work_items x
                      WHERE x.id = p_item_id AND x.status = 'accepted' AND x.kind = ANY (p_kinds)
                        FOR UPDATE SKIP LOCKED)
      RETURNING q.id, q.lease_token, q.attempts
    )
    SELECT coalesce(array_agg(ROW(c.id, c.lease_token, c.attempts)::boardready.queue_claimed), '{}') INTO v_claimed
      FROM claimed c;
    RETURN v_claimed;
  END IF;
  WITH due AS (
    SELECT x.id FROM boardready.work_items x
     WHERE x.status = 'accepted' AND x.run_after <= p_now AND x.kind = ANY (p_kinds)
     ORDER BY x.run_after, x.id
       FOR UPDATE SKIP LOCKED
     LIMIT p_limit
  ), claimed AS (
    UPDATE boardready.work_items q
       SET status = 'leased', attempts = q.attempts + 1, lease_token = gen_random_uuid(),
           leased_until = p_now + make_interval(secs => p_lease_seconds), leased_by = p_worker, updated_at = p_now
      FROM due
     WHERE q.id = due.id
    RETURNING q.id, q.lease_token, q.attempts
  )
  SELECT coalesce(array_agg(ROW(c.id, c.lease_token, c.attempts)::boardready.queue_claimed), '{}') INTO v_claimed
    FROM claimed c;
  RETURN v_claimed;
END $$;

-- Claim due items of the given kinds with their subject ids (supply work).
CREATE OR REPLACE FUNCTION boardready.work_claim(
  p_kinds text[], p_worker text, p_limit integer, p_lease_seconds integer, p_max_attempts integer,
  p_now timestamptz DEFAULT now())
RETURNS TABLE (item_id bigint, lease_token uuid, kind text, subject_id bigint, installation_id bigint,
               attempts integer)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = boardready, pg_temp AS $$
DECLARE
  v_claimed queue_claimed[] := boardready_private.work_lease_due(p_kinds, p_worker, p_limit, p_lease_seconds, p_max_attempts, p_now);
BEGIN
  -- A statement of its own, so its snapshot sees every row the claim took.
  RETURN QUERY
  SELECT w.id, c.lease_token, w.kind, w.subject_id, w.installation_id, c.attempts
    FROM unnest(v_claimed) c JOIN work_items w ON w.id = c.id
   ORDER BY w.run_after, w.id;
END $$;

-- Lock the item if the caller's lease is still the current one; its attempts
-- (NULL: the lease was lost).
CREATE OR REPLACE FUNCTION boardready_private.work_lock_leased(p_item_id bigint, p_lease_token uuid)
RETURNS integer LANGUAGE sql AS $$
  SELECT w.attempts FROM boardready.work_items w
   WHERE w.id = p_item_id AND w.status = 'leased' AND w.lease_token = p_lease_token
     FOR UPDATE
$$;

-- The previous release (0.6.0) names a reconciliation item by the id it had
-- before 0032 numbered it into work_items: a lease it held across the
-- upgrade is found by its token. The item's id in work_items.
CREATE OR REPLACE FUNCTION boardready_private.work_item_for_lease(p_item_id bigint, p_lease_token uuid)
RETURNS bigint LANGUAGE sql STABLE AS $$
  SELECT coalesce((SELECT w.id FROM boardready.work_items w WHERE w.id = p_item_id AND w.lease_token = p_lease_token),
                  (SELECT w.id FROM boardready.work_items w WHERE w.status = 'leased' AND w.lease_token = p_lease_token),
                  p_item_id)
$$;

-- An item's work is done: completed with its outcome, if the lease is still the caller's.
CREATE OR REPLACE FUNCTION boardready.work_complete(
  p_item_id bigint, p_lease_token uuid, p_outcome text, p_now timestamptz DEFAULT now())
RETURNS boolean LANGUAGE plpgsql SECURITY DEFINER SET search_path = boardready, pg_temp AS $$
BEGIN
  IF boardready_private.work_lock_leased(p_item_id, p_lease_token) IS NULL THEN
    RETURN false;
  END IF;
  UPDATE work_items SET status = 'completed', outcome = p_outcome, completed_at = p_now, lease_token = NULL,
         leased_until = NULL, leased_by = NULL, updated_at = p_now
   WHERE id = p_item_id;
  RETURN true;
END $$;

-- A failed attempt: back off and retry, or dead-letter after the last attempt
-- (or at once when p_final); queue_retry_after decides. The workers call it
-- for every kind whose failure has no effect beyond the item (reconciliation
-- items, supply work; the outbox's outbox_fail adds its own).
CREATE OR REPLACE FUNCTION boardready.work_fail(
  p_item_id bigint, p_lease_token uuid, p_reason_code text, p_error_class text, p_max_attempts integer,
  p_now timestamptz DEFAULT now(), p_not_before timestamptz DEFAULT NULL, p_final boolean DEFAULT false)
RETURNS TABLE (outcome text, run_after timestamptz)
LANGUAGE plpgsql ROWS 1 SECURITY DEFINER SET search_path = boardready, pg_temp AS $$
DECLARE
  v_attempts integer;
  v_after    timestamptz;
BEGIN
  PERFORM boardready_private.job_check_failure_codes(p_reason_code, p_error_class);
  v_attempts := boardready_private.work_lock_leased(p_item_id, p_lease_token);
  IF v_attempts IS NULL THEN
    RETURN QUERY SELECT 'lease_lost'::text, NULL::timestamptz;
    RETURN;
  END IF;
  v_after := boardready_private.queue_retry_after(v_attempts, p_max_attempts, p_final, p_not_before, p_now);
  UPDATE work_items w
     SET status = CASE WHEN v_after IS NULL THEN 'dead_letter' ELSE 'accepted' END,
         run_after = coalesce(v_after, w.run_after), reason_code = p_reason_code, error_class = p_error_class,
         failed_at = p_now, lease_token = NULL, leased_until = NULL, leased_by = NULL, updated_at = p_now
   WHERE w.id = p_item_id;
  RETURN QUERY SELECT CASE WHEN v_after IS NULL THEN 'dead_letter' ELSE 'retry_scheduled' END, v_after;
END $$;

-- The kinds of each queue of work_items (its workers claim them together),
-- and each queue's NOTIFY channel (a hint that work is waiting).
CREATE OR REPLACE FUNCTION boardready_private.work_queue_kinds(p_queue text)
RETURNS text[] LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE p_queue
    WHEN 'outbox' THEN ARRAY['check_run_create', 'workflow_dispatch', 'check_run_complete', 'check_run_decision',
                             'pr_comment']
    WHEN 'reconciliation' THEN ARRAY['workflow_attempt', 'release_run', 'lifecycle_inbox']
    WHEN 'supply' THEN ARRAY['supply_check', 'board_refresh'] END
$$;

CREATE OR REPLACE FUNCTION boardready_private.work_channel(p_kind text)
RETURNS text LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE WHEN p_kind = ANY (boardready_private.work_queue_kinds('supply')) THEN 'boardready_supply'
              WHEN p_kind = ANY (boardready_private.work_queue_kinds('reconciliation')) THEN 'reconciliation_items'
              ELSE 'outbox_items' END
$$;

-- Give a claimed item back untouched (a worker shutting down): not an attempt.
CREATE OR REPLACE FUNCTION boardready.work_release(
  p_item_id bigint, p_lease_token uuid, p_now timestamptz DEFAULT now())
RETURNS TABLE (outcome text)
LANGUAGE plpgsql ROWS 1 SECURITY DEFINER SET search_path = boardready, pg_temp AS $$
DECLARE
  v_kind text;
BEGIN
  IF boardready_private.work_lock_leased(p_item_id, p_lease_token) IS NULL THEN
    RETURN QUERY SELECT 'lease_lost'::text;
    RETURN;
  END IF;
  UPDATE work_items SET status = 'accepted', attempts = greatest(attempts - 1, 0), run_after = p_now,
         lease_token = NULL, leased_until = NULL, leased_by = NULL, updated_at = p_now
   WHERE id = p_item_id
  RETURNING kind INTO v_kind;
  PERFORM pg_notify(boardready_private.work_channel(v_kind), '');
  RETURN QUERY SELECT 'released'::text;
END $$;

-- Put a leased item back until p_run_after without counting the attempt
-- (the provider's budget is spent: the work waits, it did not fail).
CREATE OR REPLACE FUNCTION boardready.work_defer(
  p_item_id bigint, p_lease_token uuid, p_run_after timestamptz, p_now timestamptz DEFAULT now())
RETURNS TABLE (outcome text)
LANGUAGE plpgsql ROWS 1 SECURITY DEFINER SET search_path = boardready, pg_temp AS $$
BEGIN
  IF boardready_private.work_lock_leased(p_item_id, p_lease_token) IS NULL THEN
    RETURN QUERY SELECT 'lease_lost'::text;
    RETURN;
  END IF;
  UPDATE work_items SET status = 'accepted', attempts = greatest(attempts - 1, 0), run_after = p_run_after,
         lease_token = NULL, leased_until = NULL, leased_by = NULL, updated_at = p_now
   WHERE id = p_item_id;
  RETURN QUERY SELECT 'deferred'::text;
END $$;

-- Extend the leases a live worker still holds on items it is running
-- (workers/queue_worker.py renews them a few times per lease), so that an
-- item slower than its lease is not claimed and run a second time by another
-- worker meanwhile. A lease already taken over (another token) or ended is
-- left alone. Returns the ids whose lease was extended.
CREATE OR REPLACE FUNCTION boardready.work_renew_leases(
  p_ids bigint[], p_lease_tokens uuid[], p_lease_seconds integer, p_now timestamptz DEFAULT now())
RETURNS SETOF bigint
LANGUAGE sql SECURITY DEFINER SET search_path = boardready, pg_temp AS $$
  UPDATE work_items q
     SET leased_until = greatest(q.leased_until, p_now + make_interval(secs => p_lease_seconds))
    FROM unnest(p_ids, p_lease_tokens) AS held (id, lease_token)
   WHERE q.id = held.id AND q.lease_token = held.lease_token AND q.status = 'leased'
  RETURNING q.id
$$;

-- ---------------------------------------------------------------------------
-- lifecycle_jobs: the same rules, over the jobs' own table.

CREATE OR REPLACE FUNCTION boardready_private.job_lease_due(
  p_worker text, p_limit integer, p_lease_seconds integer, p_max_attempts integer, p_now timestamptz)
RETURNS boardready.queue_claimed[]
LANGUAGE plpgsql AS $$
DECLARE
  v_claimed boardready.queue_claimed[];
BEGIN
  UPDATE boardready.lifecycle_jobs q
     SET status = boardready_private.queue_expired_status(q.attempts, p_max_attempts), run_after = p_now,
         reason_code = CASE WHEN q.attempts >= p_max_attempts THEN 'lease_expired' ELSE q.reason_code END,
         error_class = CASE WHEN q.attempts >= p_max_attempts THEN 'LeaseExpired' ELSE q.error_class END,
         failed_at = CASE WHEN q.attempts >= p_max_attempts THEN p_now ELSE q.failed_at END,
         lease_token = NULL, leased_until = NULL, leased_by = NULL, updated_at = p_now
   WHERE q.id IN (SELECT x.id FROM boardready.lifecycle_jobs x
                   WHERE x.status = 'leased' AND x.leased_until < p_now
                     FOR UPDATE SKIP LOCKED);
  WITH due AS (
    SELECT x.id FROM boardready.lifecycle_jobs x
     WHERE x.status = 'accepted' AND x.run_after <= p_now
     ORDER BY x.run_after, x.id
       FOR UPDATE SKIP LOCKED
     LIMIT p_limit
  ), claimed AS (
    UPDATE boardready.lifecycle_jobs q
       SET status = 'leased', attempts = q.attempts + 1, lease_token = gen_random_uuid(),
           leased_until = p_now + make_interval(secs => p_lease_seconds), leased_by = p_worker, updated_at = p_now
      FROM due
     WHERE q.id = due.id
    RETURNING q.id, q.lease_token, q.attempts
  )
  SELECT coalesce(array_agg(ROW(c.id, c.lease_token, c.attempts)::boardready.queue_claimed), '{}') INTO v_claimed
    FROM claimed c;
  RETURN v_claimed;
END $$;

CREATE OR REPLACE FUNCTION boardready_private.job_lock_leased(p_job_id bigint, p_lease_token uuid)
RETURNS integer LANGUAGE sql AS $$
  SELECT j.attempts FROM boardready.lifecycle_jobs j
   WHERE j.id = p_job_id AND j.status = 'leased' AND j.lease_token = p_lease_token
     FOR UPDATE
$$;

CREATE OR REPLACE FUNCTION boardready.job_complete(
  p_job_id bigint, p_lease_token uuid, p_outcome text, p_now timestamptz DEFAULT now())
RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
  IF boardready_private.job_lock_leased(p_job_id, p_lease_token) IS NULL THEN
    RETURN false;
  END IF;
  UPDATE boardready.lifecycle_jobs SET status = 'completed', outcome = p_outcome, completed_at = p_now,
         lease_token = NULL, leased_until = NULL, leased_by = NULL, updated_at = p_now
   WHERE id = p_job_id;
  RETURN true;
END $$;

CREATE OR REPLACE FUNCTION boardready.job_fail(
  p_job_id bigint, p_lease_token uuid, p_reason_code text, p_error_class text, p_max_attempts integer,
  p_now timestamptz DEFAULT now(), p_not_before timestamptz DEFAULT NULL, p_final boolean DEFAULT false)
RETURNS TABLE (outcome text, run_after timestamptz)
LANGUAGE plpgsql ROWS 1 SECURITY DEFINER SET search_path = boardready, pg_temp AS $$
DECLARE
  v_attempts integer;
  v_after    timestamptz;
BEGIN
  PERFORM boardready_private.job_check_failure_codes(p_reason_code, p_error_class);
  v_attempts := boardready_private.job_lock_leased(p_job_id, p_lease_token);
  IF v_attempts IS NULL THEN
    RETURN QUERY SELECT 'lease_lost'::text, NULL::timestamptz;
    RETURN;
  END IF;
  v_after := boardready_private.queue_retry_after(v_attempts, p_max_attempts, p_final, p_not_before, p_now);
  UPDATE lifecycle_jobs j
     SET status = CASE WHEN v_after IS NULL THEN 'dead_letter' ELSE 'accepted' END,
         run_after = coalesce(v_after, j.run_after), reason_code = p_reason_code, error_class = p_error_class,
         failed_at = p_now, lease_token = NULL, leased_until = NULL, leased_by = NULL, updated_at = p_now
   WHERE j.id = p_job_id;
  RETURN QUERY SELECT CASE WHEN v_after IS NULL THEN 'dead_letter' ELSE 'retry_scheduled' END, v_after;
END $$;

CREATE OR REPLACE FUNCTION boardready.job_release(
  p_job_id bigint, p_lease_token uuid, p_now timestamptz DEFAULT now())
RETURNS TABLE (outcome text)
LANGUAGE plpgsql ROWS 1 SECURITY DEFINER SET search_path = boardready, pg_temp AS $$
BEGIN
  IF boardready_private.job_lock_leased(p_job_id, p_lease_token) IS NULL THEN
    RETURN QUERY SELECT 'lease_lost'::text;
    RETURN;
  END IF;
  UPDATE lifecycle_jobs SET status = 'accepted', attempts = greatest(attempts - 1, 0), run_after = p_now,
         lease_token = NULL, leased_until = NULL, leased_by = NULL, updated_at = p_now
   WHERE id = p_job_id;
  PERFORM pg_notify('lifecycle_jobs', '');
  RETURN QUERY SELECT 'released'::text;
END $$;

CREATE OR REPLACE FUNCTION boardready.job_renew_leases(
  p_ids bigint[], p_lease_tokens uuid[], p_lease_seconds integer, p_now timestamptz DEFAULT now())
RETURNS SETOF bigint
LANGUAGE sql SECURITY DEFINER SET search_path = boardready, pg_temp AS $$
  UPDATE lifecycle_jobs q
     SET leased_until = greatest(q.leased_until, p_now + make_interval(secs => p_lease_seconds))
    FROM unnest(p_ids, p_lease_tokens) AS held (id, lease_token)
   WHERE q.id = held.id AND q.lease_token = held.lease_token AND q.status = 'leased'
  RETURNING q.id
$$;

-- ---------------------------------------------------------------------------
-- schedules: one row per periodic producer (0020). The replica that leases a
-- due row runs the tick; nobody else can until it completes or its lease ends.

CREATE OR REPLACE FUNCTION boardready.schedule_claim(
  p_names text[], p_worker text, p_lease_seconds integer, p_now timestamptz DEFAULT now(),
  p_due_now text[] DEFAULT '{}')
RETURNS TABLE (schedule_id bigint, lease_token uuid, name text, attempts integer)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = boardready, pg_temp AS $$
BEGIN
  -- A NOTIFY that asks for a tick now (a due erasure: retention_sweep) brings it forward.
  UPDATE schedules s SET run_after = p_now, updated_at = p_now
   WHERE s.name = ANY (p_due_now) AND s.name = ANY (p_names) AND s.status = 'accepted' AND s.run_after > p_now;
  RETURN QUERY
  WITH due AS (
    SELECT x.id FROM schedules x
     WHERE x.name = ANY (p_names)
       AND ((x.status = 'accepted' AND x.run_after <= p_now) OR (x.status = 'leased' AND x.leased_until < p_now))
     ORDER BY x.run_after, x.id
       FOR UPDATE SKIP LOCKED
  )
  UPDATE schedules s
     SET status = 'leased', attempts = s.attempts + 1, lease_token = gen_random_uuid(),
         leased_until = p_now + make_interval(secs => p_lease_seconds), leased_by = p_worker, updated_at = p_now
    FROM due
   WHERE s.id = due.id
  RETURNING s.id, s.lease_token, s.name, s.attempts;
END $$;

-- A tick ended (p_reason_code set: it failed): due again p_interval_ms after
-- it ended. Returns false when the lease was lost (the tick ran too long and
-- another replica took it over).
CREATE OR REPLACE FUNCTION boardready.schedule_complete(
  p_schedule_id bigint, p_lease_token uuid, p_interval_ms integer, p_outcome text,
  p_reason_code text DEFAULT NULL, p_error_class text DEFAULT NULL, p_now timestamptz DEFAULT now())
RETURNS boolean
LANGUAGE plpgsql SECURITY DEFINER SET search_path = boardready, pg_temp AS $$
BEGIN
  IF p_reason_code IS NOT NULL THEN
    PERFORM boardready_private.job_check_failure_codes(p_reason_code, p_error_class);
  END IF;
  UPDATE schedules
     SET status = 'accepted', attempts = 0, run_after = p_now + make_interval(secs => p_interval_ms / 1000.0),
         outcome = p_outcome, reason_code = p_reason_code, error_class = p_error_class, completed_at = p_now,
         lease_token = NULL, leased_until = NULL, leased_by = NULL, updated_at = p_now
   WHERE id = p_schedule_id AND status = 'leased' AND lease_token = p_lease_token;
  RETURN FOUND;
END $$;

-- Give a leased tick back unstarted (a worker shutting down): due at once for another replica.
CREATE OR REPLACE FUNCTION boardready.schedule_release(
  p_schedule_id bigint, p_lease_token uuid, p_now timestamptz DEFAULT now())
RETURNS TABLE (outcome text)
LANGUAGE plpgsql ROWS 1 SECURITY DEFINER SET search_path = boardready, pg_temp AS $$
BEGIN
  UPDATE schedules SET status = 'accepted', attempts = greatest(attempts - 1, 0), run_after = p_now,
         lease_token = NULL, leased_until = NULL, leased_by = NULL, updated_at = p_now
   WHERE id = p_schedule_id AND status = 'leased' AND lease_token = p_lease_token;
  IF NOT FOUND THEN
    RETURN QUERY SELECT 'lease_lost'::text;
    RETURN;
  END IF;
  PERFORM pg_notify('schedules', '');
  RETURN QUERY SELECT 'released'::text;
END $$;

CREATE OR REPLACE FUNCTION boardready.schedule_renew_leases(
  p_ids bigint[], p_lease_tokens uuid[], p_lease_seconds integer, p_now timestamptz DEFAULT now())
RETURNS SETOF bigint
LANGUAGE sql SECURITY DEFINER SET search_path = boardready, pg_temp AS $$
  UPDATE schedules q
     SET leased_until = greatest(q.leased_until, p_now + make_interval(secs => p_lease_seconds))
    FROM unnest(p_ids, p_lease_tokens) AS held (id, lease_token)
   WHERE q.id = held.id AND q.lease_token = held.lease_token AND q.status = 'leased'
  RETURNING q.id
$$;

-- ---------------------------------------------------------------------------
-- The previous release's names (0.6.0 calls queue_fail, queue_release and
-- queue_renew_leases with a table name; its other queue_* are internal to
-- bodies this release replaced). They keep their signatures and meaning for
-- one release, each a static choice between the two queue tables above, and
-- go in the release after (a migration drops them).

CREATE OR REPLACE FUNCTION boardready_private.queue_check_table(p_table text)
RETURNS void LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
  IF p_table NOT IN ('lifecycle_jobs', 'outbox_items', 'reconciliation_items', 'work_items') THEN
    RAISE EXCEPTION 'queue_unknown_table' USING ERRCODE = '22023';
  END IF;
END $$;

-- The kinds a previous-release table name stands for.
CREATE OR REPLACE FUNCTION boardready_private.queue_table_kinds(p_table text)
RETURNS text[] LANGUAGE sql IMMUTABLE AS $$
  SELECT boardready_private.work_queue_kinds(CASE p_table WHEN 'outbox_items' THEN 'outbox'
                                                  WHEN 'reconciliation_items' THEN 'reconciliation'
                                                  ELSE 'supply' END)
$$;

CREATE OR REPLACE FUNCTION boardready_private.queue_claim(
  p_table text, p_worker text, p_limit integer, p_lease_seconds integer, p_max_attempts integer,
  p_now timestamptz)
RETURNS TABLE (id bigint, lease_token uuid, attempts integer)
LANGUAGE sql AS $$
  SELECT c.id, c.lease_token, c.attempts
    FROM unnest(boardready_private.queue_claim_all(p_table, p_worker, p_limit, p_lease_seconds, p_max_attempts, p_now)) c
$$;

CREATE OR REPLACE FUNCTION boardready_private.queue_claim_all(
  p_table text, p_worker text, p_limit integer, p_lease_seconds integer, p_max_attempts integer,
  p_now timestamptz, p_item_id bigint DEFAULT NULL)
RETURNS boardready.queue_claimed[] LANGUAGE plpgsql AS $$
BEGIN
  PERFORM boardready_private.queue_check_table(p_table);
  IF p_table = 'lifecycle_jobs' THEN
    RETURN boardready_private.job_lease_due(p_worker, p_limit, p_lease_seconds, p_max_attempts, p_now);
  END IF;
  RETURN boardready_private.work_lease_due(boardready_private.queue_table_kinds(p_table), p_worker, p_limit, p_lease_seconds,
                                   p_max_attempts, p_now, p_item_id);
END $$;

CREATE OR REPLACE FUNCTION boardready_private.queue_claim_one(
  p_table text, p_id bigint, p_worker text, p_lease_seconds integer, p_now timestamptz)
RETURNS TABLE (id bigint, lease_token uuid, attempts integer)
LANGUAGE sql AS $$
  SELECT c.id, c.lease_token, c.attempts
    FROM unnest(boardready_private.work_lease_due(boardready_private.queue_table_kinds(p_table), p_worker, 1, p_lease_seconds,
                                          2147483647, p_now, p_id)) c
$$;

CREATE OR REPLACE FUNCTION boardready.queue_renew_leases(
  p_table text, p_ids bigint[], p_lease_tokens uuid[], p_lease_seconds integer, p_now timestamptz DEFAULT now())
RETURNS SETOF bigint
LANGUAGE plpgsql SECURITY DEFINER SET search_path = boardready, pg_temp AS $$
BEGIN
  PERFORM boardready_private.queue_check_table(p_table);
  IF p_table = 'lifecycle_jobs' THEN
    RETURN QUERY SELECT * FROM job_renew_leases(p_ids, p_lease_tokens, p_lease_seconds, p_now);
  ELSE
    RETURN QUERY SELECT * FROM work_renew_leases(
      ARRAY(SELECT boardready_private.work_item_for_lease(h.id, h.token) FROM unnest(p_ids, p_lease_tokens) AS h (id, token)),
      p_lease_tokens, p_lease_seconds, p_now);
  END IF;
END $$;

CREATE OR REPLACE FUNCTION boardready_private.queue_lock_leased(p_table text, p_id bigint, p_lease_token uuid)
RETURNS integer LANGUAGE plpgsql AS $$
BEGIN
  PERFORM boardready_private.queue_check_table(p_table);
  IF p_table = 'lifecycle_jobs' THEN
    RETURN boardready_private.job_lock_leased(p_id, p_lease_token);
  END IF;
  RETURN boardready_private.work_lock_leased(boardready_private.work_item_for_lease(p_id, p_lease_token), p_lease_token);
END $$;

CREATE OR REPLACE FUNCTION boardready.queue_complete(
  p_table text, p_id bigint, p_lease_token uuid, p_outcome text, p_now timestamptz)
RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
  PERFORM boardready_private.queue_check_table(p_table);
  IF p_table = 'lifecycle_jobs' THEN
    RETURN boardready.job_complete(p_id, p_lease_token, p_outcome, p_now);
  END IF;
  RETURN boardready.work_complete(boardready_private.work_item_for_lease(p_id, p_lease_token), p_lease_token, p_outcome,
                                  p_now);
END $$;

CREATE OR REPLACE FUNCTION boardready.queue_fail(
  p_table text, p_id bigint, p_lease_token uuid, p_reason_code text, p_error_class text,
  p_max_attempts integer, p_now timestamptz DEFAULT now(), p_not_before timestamptz DEFAULT NULL,
  p_final boolean DEFAULT false)
RETURNS TABLE (outcome text, run_after timestamptz)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = boardready, pg_temp AS $$
BEGIN
  PERFORM boardready_private.queue_check_table(p_table);
  IF p_table = 'lifecycle_jobs' THEN
    RETURN QUERY SELECT * FROM job_fail(p_id, p_lease_token, p_reason_code, p_error_class, p_max_attempts, p_now,
                                        p_not_before, p_final);
  ELSE
    RETURN QUERY SELECT * FROM work_fail(boardready_private.work_item_for_lease(p_id, p_lease_token), p_lease_token, p_reason_code,
                                         p_error_class, p_max_attempts, p_now, p_not_before, p_final);
  END IF;
END $$;

CREATE OR REPLACE FUNCTION boardready.queue_release(
  p_table text, p_id bigint, p_lease_token uuid, p_now timestamptz DEFAULT now())
RETURNS TABLE (outcome text)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = boardready, pg_temp AS $$
BEGIN
  PERFORM boardready_private.queue_check_table(p_table);
  IF p_table = 'lifecycle_jobs' THEN
    RETURN QUERY SELECT * FROM job_release(p_id, p_lease_token, p_now);
  ELSE
    RETURN QUERY SELECT * FROM work_release(boardready_private.work_item_for_lease(p_id, p_lease_token), p_lease_token, p_now);
  END IF;
END $$;

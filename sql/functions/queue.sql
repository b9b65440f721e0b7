-- The lease, retry, backoff and dead-letter rules, written once for every
-- queue table (lifecycle_jobs, outbox_items, reconciliation_items,
-- work_items; schedules take leases and renewals only). Each queue wraps these
-- with its own claim (which returns its own context) and its own completions.

CREATE OR REPLACE FUNCTION boardready.queue_check_table(p_table text)
RETURNS void LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
  IF p_table NOT IN ('lifecycle_jobs', 'outbox_items', 'reconciliation_items', 'work_items', 'schedules') THEN
    RAISE EXCEPTION 'queue_unknown_table' USING ERRCODE = '22023';
  END IF;
END $$;

CREATE OR REPLACE FUNCTION boardready.queue_claim(
  p_table text, p_worker text, p_limit integer, p_lease_seconds integer, p_max_attempts integer,
  p_now timestamptz)
RETURNS TABLE (id bigint, lease_token uuid, attempts integer)
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM boardready.queue_check_table(p_table);
  -- A worker that died holding its last attempt does not get another run.
  EXECUTE format($q$
    UPDATE boardready.%1$I q
       SET status = 'dead_letter', reason_code = 'lease_expired', error_class = 'LeaseExpired',
           failed_at = $1, lease_token = NULL, leased_until = NULL, leased_by = NULL, updated_at = $1
     WHERE q.id IN (SELECT x.id FROM boardready.%1$I x
                     WHERE x.status = 'leased' AND x.leased_until < $1 AND x.attempts >= $2
                     FOR UPDATE SKIP LOCKED)$q$, p_table)
  USING p_now, p_max_attempts;

  RETURN QUERY EXECUTE format($q$
    WITH due AS (
      SELECT x.id FROM boardready.%1$I x
       WHERE (x.status = 'accepted' AND x.run_after <= $1)
          OR (x.status = 'leased' AND x.leased_until < $1)
       ORDER BY x.id
       FOR UPDATE SKIP LOCKED
       LIMIT $2)
    UPDATE boardready.%1$I q
       SET status = 'leased', attempts = q.attempts + 1, lease_token = gen_random_uuid(),
           leased_until = $1 + make_interval(secs => $3), leased_by = $4, updated_at = $1
      FROM due
     WHERE q.id = due.id
    RETURNING q.id, q.lease_token, q.attempts$q$, p_table)
  USING p_now, p_limit, p_lease_seconds, p_worker;
END $$;

-- The claimed rows as one value. A queue's claim joins them to its table in a
-- second statement: joined in the claiming statement itself, a row committed
-- after that statement's snapshot but claimed by its inner UPDATE would be
-- leased yet missing from the result, and wait for its lease to expire.
-- (The type boardready.queue_claimed is in migration 0005.)
CREATE OR REPLACE FUNCTION boardready.queue_claim_all(
  p_table text, p_worker text, p_limit integer, p_lease_seconds integer, p_max_attempts integer,
  p_now timestamptz, p_item_id bigint DEFAULT NULL)
RETURNS boardready.queue_claimed[] LANGUAGE sql AS $$
  SELECT coalesce(array_agg(ROW(c.id, c.lease_token, c.attempts)::boardready.queue_claimed), '{}')
    FROM (SELECT * FROM boardready.queue_claim(p_table, p_worker, p_limit, p_lease_seconds, p_max_attempts, p_now)
           WHERE p_item_id IS NULL
          UNION ALL
          SELECT * FROM boardready.queue_claim_one(p_table, p_item_id, p_worker, p_lease_seconds, p_now)
           WHERE p_item_id IS NOT NULL) c
$$;

-- Claim one given item when it is claimable (accepted, or its lease expired);
-- its due time is not waited for: the caller publishes it right now.
CREATE OR REPLACE FUNCTION boardready.queue_claim_one(
  p_table text, p_id bigint, p_worker text, p_lease_seconds integer, p_now timestamptz)
RETURNS TABLE (id bigint, lease_token uuid, attempts integer)
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM boardready.queue_check_table(p_table);
  RETURN QUERY EXECUTE format($q$
    UPDATE boardready.%1$I q
       SET status = 'leased', attempts = q.attempts + 1, lease_token = gen_random_uuid(),
           leased_until = $1 + make_interval(secs => $3), leased_by = $4, updated_at = $1
     WHERE q.id = (SELECT x.id FROM boardready.%1$I x
                    WHERE x.id = $2 AND (x.status = 'accepted' OR (x.status = 'leased' AND x.leased_until < $1))
                    FOR UPDATE SKIP LOCKED)
    RETURNING q.id, q.lease_token, q.attempts$q$, p_table)
  USING p_now, p_id, p_lease_seconds, p_worker;
END $$;

-- Extend the leases a live worker still holds on items it is running
-- (workers/queue_worker.py renews them a few times per lease), so that an
-- item slower than its lease is not claimed and run a second time by another
-- worker meanwhile. A lease already taken over (another token) or ended is
-- left alone. Returns the ids whose lease was extended.
CREATE OR REPLACE FUNCTION boardready.queue_renew_leases(
  p_table text, p_ids bigint[], p_lease_tokens uuid[], p_lease_seconds integer, p_now timestamptz DEFAULT now())
RETURNS SETOF bigint
LANGUAGE plpgsql SECURITY DEFINER SET search_path = boardready, pg_temp AS $$
BEGIN
  PERFORM queue_check_table(p_table);
  RETURN QUERY EXECUTE format($q$
    UPDATE boardready.%1$I q
       SET leased_until = greatest(q.leased_until, $1 + make_interval(secs => $2))
      FROM unnest($3::bigint[], $4::uuid[]) AS held (id, lease_token)
     WHERE q.id = held.id AND q.lease_token = held.lease_token AND q.status = 'leased'
    RETURNING q.id$q$, p_table)
  USING p_now, p_lease_seconds, p_ids, p_lease_tokens;
END $$;

-- Lock the item if the caller's lease is still the current one.
CREATE OR REPLACE FUNCTION boardready.queue_lock_leased(p_table text, p_id bigint, p_lease_token uuid)
RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
  v_attempts integer;
BEGIN
  PERFORM boardready.queue_check_table(p_table);
  EXECUTE format('SELECT attempts FROM boardready.%I WHERE id = $1 AND status = ''leased'' AND lease_token = $2 '
                 'FOR UPDATE', p_table)
    INTO v_attempts USING p_id, p_lease_token;
  RETURN v_attempts;  -- NULL: the lease was lost
END $$;

CREATE OR REPLACE FUNCTION boardready.queue_complete(
  p_table text, p_id bigint, p_lease_token uuid, p_outcome text, p_now timestamptz)
RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
  IF boardready.queue_lock_leased(p_table, p_id, p_lease_token) IS NULL THEN
    RETURN false;
  END IF;
  EXECUTE format('UPDATE boardready.%I SET status = ''completed'', outcome = $2, completed_at = $3, '
                 'lease_token = NULL, leased_until = NULL, leased_by = NULL, updated_at = $3 WHERE id = $1', p_table)
    USING p_id, p_outcome, p_now;
  RETURN true;
END $$;

-- A failed attempt: back off and retry, or dead-letter after the last attempt
-- (or at once when p_final). p_not_before honours the code host's Retry-After.
-- The workers call it directly for a queue whose failure has no effect beyond
-- the item (lifecycle jobs, reconciliation items; the per-queue copies
-- job_fail and reconciliation_fail are gone), hence SECURITY DEFINER; the
-- table is checked against the queue tables (queue_check_table).
CREATE OR REPLACE FUNCTION boardready.queue_fail(
  p_table text, p_id bigint, p_lease_token uuid, p_reason_code text, p_error_class text,
  p_max_attempts integer, p_now timestamptz DEFAULT now(), p_not_before timestamptz DEFAULT NULL,
  p_final boolean DEFAULT false)
RETURNS TABLE (outcome text, run_after timestamptz)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = boardready, pg_temp AS $$
DECLARE
  v_attempts integer;
  v_delay    double precision;
  v_after    timestamptz;
BEGIN
  PERFORM boardready.job_check_failure_codes(p_reason_code, p_error_class);
  v_attempts := boardready.queue_lock_leased(p_table, p_id, p_lease_token);
  IF v_attempts IS NULL THEN
    RETURN QUERY SELECT 'lease_lost'::text, NULL::timestamptz;
    RETURN;
  END IF;

  IF p_final OR v_attempts >= p_max_attempts THEN
    EXECUTE format('UPDATE boardready.%I SET status = ''dead_letter'', reason_code = $2, error_class = $3, '
                   'failed_at = $4, lease_token = NULL, leased_until = NULL, leased_by = NULL, updated_at = $4 '
                   'WHERE id = $1', p_table)
      USING p_id, p_reason_code, p_error_class, p_now;
    RETURN QUERY SELECT 'dead_letter'::text, NULL::timestamptz;
    RETURN;
  END IF;

  -- Exponential backoff, 1 s doubling per attempt, capped at 5 minutes, with
  -- +-25 % jitter so that a burst of failures does not retry in lockstep.
  v_delay := least(300, power(2, v_attempts - 1)) * (0.75 + random() * 0.5);
  v_after := greatest(p_now + make_interval(secs => v_delay), p_not_before);
  EXECUTE format('UPDATE boardready.%I SET status = ''accepted'', reason_code = $2, error_class = $3, failed_at = $4, '
                 'run_after = $5, lease_token = NULL, leased_until = NULL, leased_by = NULL, updated_at = $4 '
                 'WHERE id = $1', p_table)
    USING p_id, p_reason_code, p_error_class, p_now, v_after;
  RETURN QUERY SELECT 'retry_scheduled'::text, v_after;
END $$;

-- Give a claimed item back untouched (a worker shutting down): not an
-- attempt. Each queue's NOTIFY channel is named after its table. Every
-- worker calls it directly (the per-queue copies job_release,
-- reconciliation_release and outbox_release are gone), hence SECURITY DEFINER.
CREATE OR REPLACE FUNCTION boardready.queue_release(
  p_table text, p_id bigint, p_lease_token uuid, p_now timestamptz DEFAULT now())
RETURNS TABLE (outcome text)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = boardready, pg_temp AS $$
BEGIN
  IF boardready.queue_lock_leased(p_table, p_id, p_lease_token) IS NULL THEN
    RETURN QUERY SELECT 'lease_lost'::text;
    RETURN;
  END IF;
  EXECUTE format('UPDATE boardready.%I SET status = ''accepted'', attempts = greatest(attempts - 1, 0), '
                 'run_after = $2, lease_token = NULL, leased_until = NULL, leased_by = NULL, updated_at = $2 '
                 'WHERE id = $1', p_table)
    USING p_id, p_now;
  PERFORM pg_notify(p_table, '');
  RETURN QUERY SELECT 'released'::text;
END $$;

-- ---------------------------------------------------------------------------
-- work_items: the queue of supply work (0020), claimed by a static statement.

-- Claim due items of the given kinds, in the order the kinds are given
-- (a pull request's supply check before a board's daily refresh). A worker
-- that died holding an item's last attempt dead-letters it, as queue_claim does.
CREATE OR REPLACE FUNCTION boardready.work_claim(
  p_kinds text[], p_worker text, p_limit integer, p_lease_seconds integer, p_max_attempts integer,
  p_now timestamptz DEFAULT now())
RETURNS TABLE (item_id bigint, lease_token uuid, kind text, subject_id bigint, installation_id bigint,
               attempts integer)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = boardready, pg_temp AS $$
DECLARE
  v_claimed queue_claimed[];
BEGIN
  UPDATE work_items q
     SET status = 'dead_letter', reason_code = 'lease_expired', error_class = 'LeaseExpired', failed_at = p_now,
         lease_token = NULL, leased_until = NULL, leased_by = NULL, updated_at = p_now
   WHERE q.id IN (SELECT x.id FROM work_items x
                   WHERE x.status = 'leased' AND x.leased_until < p_now AND x.attempts >= p_max_attempts
                     AND x.kind = ANY (p_kinds)
                     FOR UPDATE SKIP LOCKED);
  WITH due AS (
    SELECT x.id FROM work_items x
     WHERE x.kind = ANY (p_kinds)
       AND ((x.status = 'accepted' AND x.run_after <= p_now) OR (x.status = 'leased' AND x.leased_until < p_now))
     ORDER BY array_position(p_kinds, x.kind), x.run_after, x.id
       FOR UPDATE SKIP LOCKED
     LIMIT p_limit
  ), claimed AS (
    UPDATE work_items q
       SET status = 'leased', attempts = q.attempts + 1, lease_token = gen_random_uuid(),
           leased_until = p_now + make_interval(secs => p_lease_seconds), leased_by = p_worker, updated_at = p_now
      FROM due
     WHERE q.id = due.id
    RETURNING q.id, q.lease_token, q.attempts
  )
  SELECT coalesce(array_agg(ROW(c.id, c.lease_token, c.attempts)::queue_claimed), '{}') INTO v_claimed FROM claimed c;
  -- A statement of its own, so its snapshot sees every row the claim took.
  RETURN QUERY
  SELECT w.id, c.lease_token, w.kind, w.subject_id, w.installation_id, c.attempts
    FROM unnest(v_claimed) c JOIN work_items w ON w.id = c.id
   ORDER BY array_position(p_kinds, w.kind), w.run_after, w.id;
END $$;

-- Put a leased item back until p_run_after without counting the attempt
-- (the provider's budget is spent: the work waits, it did not fail).
CREATE OR REPLACE FUNCTION boardready.work_defer(
  p_item_id bigint, p_lease_token uuid, p_run_after timestamptz, p_now timestamptz DEFAULT now())
RETURNS TABLE (outcome text)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = boardready, pg_temp AS $$
BEGIN
  IF queue_lock_leased('work_items', p_item_id, p_lease_token) IS NULL THEN
    RETURN QUERY SELECT 'lease_lost'::text;
    RETURN;
  END IF;
  UPDATE work_items SET status = 'accepted', attempts = greatest(attempts - 1, 0), run_after = p_run_after,
         lease_token = NULL, leased_until = NULL, leased_by = NULL, updated_at = p_now
   WHERE id = p_item_id;
  RETURN QUERY SELECT 'deferred'::text;
END $$;

-- An item's work is done: completed with its outcome, if the lease is still the caller's.
CREATE OR REPLACE FUNCTION boardready.work_complete(
  p_item_id bigint, p_lease_token uuid, p_outcome text, p_now timestamptz DEFAULT now())
RETURNS boolean LANGUAGE sql SECURITY DEFINER SET search_path = boardready, pg_temp AS $$
  SELECT queue_complete('work_items', p_item_id, p_lease_token, p_outcome, p_now)
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
    PERFORM job_check_failure_codes(p_reason_code, p_error_class);
  END IF;
  IF queue_lock_leased('schedules', p_schedule_id, p_lease_token) IS NULL THEN
    RETURN false;
  END IF;
  UPDATE schedules
     SET status = 'accepted', attempts = 0, run_after = p_now + make_interval(secs => p_interval_ms / 1000.0),
         outcome = p_outcome, reason_code = p_reason_code, error_class = p_error_class, completed_at = p_now,
         lease_token = NULL, leased_until = NULL, leased_by = NULL, updated_at = p_now
   WHERE id = p_schedule_id;
  RETURN true;
END $$;

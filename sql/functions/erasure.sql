-- Account erasure: when a canceled account's erasure request is due
-- (due_at <= p_now, 30 days after the cancellation) and no legal hold is
-- active for it, everything the account owns is deleted, batch by batch, with
-- retention's building blocks (retention.sql); the request ends `completed`
-- with the rows deleted per table.
--
-- Kept: the account row, its login replaced by 'erased' (marketplace_accounts
-- refers to it, and its state and effective date are what refuse a purchase
-- with the cancellation's timestamp), the marketplace deliveries (ids, dates,
-- digests: they keep redeliveries duplicates), the erasure request, legal
-- holds and audit events (ids and counts only).
--
-- Each step is one transaction under the account's lock (the key the
-- marketplace delivery takes, so a purchase and a batch take turns), which is
-- taken with a try: two workers never wait for each other, each erases a
-- different account or reports `busy`. A crash between batches leaves the
-- request `erasing` with its counts so far; the next step carries on.
--
-- An active legal hold stops it: the request becomes `blocked_legal_hold`
-- (with the hold's id, audited once as control_plane.account_erasure_blocked)
-- and nothing is deleted until the last hold is released (legal_holds.sql
-- puts it back, and wakes the sweep).

-- The lock a marketplace delivery for the account takes (marketplace.sql).
CREATE OR REPLACE FUNCTION boardready_private.account_lock_key(p_account_id bigint)
RETURNS bigint LANGUAGE sql IMMUTABLE AS $$
  SELECT hashtextextended('boardready.marketplace_account:' || p_account_id, 0)
$$;

-- Delete at most p_budget rows of what the account owns, leaves first;
-- installations last, so that every step can still find its rows after a crash.
CREATE OR REPLACE FUNCTION boardready_private.account_erasure_purge(p_account_id bigint, p_budget integer)
RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE
  v_installations bigint[] := ARRAY(SELECT i.id FROM boardready.installations i WHERE i.account_id = p_account_id);
  v_repositories  bigint[] := ARRAY(SELECT r.id FROM boardready.repositories r
                                     WHERE r.installation_id = ANY (v_installations));
  v_counts jsonb := '{}';
  v_left   integer := p_budget;
  v_ids    bigint[];
  v_rows   integer;
BEGIN
  -- Release runs with everything they hold, any order (a purged run's
  -- successor loses its pointer to it: release_runs_purge).
  v_ids := ARRAY(SELECT rr.id FROM boardready.release_runs rr WHERE rr.repository_id = ANY (v_repositories)
                  LIMIT v_left FOR UPDATE);
  SELECT * INTO v_counts, v_left FROM boardready_private.release_runs_purge(v_counts, v_left, v_ids);
  IF v_left <= 0 OR EXISTS (SELECT 1 FROM boardready.release_runs rr WHERE rr.repository_id = ANY (v_repositories)) THEN
    RETURN v_counts;
  END IF;
  -- Ingested results (every other result went with its run).
  v_ids := ARRAY(SELECT r.id FROM boardready.run_results r WHERE r.repository_id = ANY (v_repositories)
                  LIMIT v_left);
  SELECT * INTO v_counts, v_left FROM boardready_private.run_results_purge(v_counts, v_left, v_ids);
  IF v_left <= 0 OR EXISTS (SELECT 1 FROM boardready.run_results r WHERE r.repository_id = ANY (v_repositories)) THEN
    RETURN v_counts;
  END IF;

  SELECT * INTO v_counts, v_left FROM boardready_private.purge_steps(
    v_counts, v_left, ARRAY['pull_request_comments', 'pull_requests', 'waivers', 'api_tokens'], 'repository_id',
    v_repositories);
  -- Supply: the watched board (its supply checks went with the results), the
  -- part observations fetched on the account's budget, and that budget.
  SELECT * INTO v_counts, v_left FROM boardready_private.purge_steps(
    v_counts, v_left, ARRAY['watched_boards', 'part_lifecycle_observations', 'component_provider_calls',
                            'component_provider_breakers', 'component_provider_breaker_transitions'],
    'installation_id', v_installations);
  IF v_left <= 0 THEN
    RETURN v_counts;
  END IF;
  -- Webhook inbox rows with their jobs (an inbox row and its job are two rows).
  v_ids := ARRAY(SELECT i.id FROM boardready.webhook_inbox i WHERE i.installation_id = ANY (v_installations)
                  LIMIT greatest(1, v_left / 2));
  SELECT * INTO v_counts, v_left FROM boardready_private.inbox_purge(v_counts, v_left, v_ids);
  IF v_left <= 0 OR EXISTS (SELECT 1 FROM boardready.webhook_inbox i WHERE i.installation_id = ANY (v_installations)) THEN
    RETURN v_counts;
  END IF;
  SELECT * INTO v_counts, v_left FROM boardready_private.purge_steps(
    v_counts, v_left, ARRAY['reconciliation_items', 'replay_requests'], 'installation_id', v_installations);
  IF v_left <= 0 THEN
    RETURN v_counts;
  END IF;
  -- Sessions that reach the account's installations or repositories: the
  -- viewer signs in again and sees what is left.
  WITH gone AS (
    DELETE FROM boardready.sessions s
     WHERE s.id IN (SELECT x.id FROM boardready.sessions x
                     WHERE x.installation_ids && v_installations OR x.repository_ids && v_repositories
                     LIMIT v_left)
    RETURNING 1)
  SELECT count(*) INTO v_rows FROM gone;
  v_counts := boardready_private.purge_counts_add(v_counts, jsonb_build_object('sessions', v_rows));
  v_left := v_left - v_rows;
  SELECT * INTO v_counts, v_left FROM boardready_private.purge_step(v_counts, v_left, 'repositories', 'installation_id',
                                                            v_installations);
  SELECT * INTO v_counts, v_left FROM boardready_private.purge_step(v_counts, v_left, 'installations', 'account_id',
                                                            ARRAY[p_account_id]);
  RETURN v_counts;
END $$;

-- One step of the erasure sweep. Outcomes:
--   idle       nothing due
--   busy       due requests exist, each being erased by another worker right now
--   skipped    the request changed before its lock was taken (withdrawn); call again
--   withdrawn  the account is no longer canceled (a newer purchase): stopped
--   blocked    an active legal hold: recorded, nothing deleted
--   erasing    rows deleted (counts in `deleted`); call again
--   completed  nothing was left: the request is completed and audited
CREATE OR REPLACE FUNCTION boardready.erasure_step(p_batch_size integer, p_now timestamptz DEFAULT now())
RETURNS TABLE (outcome text, erasure_request_id bigint, account_id bigint, hold_id bigint, deleted jsonb,
               deleted_rows integer, audit_event_id uuid)
LANGUAGE plpgsql ROWS 1 SECURITY DEFINER SET search_path = boardready, pg_temp AS $$
DECLARE
  v_candidate record;
  v_locked    boolean := false;
  v_busy      boolean := false;
  v_request   erasure_requests%ROWTYPE;
  v_hold      bigint;
  v_counts    jsonb;
  v_total     integer;
  v_audit     uuid;
BEGIN
  IF p_batch_size IS NULL OR p_batch_size NOT BETWEEN 1 AND 100000 THEN
    RAISE EXCEPTION 'erasure_invalid_settings' USING ERRCODE = '22023';
  END IF;
  -- Requests under way first, then the oldest deadline.
  FOR v_candidate IN
    SELECT e.id, e.account_id FROM erasure_requests e
     WHERE e.status IN ('pending', 'erasing') AND e.due_at <= p_now
     ORDER BY e.status = 'erasing' DESC, e.due_at, e.id
     LIMIT 20
  LOOP
    IF pg_try_advisory_xact_lock(boardready_private.account_lock_key(v_candidate.account_id)) THEN
      v_locked := true;
      EXIT;
    END IF;
    v_busy := true;
  END LOOP;
  IF NOT v_locked THEN
    RETURN QUERY SELECT CASE WHEN v_busy THEN 'busy' ELSE 'idle' END, NULL::bigint, NULL::bigint, NULL::bigint,
                        '{}'::jsonb, 0, NULL::uuid;
    RETURN;
  END IF;

  -- Under the account's lock, this statement sees whatever a delivery or a
  -- hold committed before it.
  SELECT * INTO v_request FROM erasure_requests e
   WHERE e.id = v_candidate.id AND e.status IN ('pending', 'erasing') AND e.due_at <= p_now FOR UPDATE;
  IF NOT FOUND THEN
    RETURN QUERY SELECT 'skipped'::text, v_candidate.id, v_candidate.account_id, NULL::bigint, '{}'::jsonb, 0,
                        NULL::uuid;
    RETURN;
  END IF;

  IF NOT EXISTS (SELECT 1 FROM marketplace_accounts m WHERE m.account_id = v_request.account_id
                    AND m.state = 'canceled') THEN
    -- A newer purchase re-activated the account (it withdraws the open
    -- request itself; this covers a request it did not see).
    UPDATE erasure_requests SET status = 'withdrawn', withdrawn_at = p_now WHERE id = v_request.id;
    RETURN QUERY SELECT 'withdrawn'::text, v_request.id, v_request.account_id, NULL::bigint, v_request.deleted,
                        0, NULL::uuid;
    RETURN;
  END IF;

  SELECT h.id INTO v_hold FROM legal_holds h WHERE h.account_id = v_request.account_id AND h.active
   ORDER BY h.id LIMIT 1;
  IF v_hold IS NOT NULL THEN
    INSERT INTO audit_events (event_type, installation_id, actor, operation_id, item_type, item_id, occurred_at,
                              details)
    VALUES ('control_plane.account_erasure_blocked', NULL, 'system',
            'erasure:' || v_request.id || ':blocked:' || v_hold, 'erasure_request', v_request.id::text, p_now,
            jsonb_build_object('erasureRequestId', v_request.id, 'accountId', v_request.account_id,
                               'holdId', v_hold, 'batches', v_request.batches,
                               'deletedRows', boardready_private.purge_counts_total(v_request.deleted)))
    RETURNING id INTO v_audit;
    UPDATE erasure_requests
       SET status = 'blocked_legal_hold', blocked_by_legal_hold = true, blocked_hold_id = v_hold, blocked_at = p_now
     WHERE id = v_request.id;
    RETURN QUERY SELECT 'blocked'::text, v_request.id, v_request.account_id, v_hold, '{}'::jsonb, 0, v_audit;
    RETURN;
  END IF;

  v_counts := boardready_private.account_erasure_purge(v_request.account_id, p_batch_size);
  v_total := boardready_private.purge_counts_total(v_counts);
  IF v_total > 0 THEN
    UPDATE erasure_requests e
       SET status = 'erasing', started_at = coalesce(e.started_at, p_now), batches = e.batches + 1,
           deleted = boardready_private.purge_counts_add(e.deleted, v_counts), blocked_by_legal_hold = false
     WHERE e.id = v_request.id;
    RETURN QUERY SELECT 'erasing'::text, v_request.id, v_request.account_id, NULL::bigint, v_counts, v_total,
                        NULL::uuid;
    RETURN;
  END IF;

  -- A batch found nothing: every step was drained, installations last.
  IF EXISTS (SELECT 1 FROM installations i WHERE i.account_id = v_request.account_id) THEN
    RAISE EXCEPTION 'erasure_incomplete' USING ERRCODE = 'P0001';
  END IF;
  UPDATE accounts SET login = 'erased', updated_at = p_now WHERE id = v_request.account_id AND login <> 'erased';
  INSERT INTO audit_events (event_type, installation_id, actor, operation_id, item_type, item_id, occurred_at, details)
  VALUES ('control_plane.account_erasure_completed', NULL, 'system', 'erasure:' || v_request.id, 'erasure_request',
          v_request.id::text, p_now,
          jsonb_build_object('erasureRequestId', v_request.id, 'accountId', v_request.account_id,
                             'batches', v_request.batches, 'deleted', v_request.deleted,
                             'deletedRows', boardready_private.purge_counts_total(v_request.deleted)))
  RETURNING id INTO v_audit;
  UPDATE erasure_requests e
     SET status = 'completed', completed_at = p_now, started_at = coalesce(e.started_at, p_now),
         blocked_by_legal_hold = false, audit_event_id = v_audit
   WHERE e.id = v_request.id;
  RETURN QUERY SELECT 'completed'::text, v_request.id, v_request.account_id, NULL::bigint, v_request.deleted,
                      0, v_audit;
END $$;

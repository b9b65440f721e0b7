-- Reconciliation: three reconcilers find what the normal paths left
-- ambiguous and make it converge or fail closed.
--
--   kind               subject           detected when
--   workflow_attempt   release attempt   dispatched (or uncertain) and still open past the observation window
--   release_run        release run       terminal with a check run whose final state was never published
--   lifecycle_inbox    inbox row         a non-terminal delivery without a job, or an inbox state that
--                                        differs from its job's
--
-- Items are work_items of the reconciliation kinds (0032; the view
-- reconciliation_items shows them with their deadline and observations).
-- Detection is one function for every kind; items are claimed per kind with
-- queue.sql.j2's work_lease_due; each observation is reported through
-- one function that re-checks, in its own transaction, that the caller's
-- lease is still held and (for terminal repairs) that the attempt is still
-- the release run's current one. Deadlines and windows come from the caller
-- (SERVICE_RECONCILIATION_*) and p_now, so tests drive them without sleeping.

-- The stable reason codes that reach an item, an event or a release run.
CREATE OR REPLACE FUNCTION boardready_private.reconciliation_check_reason(p_reason text)
RETURNS text LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
  IF p_reason !~ '^[a-z][a-z0-9_]{0,63}$' THEN
    RAISE EXCEPTION 'reconciliation_invalid_reason' USING ERRCODE = '22023';
  END IF;
  RETURN p_reason;
END $$;

-- A new item, unless the subject already has an open one (another replica
-- detected it first: the partial unique index decides) or was just repaired.
CREATE OR REPLACE FUNCTION boardready_private.reconciliation_open_item(
  p_kind text, p_subject_id bigint, p_installation_id bigint, p_reason text, p_deadline timestamptz,
  p_now timestamptz)
RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
  v_id bigint;
BEGIN
  -- The candidates were read in one snapshot, before this statement's: an
  -- item of the subject completed since (at or after this detection's
  -- instant) was another replica's repair of it, so the drift is gone. A
  -- repair under way holds its item's row until it commits: waited for here,
  -- so that it is either seen completed below or conflicts as open.
  PERFORM 1 FROM boardready.work_items w
   WHERE w.subject_id = p_subject_id AND w.kind = p_kind AND w.status IN ('accepted', 'leased')
     FOR UPDATE;
  IF EXISTS (SELECT 1 FROM boardready.work_items w
              WHERE w.subject_id = p_subject_id AND w.kind = p_kind AND w.status = 'completed'
                AND w.completed_at >= p_now) THEN
    RETURN NULL;
  END IF;
  INSERT INTO boardready.work_items (kind, subject_id, installation_id, reason_code, deadline_at, status, run_after,
                                     created_at, updated_at)
  VALUES (p_kind, p_subject_id, p_installation_id, boardready_private.reconciliation_check_reason(p_reason), p_deadline,
          'accepted', p_now, p_now, p_now)
  ON CONFLICT (kind, subject_id) WHERE status IN ('accepted', 'leased') AND idempotency_key IS NULL DO NOTHING
  RETURNING id INTO v_id;
  RETURN v_id;
END $$;

-- ---------------------------------------------------------------------------
-- Detection

-- Open one item per candidate ({subject, installation, reason, deadline} in a
-- jsonb array, as each kind's detection selects them) and return the new ones.
CREATE OR REPLACE FUNCTION boardready_private.reconciliation_open_items(p_kind text, p_candidates jsonb, p_now timestamptz)
RETURNS TABLE (item_id bigint, subject_id bigint, installation_id bigint, reason_code text)
LANGUAGE plpgsql AS $$
DECLARE
  v_candidate jsonb;
  v_id        bigint;
BEGIN
  FOR v_candidate IN
    SELECT c.value FROM jsonb_array_elements(coalesce(p_candidates, '[]'::jsonb)) c
     ORDER BY (c.value ->> 'subject')::bigint
  LOOP
    v_id := boardready_private.reconciliation_open_item(p_kind, (v_candidate ->> 'subject')::bigint,
                                                (v_candidate ->> 'installation')::bigint, v_candidate ->> 'reason',
                                                (v_candidate ->> 'deadline')::timestamptz, p_now);
    IF v_id IS NOT NULL THEN
      RETURN QUERY SELECT v_id, (v_candidate ->> 'subject')::bigint, (v_candidate ->> 'installation')::bigint,
                          v_candidate ->> 'reason';
    END IF;
  END LOOP;
END $$;

-- Detection of one kind (p_kind): its candidates, each opened as an item
-- (reconciliation_open_items). One function for the three kinds, which
-- differed only in the candidates they select.
--  workflow_attempt: the current attempt of an open release run whose
--   workflow was dispatched (with or without a run id: a 204 answer) or whose
--   dispatch is uncertain, with no result, past the observation window since
--   the attempt began. Its deadline counts from the same instant.
--  release_run (check run publication): a terminal release run with a check
--   run and no publication timestamp past the observation window, once the
--   outbox has no check run update pending for it (it gave up, or the
--   completion was lost).
--  lifecycle_inbox (inbox and job drift), only for deliveries that resolve to
--   a persisted installation (whose account is not canceled: its new jobs are
--   blocked). lifecycle_job_missing: a non-terminal inbox row without a job,
--   older than the observation window. lifecycle_inbox_state_drift: the inbox
--   state is not the projection of its job's status
--   (lifecycle_inbox_state_for), and neither changed within the window.
--   Terminal inbox rows without a job are evidence (ping, events the service
--   does not act on): left alone.
CREATE OR REPLACE FUNCTION boardready.reconciliation_detect(
  p_kind text, p_observation_seconds integer, p_deadline_seconds integer, p_now timestamptz DEFAULT now())
RETURNS TABLE (item_id bigint, subject_id bigint, installation_id bigint, reason_code text)
LANGUAGE sql SECURITY DEFINER SET search_path = boardready, pg_temp AS $$
  WITH candidates (subject, installation, reason, deadline) AS (
    SELECT a.id, rr.installation_id,
           CASE WHEN a.workflow_run_id IS NULL THEN 'workflow_run_id_missing' ELSE 'workflow_run_open' END,
           coalesce(a.dispatched_at, a.created_at) + make_interval(secs => p_deadline_seconds)
      FROM release_runs rr
      JOIN release_run_attempts a ON a.id = rr.current_attempt_id
     WHERE p_kind = 'workflow_attempt'
       AND rr.status IN ('queued', 'dispatched')
       AND a.dispatch_state IN ('dispatched', 'uncertain')
       AND a.lease_closed_at IS NULL
       AND coalesce(a.dispatched_at, a.created_at) <= p_now - make_interval(secs => p_observation_seconds)
       -- One item per attempt for its whole life: a terminal one is not reopened.
       AND NOT EXISTS (SELECT 1 FROM reconciliation_items ri
                        WHERE ri.kind = 'workflow_attempt' AND ri.subject_id = a.id)
    UNION ALL
    SELECT rr.id, rr.installation_id, 'reporting_stale', rr.completed_at + make_interval(secs => p_deadline_seconds)
      FROM release_runs rr
     WHERE p_kind = 'release_run'
       AND rr.status IN ('completed', 'failed', 'timed_out', 'superseded')
       AND rr.check_run_id IS NOT NULL AND rr.check_run_published_at IS NULL
       AND rr.completed_at <= p_now - make_interval(secs => p_observation_seconds)
       -- Any check run update still pending in the outbox is left to it.
       AND NOT EXISTS (SELECT 1 FROM outbox_items o
                        WHERE o.release_run_id = rr.id AND o.kind NOT IN ('workflow_dispatch', 'pr_comment')
                          AND o.status IN ('accepted', 'leased'))
       -- Reconciled or recorded as failed once: never reopened.
       AND NOT EXISTS (SELECT 1 FROM reconciliation_items ri
                        WHERE ri.kind = 'release_run' AND ri.subject_id = rr.id)
    UNION ALL
    SELECT i.id, i.installation_id,
           CASE WHEN j.id IS NULL THEN 'lifecycle_job_missing' ELSE 'lifecycle_inbox_state_drift' END,
           p_now + make_interval(secs => p_deadline_seconds)
      FROM webhook_inbox i
      JOIN installations inst ON inst.id = i.installation_id
      LEFT JOIN lifecycle_jobs j ON j.inbox_id = i.id
     WHERE p_kind = 'lifecycle_inbox'
       AND ((j.id IS NULL AND i.state IN ('accepted', 'processing')
             AND i.received_at <= p_now - make_interval(secs => p_observation_seconds))
         OR (j.id IS NOT NULL AND i.state <> boardready_private.lifecycle_inbox_state_for(j.status)
             AND greatest(i.updated_at, j.updated_at) <= p_now - make_interval(secs => p_observation_seconds)))
       AND NOT boardready_private.installation_account_canceled(i.installation_id, NULL)
       -- A repair that dead-lettered waits for an operator instead of looping.
       AND NOT EXISTS (SELECT 1 FROM reconciliation_items ri
                        WHERE ri.kind = 'lifecycle_inbox' AND ri.subject_id = i.id AND ri.status = 'dead_letter'))
  SELECT * FROM boardready_private.reconciliation_open_items(p_kind, (SELECT jsonb_agg(to_jsonb(c)) FROM candidates c), p_now)
$$;

-- The conclusion the check run must show: the run's own as stored (its
-- decision's, failure for a failed or timed-out run), else its result's,
-- cancelled for a superseded one.
CREATE OR REPLACE FUNCTION boardready_private.release_run_expected_conclusion(p_release_run_id bigint)
RETURNS text LANGUAGE sql STABLE AS $$
  SELECT coalesce(rr.conclusion, res.published_conclusion, res.conclusion,
                  CASE rr.status WHEN 'superseded' THEN 'cancelled' ELSE 'failure' END)
    FROM boardready.release_runs rr
    LEFT JOIN LATERAL (SELECT r.published_conclusion, r.conclusion FROM boardready.run_results r
                        WHERE r.release_run_id = rr.id AND r.attempt_id = rr.current_attempt_id
                        ORDER BY r.id DESC LIMIT 1) res ON true
   WHERE rr.id = p_release_run_id
$$;

-- ---------------------------------------------------------------------------
-- Claims and leases (queue.sql.j2's rules)

-- The due items of one kind, leased (queue.sql.j2's rules: a worker that died
-- holding an item's last attempt dead-letters it).
CREATE OR REPLACE FUNCTION boardready_private.reconciliation_claim_ids(
  p_kind text, p_worker text, p_limit integer, p_lease_seconds integer, p_max_attempts integer,
  p_now timestamptz)
RETURNS boardready.queue_claimed[] LANGUAGE sql AS $$
  SELECT boardready_private.work_lease_due(ARRAY[p_kind], p_worker, p_limit, p_lease_seconds, p_max_attempts, p_now)
$$;

-- The claimed items of one kind with their own columns, read in a statement
-- of its own after the claim, so that its snapshot sees every row the claim
-- took (queue.sql.j2). What an observation needs of an item's subject (which is
-- older than the item) the worker reads next from the kind's subjects view
-- below (workers/reconcile.py).
CREATE OR REPLACE FUNCTION boardready.reconciliation_claim(
  p_kind text, p_worker text, p_limit integer, p_lease_seconds integer, p_max_attempts integer,
  p_now timestamptz DEFAULT now())
RETURNS TABLE (item_id bigint, lease_token uuid, attempts integer, reason_code text, deadline_at timestamptz,
               subject_id bigint)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = boardready, pg_temp AS $$
DECLARE
  v_claimed boardready.queue_claimed[] := boardready_private.reconciliation_claim_ids(p_kind, p_worker, p_limit,
                                                                              p_lease_seconds, p_max_attempts, p_now);
BEGIN
  RETURN QUERY
  SELECT ri.id, c.lease_token, c.attempts, ri.reason_code, ri.deadline_at, ri.subject_id
    FROM unnest(v_claimed) c JOIN boardready.work_items ri ON ri.id = c.id
   ORDER BY ri.id;
END $$;

-- What the workflow reconciler's lookup needs of a workflow_attempt item's
-- attempt: the run it was bound to, else the dispatch to search runs by.
CREATE OR REPLACE VIEW boardready.reconciliation_workflow_subjects AS
SELECT a.id AS subject_id, a.id AS attempt_id, a.id || '-' || a.nonce AS attempt_ref, a.workflow_run_id,
       rr.installation_id, r.full_name AS repository,
       coalesce((SELECT o.params ->> 'dispatchRef' FROM boardready.outbox_items o
                  WHERE o.attempt_id = a.id AND o.kind = 'workflow_dispatch' ORDER BY o.id DESC LIMIT 1),
                'main') AS dispatch_ref,
       a.created_at AS dispatch_since, rr.id AS release_run_id
  FROM boardready.release_run_attempts a
  JOIN boardready.release_runs rr ON rr.id = a.release_run_id
  JOIN boardready.repositories r ON r.id = rr.repository_id;

-- What the check run reconciler needs of a release_run item's run: the
-- binding to verify and the conclusion to show.
CREATE OR REPLACE VIEW boardready.reconciliation_check_run_subjects AS
SELECT rr.id AS subject_id, rr.id AS release_run_id, rr.installation_id, r.full_name AS repository, rr.head_sha,
       rr.check_run_id, rr.status AS run_status, rr.decision, rr.failure_reason,
       boardready_private.release_run_expected_conclusion(rr.id) AS expected_conclusion
  FROM boardready.release_runs rr
  JOIN boardready.repositories r ON r.id = rr.repository_id;

-- The views run with their owner's rights: the API role reads these columns,
-- not the tables behind them.
GRANT SELECT ON boardready.reconciliation_workflow_subjects, boardready.reconciliation_check_run_subjects
   TO boardready_api;

-- An unexpected failure of a handler (not an observation) backs off, and
-- dead-letters after the last attempt, as jobs do: queue.sql.j2's work_fail;
-- a shutdown gives the item back with work_release.

-- Observed, not converged yet: look again after p_next_check_seconds. The
-- claim count starts over (attempts counts failures since the last observation).
CREATE OR REPLACE FUNCTION boardready_private.reconciliation_recheck(
  p_item_id bigint, p_reason text, p_next_check_seconds integer, p_now timestamptz)
RETURNS void LANGUAGE sql AS $$
  SELECT boardready_private.work_recheck(p_item_id, boardready_private.reconciliation_check_reason(p_reason),
                                         p_now + make_interval(secs => p_next_check_seconds), p_now)
$$;

-- Done: the terminal outcome, and the reason code it ended with.
CREATE OR REPLACE FUNCTION boardready_private.reconciliation_finish(
  p_item_id bigint, p_outcome text, p_reason text, p_now timestamptz)
RETURNS void LANGUAGE sql AS $$
  SELECT boardready_private.work_finish(p_item_id, boardready_private.reconciliation_check_reason(p_outcome),
                                        boardready_private.reconciliation_check_reason(p_reason), p_now)
$$;

-- ---------------------------------------------------------------------------
-- Workflow state

-- What to do with one lookup of the workflow run (fail closed):
--   observation          before the deadline                  at or after it
--   completed success    recheck host_result_callback_pending  failed host_result_callback_missing
--   completed timed_out  timed_out host_workflow_timed_out     same
--   completed other      failed host_workflow_<conclusion>     same
--   not_found (404, or   recheck host_workflow_not_found       failed host_workflow_not_found
--     no run by name)
--   pending              recheck host_workflow_pending         timed_out host_workflow_deadline_exceeded
--   lookup_unavailable   recheck host_lookup_failed            failed host_workflow_lookup_failed
-- A success from the code host never completes a release: only the signed,
-- attempt-bound result callback does. p_workflow_run_id is the run found by
-- its name for an attempt dispatched without a run id: it is persisted (and
-- the uncertain dispatch's dead letter resolved) whatever the run's state.
CREATE OR REPLACE FUNCTION boardready_private.reconciliation_workflow_observe(
  p_item boardready.reconciliation_items, p_observation text, p_conclusion text, p_workflow_run_id bigint,
  p_next_check_seconds integer, p_now timestamptz)
RETURNS TABLE (outcome text, reason_code text, release_run_id bigint, terminal boolean)
LANGUAGE plpgsql SET search_path = boardready, pg_temp AS $$
DECLARE
  v_attempt  release_run_attempts%ROWTYPE;
  v_run      release_runs%ROWTYPE;
  v_late     boolean;
  v_reason   text;
  v_status   text;     -- the run's terminal status, NULL to look again
BEGIN
  IF p_observation NOT IN ('completed', 'not_found', 'pending', 'lookup_unavailable') THEN
    RAISE EXCEPTION 'reconciliation_invalid_observation' USING ERRCODE = '22023';
  END IF;
  SELECT * INTO v_attempt FROM release_run_attempts WHERE id = p_item.subject_id;
  -- The run's row is the lock the result callback takes too: one of them wins.
  SELECT * INTO v_run FROM release_runs WHERE id = v_attempt.release_run_id FOR UPDATE;

  IF v_run.current_attempt_id IS DISTINCT FROM v_attempt.id OR v_run.status NOT IN ('queued', 'dispatched')
     OR v_attempt.lease_closed_at IS NOT NULL THEN
    -- A result arrived, or a newer attempt or commit replaced this one.
    PERFORM boardready_private.reconciliation_finish(p_item.id, 'attempt_closed', p_item.reason_code, p_now);
    RETURN QUERY SELECT 'attempt_closed'::text, p_item.reason_code, v_run.id, true;
    RETURN;
  END IF;

  IF p_workflow_run_id IS NOT NULL AND v_attempt.workflow_run_id IS NULL THEN
    UPDATE release_run_attempts
       SET workflow_run_id = p_workflow_run_id, host_installation_id = coalesce(host_installation_id,
                                                                               v_run.installation_id),
           dispatch_state = 'dispatched', dispatched_at = coalesce(dispatched_at, p_now)
     WHERE id = v_attempt.id;
    UPDATE release_runs SET status = 'dispatched', updated_at = p_now WHERE id = v_run.id AND status = 'queued';
    -- The uncertain dispatch did start this run: its dead letter is resolved.
    UPDATE work_items
       SET status = 'completed', outcome = 'dispatch_reconciled', completed_at = p_now, updated_at = p_now
     WHERE attempt_id = v_attempt.id AND kind = 'workflow_dispatch' AND status = 'dead_letter';
  END IF;

  v_late := p_now >= p_item.deadline_at;
  IF p_observation = 'completed' AND p_conclusion = 'success' THEN
    v_reason := CASE WHEN v_late THEN 'host_result_callback_missing' ELSE 'host_result_callback_pending' END;
    v_status := CASE WHEN v_late THEN 'failed' END;
  ELSIF p_observation = 'completed' AND p_conclusion = 'timed_out' THEN
    v_reason := 'host_workflow_timed_out';
    v_status := 'timed_out';
  ELSIF p_observation = 'completed' THEN
    v_reason := 'host_workflow_' || CASE WHEN p_conclusion ~ '^[a-z_]{1,40}$' THEN p_conclusion ELSE 'unknown' END;
    v_status := 'failed';
  ELSIF p_observation = 'not_found' THEN
    v_reason := 'host_workflow_not_found';
    v_status := CASE WHEN v_late THEN 'failed' END;
  ELSIF p_observation = 'pending' THEN
    v_reason := CASE WHEN v_late THEN 'host_workflow_deadline_exceeded' ELSE 'host_workflow_pending' END;
    v_status := CASE WHEN v_late THEN 'timed_out' END;
  ELSE
    v_reason := CASE WHEN v_late THEN 'host_workflow_lookup_failed' ELSE 'host_lookup_failed' END;
    v_status := CASE WHEN v_late THEN 'failed' END;
  END IF;

  IF v_status IS NULL THEN
    PERFORM boardready_private.reconciliation_recheck(p_item.id, v_reason, p_next_check_seconds, p_now);
    RETURN QUERY SELECT 'recheck'::text, v_reason, v_run.id, false;
    RETURN;
  END IF;

  -- Fail closed: no decision but UNKNOWN, the check run completed as failure.
  UPDATE release_runs SET status = v_status, failure_reason = v_reason, decision = 'UNKNOWN', conclusion = 'failure',
         completed_at = p_now, updated_at = p_now
   WHERE id = v_run.id;
  PERFORM boardready_private.release_run_enqueue_check_run_completion_v2(v_run.id, 'failure', v_reason, p_now);
  PERFORM boardready_private.reconciliation_finish(p_item.id, v_status, v_reason, p_now);
  RETURN QUERY SELECT v_status, v_reason, v_run.id, true;
END $$;

-- ---------------------------------------------------------------------------
-- Check run publication

--   observation          before the deadline                  at or after it
--   binding_mismatch     failure host_check_run_binding_mismatch, no update (same)
--   converged            reconciled: publication timestamp only (same)
--   updated              reconciled (the worker sent the stored conclusion)
--   update_failed        recheck host_check_run_update_failed  failure host_check_run_update_failed
--   not_found            recheck host_check_run_not_found      failure host_check_run_not_found
--   lookup_unavailable   recheck host_check_run_lookup_failed  failure host_check_run_lookup_failed
-- The release run, its decision, conclusion and findings never change. A
-- failure is recorded on the release run and its result (last_publication_error), completes
-- the item and appends control_plane.host_check_run_reconciliation_failed.
CREATE OR REPLACE FUNCTION boardready_private.reconciliation_check_run_observe(
  p_item boardready.reconciliation_items, p_observation text, p_next_check_seconds integer, p_now timestamptz)
RETURNS TABLE (outcome text, reason_code text, release_run_id bigint, terminal boolean)
LANGUAGE plpgsql SET search_path = boardready, pg_temp AS $$
DECLARE
  v_run     release_runs%ROWTYPE;
  v_late    boolean;
  v_reason  text;
BEGIN
  IF p_observation NOT IN ('binding_mismatch', 'converged', 'updated', 'update_failed', 'not_found',
                           'lookup_unavailable') THEN
    RAISE EXCEPTION 'reconciliation_invalid_observation' USING ERRCODE = '22023';
  END IF;
  SELECT * INTO v_run FROM release_runs WHERE id = p_item.subject_id FOR UPDATE;

  IF v_run.check_run_published_at IS NOT NULL THEN
    -- The outbox (or an operator replay) published it meanwhile.
    PERFORM boardready_private.reconciliation_finish(p_item.id, 'already_published', p_item.reason_code, p_now);
    RETURN QUERY SELECT 'already_published'::text, p_item.reason_code, v_run.id, true;
    RETURN;
  END IF;

  IF p_observation IN ('converged', 'updated') THEN
    -- The check run now shows what the observer compared it with or sent:
    -- the run's expected conclusion, its release decision's when it has one
    -- (an approval or a supply check may have moved it off the result's own).
    -- Recorded as shown, so a later decision update compares with the truth.
    UPDATE release_runs SET check_run_published_at = p_now, published_decision = coalesce(v_run.decision, published_decision),
           updated_at = p_now
     WHERE id = v_run.id;
    UPDATE run_results r SET published_conclusion = coalesce(r.published_conclusion,
                                                             boardready_private.release_run_expected_conclusion(v_run.id)),
           last_publication_error = NULL
     WHERE r.release_run_id = v_run.id AND r.attempt_id = v_run.current_attempt_id;
    UPDATE release_runs SET last_publication_error = NULL WHERE id = v_run.id;
    v_reason := CASE p_observation WHEN 'converged' THEN 'host_check_run_converged'
                                   ELSE 'host_check_run_updated' END;
    PERFORM boardready_private.reconciliation_finish(p_item.id, 'reconciled', v_reason, p_now);
    RETURN QUERY SELECT 'reconciled'::text, v_reason, v_run.id, true;
    RETURN;
  END IF;

  v_late := p_now >= p_item.deadline_at;
  v_reason := 'host_check_run_' || CASE p_observation WHEN 'lookup_unavailable' THEN 'lookup_failed'
                                                      ELSE p_observation END;
  IF p_observation <> 'binding_mismatch' AND NOT v_late THEN
    PERFORM boardready_private.reconciliation_recheck(p_item.id, v_reason, p_next_check_seconds, p_now);
    RETURN QUERY SELECT 'recheck'::text, v_reason, v_run.id, false;
    RETURN;
  END IF;

  UPDATE run_results r SET last_publication_error = v_reason
   WHERE r.release_run_id = v_run.id AND r.attempt_id = v_run.current_attempt_id;
  -- On the run too: a run that failed before any result has no result row.
  UPDATE release_runs SET last_publication_error = v_reason WHERE id = v_run.id;
  INSERT INTO audit_events (event_type, installation_id, actor, operation_id, item_type, item_id, occurred_at, details)
  VALUES ('control_plane.host_check_run_reconciliation_failed', v_run.installation_id, 'system:reconciliation',
          'reconciliation:' || p_item.id, 'release_run', v_run.id::text, p_now,
          jsonb_build_object('reasonCode', v_reason, 'checkRunId', v_run.check_run_id,
                             'reconciliationItemId', p_item.id));
  PERFORM boardready_private.reconciliation_finish(p_item.id, 'failed', v_reason, p_now);
  RETURN QUERY SELECT 'failed'::text, v_reason, v_run.id, true;
END $$;

-- ---------------------------------------------------------------------------
-- Inbox and job drift

-- Repair one inbox row, with the inbox row locked so that concurrent repairs
-- (and intake of the same delivery) take turns: a job missing is recreated
-- with the delivery's idempotency key (its actions stay on the inbox row); a
-- drifted state is set from the job's status. A repair that finds nothing to
-- do (another replica did it) completes without a second job.
CREATE OR REPLACE FUNCTION boardready_private.reconciliation_lifecycle_repair(
  p_item boardready.reconciliation_items, p_now timestamptz)
RETURNS TABLE (outcome text, reason_code text, inbox_id bigint, job_id bigint)
LANGUAGE plpgsql SET search_path = boardready, pg_temp AS $$
DECLARE
  v_inbox  webhook_inbox%ROWTYPE;
  v_job    lifecycle_jobs%ROWTYPE;
  v_job_id bigint;
  v_state  text;
BEGIN
  SELECT * INTO v_inbox FROM webhook_inbox WHERE id = p_item.subject_id FOR UPDATE;
  SELECT * INTO v_job FROM lifecycle_jobs j WHERE j.inbox_id = v_inbox.id;

  IF v_job.id IS NULL AND v_inbox.state IN ('accepted', 'processing') THEN
    SELECT made.job_id INTO v_job_id FROM boardready_private.lifecycle_jobs_insert(ARRAY[v_inbox.id], p_now) made;
    IF v_job_id IS NOT NULL THEN
      UPDATE webhook_inbox SET state = 'accepted', awaiting_job = false, updated_at = p_now WHERE id = v_inbox.id;
      PERFORM pg_notify('lifecycle_jobs', '');
      PERFORM boardready_private.reconciliation_finish(p_item.id, 'job_recreated', p_item.reason_code, p_now);
      RETURN QUERY SELECT 'job_recreated'::text, p_item.reason_code, v_inbox.id, v_job_id;
      RETURN;
    END IF;
    SELECT * INTO v_job FROM lifecycle_jobs j WHERE j.inbox_id = v_inbox.id;
  END IF;

  IF v_job.id IS NOT NULL THEN
    v_state := boardready_private.lifecycle_inbox_state_for(v_job.status);
    IF v_inbox.state IS DISTINCT FROM v_state THEN
      UPDATE webhook_inbox SET state = v_state, updated_at = p_now WHERE id = v_inbox.id;
      PERFORM boardready_private.reconciliation_finish(p_item.id, 'inbox_state_corrected', p_item.reason_code, p_now);
      RETURN QUERY SELECT 'inbox_state_corrected'::text, p_item.reason_code, v_inbox.id, v_job.id;
      RETURN;
    END IF;
  END IF;
  PERFORM boardready_private.reconciliation_finish(p_item.id, 'already_converged', p_item.reason_code, p_now);
  RETURN QUERY SELECT 'already_converged'::text, p_item.reason_code, v_inbox.id, v_job.id;
END $$;

-- ---------------------------------------------------------------------------
-- Reports

-- What a reconciler saw of one leased item, applied in one transaction: the
-- lease is checked here once (a lost one applies nothing: lease_lost), then
-- the item's kind decides (above). p_observation, p_conclusion and
-- p_workflow_run_id are what a lookup found (the lifecycle repair looks
-- itself and takes none); terminal says whether the item ended.
CREATE OR REPLACE FUNCTION boardready.reconciliation_report(
  p_item_id bigint, p_lease_token uuid, p_observation text DEFAULT NULL, p_next_check_seconds integer DEFAULT NULL,
  p_conclusion text DEFAULT NULL, p_workflow_run_id bigint DEFAULT NULL, p_now timestamptz DEFAULT now())
RETURNS TABLE (outcome text, reason_code text, terminal boolean, release_run_id bigint, inbox_id bigint,
               job_id bigint)
LANGUAGE plpgsql ROWS 1 SECURITY DEFINER SET search_path = boardready, pg_temp AS $$
DECLARE
  v_item reconciliation_items%ROWTYPE;
  -- The previous release may name an item held across the upgrade by its older id (queue.sql.j2).
  v_id   bigint := boardready_private.work_item_for_lease(p_item_id, p_lease_token);
BEGIN
  IF boardready_private.work_lock_leased(v_id, p_lease_token) IS NULL THEN
    RETURN QUERY SELECT 'lease_lost'::text, NULL::text, false, NULL::bigint, NULL::bigint, NULL::bigint;
    RETURN;
  END IF;
  SELECT * INTO v_item FROM reconciliation_items WHERE id = v_id;
  CASE v_item.kind
  WHEN 'workflow_attempt' THEN
    RETURN QUERY SELECT o.outcome, o.reason_code, o.terminal, o.release_run_id, NULL::bigint, NULL::bigint
      FROM boardready_private.reconciliation_workflow_observe(v_item, p_observation, p_conclusion, p_workflow_run_id,
                                           p_next_check_seconds, p_now) o;
  WHEN 'release_run' THEN
    RETURN QUERY SELECT o.outcome, o.reason_code, o.terminal, o.release_run_id, NULL::bigint, NULL::bigint
      FROM boardready_private.reconciliation_check_run_observe(v_item, p_observation, p_next_check_seconds, p_now) o;
  WHEN 'lifecycle_inbox' THEN
    RETURN QUERY SELECT o.outcome, o.reason_code, true, NULL::bigint, o.inbox_id, o.job_id
      FROM boardready_private.reconciliation_lifecycle_repair(v_item, p_now) o;
  END CASE;
END $$;

-- ---------------------------------------------------------------------------
-- Heartbeats: when each reconciler last looked, and last finished without error.

CREATE OR REPLACE FUNCTION boardready.reconciler_heartbeat(
  p_reconciler text, p_succeeded boolean, p_now timestamptz DEFAULT now())
RETURNS void LANGUAGE sql SECURITY DEFINER SET search_path = boardready, pg_temp AS $$
  INSERT INTO reconciler_heartbeats AS h (reconciler, last_poll_at, last_success_at, updated_at)
  VALUES (p_reconciler, p_now, CASE WHEN p_succeeded THEN p_now END, p_now)
  ON CONFLICT (reconciler) DO UPDATE
     SET last_poll_at = greatest(h.last_poll_at, EXCLUDED.last_poll_at),
         last_success_at = CASE WHEN p_succeeded THEN greatest(h.last_success_at, p_now) ELSE h.last_success_at END,
         updated_at = p_now
$$;

-- One row per reconciler for the operator endpoint and ops.reconciliation.
CREATE OR REPLACE FUNCTION boardready.reconciliation_status(p_now timestamptz DEFAULT now())
RETURNS TABLE (reconciler text, kind text, last_poll_at timestamptz, last_success_at timestamptz, open_items bigint,
               due_items bigint, oldest_open_at timestamptz, completed_items bigint, failed_items bigint,
               dead_letter_items bigint)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = boardready, pg_temp AS $$
  SELECT k.reconciler, k.kind, h.last_poll_at, h.last_success_at,
         count(ri.id) FILTER (WHERE ri.status IN ('accepted', 'leased')),
         count(ri.id) FILTER (WHERE ri.status = 'accepted' AND ri.run_after <= p_now),
         min(ri.created_at) FILTER (WHERE ri.status IN ('accepted', 'leased')),
         count(ri.id) FILTER (WHERE ri.status = 'completed'),
         count(ri.id) FILTER (WHERE ri.status = 'completed' AND ri.outcome IN ('failed', 'timed_out')),
         count(ri.id) FILTER (WHERE ri.status = 'dead_letter')
    FROM (VALUES ('workflow', 'workflow_attempt', 1), ('check_run', 'release_run', 2),
                 ('lifecycle', 'lifecycle_inbox', 3)) AS k (reconciler, kind, ord)
    LEFT JOIN reconciler_heartbeats h ON h.reconciler = k.reconciler
    LEFT JOIN reconciliation_items ri ON ri.kind = k.kind
   GROUP BY k.reconciler, k.kind, k.ord, h.last_poll_at, h.last_success_at
   ORDER BY k.ord
$$;

-- Operator views (docs/operations.md, "Reconciliation and the SLO policy"). Ids and reason codes only.
CREATE OR REPLACE VIEW ops.reconciliation AS
SELECT * FROM boardready.reconciliation_status();

CREATE OR REPLACE VIEW ops.reconciliation_items AS
SELECT ri.id, ri.kind, ri.subject_id, ri.installation_id, ri.reason_code, ri.status, ri.outcome, ri.deadline_at,
       ri.run_after AS next_check_at, ri.observations, ri.attempts, ri.leased_until, ri.leased_by, ri.error_class,
       ri.failed_at, ri.completed_at, ri.created_at, ri.updated_at
  FROM boardready.reconciliation_items ri;

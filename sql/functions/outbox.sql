-- The outbox: code host calls for release runs, work_items of the outbox's
-- kinds (0032; subject_id is the release run), claimed with a lease by the
-- outbox worker, which reports each result through one function here.

-- Claimed items with what their call needs. p_item_id claims one given item
-- (the synchronous result endpoint publishes its own check run).
-- attempt_started_at bounds the search for a run a dispatch that died may
-- have started (app/host/outbox.py).
CREATE OR REPLACE FUNCTION boardready.outbox_claim(
  p_worker text, p_limit integer, p_lease_seconds integer, p_max_attempts integer, p_now timestamptz DEFAULT now(),
  p_item_id bigint DEFAULT NULL)
RETURNS TABLE (item_id bigint, lease_token uuid, attempts integer, kind text, params jsonb,
               installation_id bigint, release_run_id bigint, attempt_id bigint, attempt_ref text,
               repository text, pr_number integer, head_sha text, check_run_id bigint, run_status text,
               is_current boolean, run_result_id bigint, progress integer, comment_id bigint,
               attempt_started_at timestamptz)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = boardready, pg_temp AS $$
DECLARE
  v_claimed queue_claimed[] := boardready_private.work_lease_due(boardready_private.work_queue_kinds('outbox'), p_worker, p_limit, p_lease_seconds,
                                              p_max_attempts, p_now, p_item_id);
BEGIN
  -- A statement of its own, so its snapshot sees every row the claim took.
  RETURN QUERY
  SELECT o.id, c.lease_token, c.attempts, o.kind, o.params, o.installation_id, rr.id, a.id,
         a.id || '-' || a.nonce, r.full_name, rr.pr_number, rr.head_sha, rr.check_run_id, rr.status,
         (rr.status IN ('queued', 'dispatched') AND rr.current_attempt_id = a.id),
         o.run_result_id, o.progress, pc.comment_id, a.created_at
    FROM unnest(v_claimed) c
    JOIN work_items o ON o.id = c.id
    JOIN release_runs rr ON rr.id = o.subject_id
    JOIN repositories r ON r.id = rr.repository_id
    LEFT JOIN release_run_attempts a ON a.id = o.attempt_id
    LEFT JOIN pull_request_comments pc ON pc.repository_id = rr.repository_id AND pc.pr_number = rr.pr_number
   ORDER BY o.id;
END $$;

-- Every report on a claimed outbox item, in one transaction: when the
-- caller's lease is still the current one, the item is completed with
-- p_outcome (a progress report keeps it leased) and the outcome's effects are
-- applied; otherwise 'lease_lost' (the new holder's report counts). What an
-- outcome carries: check_run_created p_check_run_id; dispatched
-- p_workflow_run_id and p_installation_id; progress_recorded p_progress and
-- p_published_conclusion; comment_posted p_comment_id; decision_published
-- p_decision. One function with a branch per outcome replaces one function
-- per outcome, each of which began with the same lease check.
CREATE OR REPLACE FUNCTION boardready.outbox_report(
  p_item_id bigint, p_lease_token uuid, p_outcome text,
  p_check_run_id bigint DEFAULT NULL, p_workflow_run_id bigint DEFAULT NULL, p_installation_id bigint DEFAULT NULL,
  p_progress integer DEFAULT NULL, p_published_conclusion text DEFAULT NULL, p_comment_id bigint DEFAULT NULL,
  p_decision text DEFAULT NULL, p_now timestamptz DEFAULT now())
RETURNS TABLE (outcome text)
LANGUAGE plpgsql ROWS 1 SECURITY DEFINER SET search_path = boardready, pg_temp AS $$
DECLARE
  v_item    work_items%ROWTYPE;
  v_run     release_runs%ROWTYPE;
  v_outcome text := p_outcome;
BEGIN
  IF NOT (CASE WHEN p_outcome = 'progress_recorded'
               THEN boardready_private.work_lock_leased(p_item_id, p_lease_token) IS NOT NULL
               ELSE work_complete(p_item_id, p_lease_token, p_outcome, p_now) END) THEN
    RETURN QUERY SELECT 'lease_lost'::text;
    RETURN;
  END IF;
  SELECT * INTO v_item FROM work_items WHERE id = p_item_id;

  CASE p_outcome
  WHEN 'superseded', 'no_check_run', 'skip', 'unchanged' THEN
    -- Nothing to do any more (the run was superseded or already closed).
    UPDATE release_run_attempts SET dispatch_state = 'skipped'
     WHERE v_item.kind = 'workflow_dispatch' AND id = v_item.attempt_id AND dispatch_state = 'pending';

  WHEN 'check_run_created' THEN
    -- The check run exists (created now, or found by its external_id after a
    -- crash): remember it, then dispatch the workflow, or close the check run
    -- if the release run was superseded meanwhile.
    UPDATE release_runs SET check_run_id = p_check_run_id, updated_at = p_now
     WHERE id = v_item.subject_id RETURNING * INTO v_run;
    IF v_run.status = 'superseded' THEN
      PERFORM boardready_private.release_run_enqueue_check_run_completion_v2(v_run.id, 'cancelled', 'superseded', p_now);
      v_outcome := 'check_run_created_superseded';
    ELSE
      PERFORM boardready_private.outbox_enqueue(v_run.id, v_run.current_attempt_id, v_run.installation_id, 'workflow_dispatch',
                             'workflow_dispatch:' || v_run.current_attempt_id, v_item.params, p_now);
    END IF;

  WHEN 'dispatched' THEN
    UPDATE release_run_attempts SET dispatch_state = 'dispatched', workflow_run_id = p_workflow_run_id,
           host_installation_id = p_installation_id, dispatched_at = p_now
     WHERE id = v_item.attempt_id;
    UPDATE release_runs SET status = 'dispatched', updated_at = p_now
     WHERE id = v_item.subject_id AND status = 'queued';

  WHEN 'workflow_missing' THEN
    -- The repository has no readiness workflow: the run fails, and the check
    -- run tells the engineer what to add (app/host/publication.py's words).
    UPDATE release_run_attempts SET dispatch_state = 'failed' WHERE id = v_item.attempt_id;
    UPDATE release_runs SET status = 'failed', failure_reason = 'workflow_missing', decision = 'UNKNOWN',
           conclusion = 'failure', completed_at = p_now, updated_at = p_now
     WHERE id = v_item.subject_id AND status IN ('queued', 'dispatched');
    IF FOUND THEN
      PERFORM boardready_private.release_run_enqueue_check_run_completion_v2(v_item.subject_id, 'failure', 'workflow_missing',
                                                           p_now);
    END IF;

  WHEN 'progress_recorded' THEN
    -- Annotation batches sent so far, and the conclusion the check run was
    -- first completed with (kept by a trigger once set).
    UPDATE work_items SET progress = greatest(progress, p_progress), updated_at = p_now WHERE id = p_item_id;
    IF p_published_conclusion IS NOT NULL THEN
      UPDATE run_results SET published_conclusion = p_published_conclusion, last_publication_error = NULL
       WHERE id = v_item.run_result_id;
    END IF;

  WHEN 'check_run_completed' THEN
    UPDATE release_runs SET check_run_published_at = p_now, updated_at = p_now WHERE id = v_item.subject_id;
    -- An approval or a waiver may have changed the decision meanwhile (reviews.sql).
    PERFORM boardready_private.release_decision_after_completion(v_item.subject_id, p_now);

  WHEN 'comment_posted' THEN
    -- The one pull request comment was created or updated: remember its id.
    INSERT INTO pull_request_comments (repository_id, pr_number, comment_id, updated_at)
    SELECT rr.repository_id, rr.pr_number, p_comment_id, p_now
      FROM release_runs rr WHERE rr.id = v_item.subject_id
    ON CONFLICT (repository_id, pr_number) DO UPDATE SET comment_id = EXCLUDED.comment_id, updated_at = p_now;

  WHEN 'decision_published' THEN
    -- The check run now shows p_decision. If the decision moved on while it
    -- was sent, another update is queued, so the last word is always the
    -- current one (reviews.sql).
    UPDATE release_runs SET published_decision = p_decision, updated_at = p_now WHERE id = v_item.subject_id;
    PERFORM boardready_private.release_decision_refresh(v_item.subject_id, p_now);

  ELSE
    RAISE EXCEPTION 'outbox_unknown_outcome' USING ERRCODE = '22023';
  END CASE;
  RETURN QUERY SELECT v_outcome;
END $$;

-- A failed call. A failed check run publication is also remembered on its
-- run result (last_publication_error); the result itself never changes.
-- dispatch_uncertain: the dispatch request was sent but no answer came back,
-- so the workflow may or may not be running. Retrying could start it twice,
-- so the item becomes a dead letter at once, which replay refuses
-- (reconciliation resolves it). It replaces outbox_dispatch_uncertain, which
-- repeated this function's lease check.
CREATE OR REPLACE FUNCTION boardready.outbox_fail(
  p_item_id bigint, p_lease_token uuid, p_reason_code text, p_error_class text, p_max_attempts integer,
  p_not_before timestamptz DEFAULT NULL, p_final boolean DEFAULT false, p_now timestamptz DEFAULT now())
RETURNS TABLE (outcome text, run_after timestamptz)
LANGUAGE plpgsql ROWS 1 SECURITY DEFINER SET search_path = boardready, pg_temp AS $$
DECLARE
  v_uncertain boolean := p_reason_code = 'dispatch_uncertain';
  v_result    record;
BEGIN
  SELECT * INTO v_result FROM work_fail(p_item_id, p_lease_token, p_reason_code, p_error_class, p_max_attempts, p_now,
                                        p_not_before, p_final OR v_uncertain);
  IF v_result.outcome <> 'lease_lost' THEN
    UPDATE run_results rr SET last_publication_error = p_reason_code
      FROM work_items o
     WHERE o.id = p_item_id AND o.kind = 'check_run_complete' AND rr.id = o.run_result_id;
    IF v_uncertain THEN
      UPDATE work_items SET replay_safe = false WHERE id = p_item_id;
      UPDATE release_run_attempts a SET dispatch_state = 'uncertain'
        FROM work_items o WHERE o.id = p_item_id AND a.id = o.attempt_id;
      v_result.outcome := 'dispatch_uncertain';
    END IF;
  END IF;
  RETURN QUERY SELECT v_result.outcome, v_result.run_after;
END $$;

-- Releasing an item on shutdown is queue.sql.j2's work_release.

-- The pending item of one kind for a release run (the synchronous result
-- endpoint publishes its check run completion itself).
-- Only an item that is due: one held (for a supply check) or backing off
-- after a failure is left to the workers, which take it when its time comes.
CREATE OR REPLACE FUNCTION boardready.outbox_pending_item(p_release_run_id bigint, p_kind text)
RETURNS TABLE (item_id bigint)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = boardready, pg_temp AS $$
  SELECT o.id FROM work_items o
   WHERE o.subject_id = p_release_run_id AND o.kind = p_kind AND o.status = 'accepted'
     AND o.run_after <= now()
   ORDER BY o.id DESC LIMIT 1
$$;

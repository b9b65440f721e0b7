-- Reviews, approvals and waivers, and the release decision that combines
-- them with the readiness of a run's result.
--
-- The release decision, in order (first match wins):
--   review decision changes_requested                         -> FAIL
--   an error or high finding that no standing waiver covers    -> FAIL
--   readiness FAIL (blocked) with blocking findings, all waived -> CONDITIONAL, PASS if approved
--   readiness CONDITIONAL (at-risk) and the review approved     -> PASS
--   otherwise                                                   -> the readiness decision
-- release_runs.decision keeps it current: every change of an input (result,
-- approval, waiver, a waiver's expiry) recomputes it in the same transaction,
-- and when it changes for the current run of a pull request whose check run
-- was completed, the outbox updates the check run (check_run_decision). The
-- conclusion first published stays in run_results.published_conclusion.

CREATE OR REPLACE FUNCTION boardready_private.release_decision(
  p_readiness_decision text, p_review_decision text, p_blocking integer, p_unwaived_blocking integer)
RETURNS text LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE
    WHEN p_readiness_decision IS NULL THEN NULL
    WHEN p_review_decision = 'changes_requested' THEN 'FAIL'
    WHEN p_unwaived_blocking > 0 THEN 'FAIL'
    WHEN p_readiness_decision = 'FAIL' AND p_blocking > 0 THEN
      CASE WHEN p_review_decision = 'approved' THEN 'PASS' ELSE 'CONDITIONAL' END
    WHEN p_readiness_decision = 'CONDITIONAL' AND p_review_decision = 'approved' THEN 'PASS'
    ELSE p_readiness_decision
  END
$$;

-- A review's decision from its standing approvals: any changes requested wins.
CREATE OR REPLACE FUNCTION boardready_private.review_decision_of(p_review_id bigint)
RETURNS text LANGUAGE sql STABLE AS $$
  SELECT CASE
    WHEN bool_or(a.status = 'changes_requested') THEN 'changes_requested'
    WHEN bool_or(a.status = 'approved') THEN 'approved'
    ELSE 'pending'
  END
  FROM boardready.review_approvals a WHERE a.review_id = p_review_id
$$;

-- Everything the decision of one release run depends on, as of p_now.
CREATE OR REPLACE FUNCTION boardready_private.release_decision_inputs(p_release_run_id bigint, p_now timestamptz)
RETURNS TABLE (run_result_id bigint, readiness_decision text, review_id bigint, review_decision text,
               blocking integer, unwaived_blocking integer, waived integer, next_expiry timestamptz)
LANGUAGE sql STABLE AS $$
  WITH result AS (
    SELECT r.id, r.decision, r.repository_id FROM boardready.run_results r
     WHERE r.release_run_id = p_release_run_id ORDER BY r.id DESC LIMIT 1
  ), judged AS (
    SELECT f.severity IN ('error', 'high') AS blocking, w.id IS NOT NULL AS waived, w.expires_at
      FROM result JOIN boardready.run_findings f ON f.run_result_id = result.id
      LEFT JOIN boardready.waivers w ON w.repository_id = result.repository_id AND w.fingerprint = f.fingerprint
            AND w.deleted_at IS NULL AND (w.expires_at IS NULL OR w.expires_at > p_now)
  )
  SELECT result.id, result.decision, rv.id, coalesce(rv.decision, 'pending'),
         (SELECT count(*) FILTER (WHERE blocking) FROM judged)::integer,
         (SELECT count(*) FILTER (WHERE blocking AND NOT waived) FROM judged)::integer,
         (SELECT count(*) FILTER (WHERE waived) FROM judged)::integer,
         (SELECT min(expires_at) FILTER (WHERE blocking AND waived) FROM judged)
    FROM result LEFT JOIN boardready.reviews rv ON rv.release_run_id = p_release_run_id
$$;

-- Whether a release run is the current one of its pull request (nothing newer
-- and not superseded) and its check run carries a completed result.
CREATE OR REPLACE FUNCTION boardready_private.release_run_publishable(p_release_run_id bigint)
RETURNS boolean LANGUAGE sql STABLE AS $$
  SELECT rr.status = 'completed' AND rr.check_run_id IS NOT NULL AND rr.check_run_published_at IS NOT NULL
         AND NOT EXISTS (SELECT 1 FROM boardready.release_runs n
                          WHERE n.repository_id = rr.repository_id AND n.pr_number = rr.pr_number
                            AND n.id > rr.id AND n.status <> 'superseded')
    FROM boardready.release_runs rr WHERE rr.id = p_release_run_id
$$;

-- Queue an update of the run's check run to its current decision.
CREATE OR REPLACE FUNCTION boardready_private.release_decision_enqueue_update(
  p_release_run_id bigint, p_run_after timestamptz, p_key text, p_now timestamptz)
RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
  v_run boardready.release_runs%ROWTYPE;
  v_id  bigint;
BEGIN
  SELECT * INTO v_run FROM boardready.release_runs WHERE id = p_release_run_id;
  v_id := boardready_private.outbox_enqueue(v_run.id, v_run.current_attempt_id, v_run.installation_id, 'check_run_decision',
                                    p_key, '{}'::jsonb, p_now);
  IF v_id IS NOT NULL AND p_run_after > p_now THEN
    UPDATE boardready.outbox_items SET run_after = p_run_after WHERE id = v_id;
  END IF;
  RETURN v_id;
END $$;

-- Recompute the run's release decision as of p_now and store it. When it
-- differs from what the check run shows and the run is publishable, queue the
-- update (p_enqueue); when a waiver it relies on will expire, queue a
-- recomputation for that moment. Returns the decision and whether it changed.
CREATE OR REPLACE FUNCTION boardready_private.release_decision_refresh(
  p_release_run_id bigint, p_now timestamptz, p_enqueue boolean DEFAULT true)
RETURNS TABLE (decision text, changed boolean)
LANGUAGE plpgsql AS $$
DECLARE
  v_run      boardready.release_runs%ROWTYPE;
  v_in       record;
  v_decision text;
  v_shown    text;
BEGIN
  SELECT * INTO v_run FROM boardready.release_runs rr WHERE rr.id = p_release_run_id FOR UPDATE;
  SELECT * INTO v_in FROM boardready_private.release_decision_inputs(p_release_run_id, p_now);
  IF v_in.run_result_id IS NULL THEN
    RETURN QUERY SELECT v_run.decision, false;  -- no result yet: nothing to combine
    RETURN;
  END IF;
  -- Relaxed findings (reviews_relaxed.sql) count until the review is approved.
  v_decision := boardready_private.release_decision(v_in.readiness_decision, v_in.review_decision, v_in.blocking,
                                            v_in.unwaived_blocking,
                                            boardready_private.release_decision_relaxed(p_release_run_id, p_now));
  IF v_decision IS DISTINCT FROM v_run.decision THEN
    UPDATE boardready.release_runs
       SET decision = v_decision, conclusion = boardready_private.conclusion_for_decision(v_decision), updated_at = p_now
     WHERE id = p_release_run_id;
    PERFORM boardready_private.run_result_completion_follow(p_release_run_id, v_decision);  -- not yet sent (results.sql)
  END IF;
  IF p_enqueue AND boardready_private.release_run_publishable(p_release_run_id) THEN
    -- What the check run shows: the last decision update, else what its completion showed.
    v_shown := coalesce(v_run.published_decision, boardready_private.run_result_completion_decision(v_in.run_result_id));
    IF v_shown IS DISTINCT FROM v_decision THEN
      UPDATE boardready.release_runs SET decision_updates = decision_updates + 1 WHERE id = p_release_run_id;
      PERFORM boardready_private.release_decision_enqueue_update(
        p_release_run_id, p_now, 'check_run_decision:' || p_release_run_id || ':' || (v_run.decision_updates + 1),
        p_now);
    END IF;
    IF v_in.next_expiry IS NOT NULL THEN
      PERFORM boardready_private.release_decision_enqueue_update(
        p_release_run_id, v_in.next_expiry,
        'check_run_decision:' || p_release_run_id || ':expiry:' || extract(epoch FROM v_in.next_expiry), p_now);
    END IF;
  END IF;
  RETURN QUERY SELECT v_decision, v_decision IS DISTINCT FROM v_run.decision;
END $$;

-- Called when the check run's completion was published (outbox_report, check_run_completed):
-- if the decision moved on meanwhile (an approval, a waiver), update the check run.
CREATE OR REPLACE FUNCTION boardready_private.release_decision_after_completion(p_release_run_id bigint, p_now timestamptz)
RETURNS void LANGUAGE sql AS $$
  SELECT FROM boardready_private.release_decision_refresh(p_release_run_id, p_now)
$$;

-- Refresh every completed run of the repository whose result has this
-- finding fingerprint (a waiver was created or deleted).
CREATE OR REPLACE FUNCTION boardready_private.release_decisions_refresh_fingerprint(
  p_repository_id bigint, p_fingerprint text, p_now timestamptz)
RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
  v_run     bigint;
  v_changed integer := 0;
BEGIN
  FOR v_run IN
    SELECT DISTINCT rr.id FROM boardready.release_runs rr
      JOIN boardready.run_results r ON r.release_run_id = rr.id
      JOIN boardready.run_findings f ON f.run_result_id = r.id AND f.fingerprint = p_fingerprint
     WHERE rr.repository_id = p_repository_id AND rr.status = 'completed'
     ORDER BY rr.id
  LOOP
    IF (SELECT c.changed FROM boardready_private.release_decision_refresh(v_run, p_now) c) THEN
      v_changed := v_changed + 1;
    END IF;
  END LOOP;
  RETURN v_changed;
END $$;

-- A review for a release run whose result was accepted (release_result_accept).
CREATE OR REPLACE FUNCTION boardready_private.review_open(p_release_run_id bigint, p_created_by text, p_now timestamptz)
RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
  v_id bigint;
BEGIN
  INSERT INTO boardready.reviews (release_run_id, repository_id, created_by, created_at, updated_at)
  SELECT rr.id, rr.repository_id, p_created_by, p_now, p_now FROM boardready.release_runs rr
   WHERE rr.id = p_release_run_id
  ON CONFLICT (release_run_id) DO NOTHING
  RETURNING id INTO v_id;
  RETURN coalesce(v_id, (SELECT id FROM boardready.reviews WHERE release_run_id = p_release_run_id));
END $$;

-- The creator of a release run's review: the pull request's author, else the
-- actor that sent the result, else system.
CREATE OR REPLACE FUNCTION boardready_private.review_creator(p_release_run_id bigint, p_ingesting_actor text)
RETURNS text LANGUAGE sql STABLE AS $$
  SELECT coalesce('host-user:' || pr.author_id, p_ingesting_actor, 'system')
    FROM boardready.release_runs rr
    LEFT JOIN boardready.pull_requests pr ON pr.repository_id = rr.repository_id AND pr.number = rr.pr_number
   WHERE rr.id = p_release_run_id
$$;

-- POST /api/v1/reviews/{id}/approvals. p_repository_ids are the repositories
-- the caller may act on; a review elsewhere is not_found. Outcomes: not_found,
-- self_approval_not_allowed, recorded, unchanged (the same standing approval).
CREATE OR REPLACE FUNCTION boardready_private.review_approval_record(
  p_review_id bigint, p_repository_ids bigint[], p_actor text, p_status text, p_break_glass boolean,
  p_break_glass_reason text, p_now timestamptz)
RETURNS TABLE (outcome text, approval_id bigint, status text, break_glass boolean, review_decision text,
               release_run_id bigint, release_decision text, updated_at timestamptz)
LANGUAGE plpgsql SET search_path = boardready, pg_temp AS $$
DECLARE
  v_review   reviews%ROWTYPE;
  v_run      release_runs%ROWTYPE;
  v_existing review_approvals%ROWTYPE;
  v_glass    boolean;
  v_id       bigint;
  v_decision text;
BEGIN
  SELECT * INTO v_review FROM reviews rv WHERE rv.id = p_review_id AND rv.repository_id = ANY (p_repository_ids);
  IF NOT FOUND THEN
    RETURN QUERY SELECT 'not_found'::text, NULL::bigint, NULL::text, NULL::boolean, NULL::text, NULL::bigint,
                        NULL::text, NULL::timestamptz;
    RETURN;
  END IF;
  -- One decision per release run at a time: the run's row serializes approvals,
  -- waivers and the check run's completion.
  SELECT * INTO v_run FROM release_runs rr WHERE rr.id = v_review.release_run_id FOR UPDATE;
  SELECT * INTO v_review FROM reviews rv WHERE rv.id = p_review_id FOR UPDATE;

  v_glass := p_status = 'approved' AND p_actor = v_review.created_by;
  IF v_glass AND NOT coalesce(p_break_glass, false) THEN
    RETURN QUERY SELECT 'self_approval_not_allowed'::text, NULL::bigint, NULL::text, NULL::boolean,
                        v_review.decision, v_run.id, v_run.decision, NULL::timestamptz;
    RETURN;
  END IF;

  SELECT * INTO v_existing FROM review_approvals a WHERE a.review_id = p_review_id AND a.approver_id = p_actor;
  IF FOUND AND v_existing.status = p_status THEN
    RETURN QUERY SELECT 'unchanged'::text, v_existing.id, v_existing.status, v_existing.break_glass,
                        v_review.decision, v_run.id, v_run.decision, v_existing.updated_at;
    RETURN;
  END IF;

  INSERT INTO review_approvals AS a (review_id, approver_id, status, break_glass, break_glass_reason, created_at,
                                     updated_at)
  VALUES (p_review_id, p_actor, p_status, v_glass, CASE WHEN v_glass THEN p_break_glass_reason END, p_now, p_now)
  ON CONFLICT (review_id, approver_id) DO UPDATE
     SET status = EXCLUDED.status, break_glass = EXCLUDED.break_glass,
         break_glass_reason = EXCLUDED.break_glass_reason, updated_at = p_now
  RETURNING a.id INTO v_id;

  UPDATE reviews SET decision = boardready_private.review_decision_of(p_review_id), updated_at = p_now WHERE id = p_review_id
  RETURNING decision INTO v_decision;
  INSERT INTO audit_events (event_type, installation_id, actor, operation_id, item_type, item_id, occurred_at, details)
  VALUES ('review.approval_recorded', v_run.installation_id, p_actor, 'approval:' || v_id, 'review',
          p_review_id::text, p_now, jsonb_build_object('status', p_status, 'releaseRunId', v_run.id)
                                    -- what an approval accepts that the pull request relaxed (reviews_relaxed.sql)
                                    || CASE WHEN p_status = 'approved'
                                              AND boardready_private.release_run_relaxed_settings(v_run.id) <> '[]'
                                            THEN jsonb_build_object('relaxed',
                                                   boardready_private.release_run_relaxed_settings(v_run.id))
                                            ELSE '{}'::jsonb END);
  IF v_glass THEN
    INSERT INTO audit_events (event_type, installation_id, actor, operation_id, item_type, item_id, occurred_at,
                              details)
    VALUES ('control_plane.review_break_glass', v_run.installation_id, p_actor, 'approval:' || v_id, 'review',
            p_review_id::text, p_now, jsonb_build_object('approvalId', v_id, 'releaseRunId', v_run.id));
  END IF;

  RETURN QUERY SELECT 'recorded'::text, v_id, p_status, v_glass, v_decision, v_run.id,
                      (SELECT d.decision FROM boardready_private.release_decision_refresh(v_run.id, p_now) d), p_now;
END $$;

-- POST /api/v1/repositories/{id}/waivers. Outcomes: not_found, waiver_exists
-- (a standing, unexpired waiver for the fingerprint), created.
CREATE OR REPLACE FUNCTION boardready_private.waiver_store(
  p_repository_id bigint, p_repository_ids bigint[], p_fingerprint text, p_reason text, p_expires_at timestamptz,
  p_actor text, p_now timestamptz)
RETURNS TABLE (outcome text, waiver_id bigint, created_at timestamptz, decisions_changed integer)
LANGUAGE plpgsql SET search_path = boardready, pg_temp AS $$
DECLARE
  v_installation bigint;
  v_existing     waivers%ROWTYPE;
  v_id           bigint;
BEGIN
  SELECT r.installation_id INTO v_installation FROM repositories r
   WHERE r.id = p_repository_id AND p_repository_id = ANY (p_repository_ids);
  IF NOT FOUND THEN
    RETURN QUERY SELECT 'not_found'::text, NULL::bigint, NULL::timestamptz, 0;
    RETURN;
  END IF;
  SELECT * INTO v_existing FROM waivers w
   WHERE w.repository_id = p_repository_id AND w.fingerprint = p_fingerprint AND w.deleted_at IS NULL FOR UPDATE;
  IF FOUND THEN
    IF v_existing.expires_at IS NULL OR v_existing.expires_at > p_now THEN
      RETURN QUERY SELECT 'waiver_exists'::text, v_existing.id, v_existing.created_at, 0;
      RETURN;
    END IF;
    -- An expired waiver is retired by the one that replaces it.
    UPDATE waivers SET deleted_at = v_existing.expires_at, deleted_by = 'system' WHERE id = v_existing.id;
  END IF;
  INSERT INTO waivers (repository_id, fingerprint, reason, expires_at, created_by, created_at)
  VALUES (p_repository_id, p_fingerprint, p_reason, p_expires_at, p_actor, p_now)
  RETURNING id INTO v_id;
  INSERT INTO audit_events (event_type, installation_id, actor, operation_id, item_type, item_id, occurred_at, details)
  VALUES ('review.waiver_created', v_installation, p_actor, 'waiver:' || v_id, 'waiver', v_id::text, p_now,
          jsonb_build_object('repositoryId', p_repository_id, 'expiresAt', p_expires_at));
  RETURN QUERY SELECT 'created'::text, v_id, p_now,
                      boardready_private.release_decisions_refresh_fingerprint(p_repository_id, p_fingerprint, p_now);
END $$;

-- DELETE /api/v1/repositories/{id}/waivers?waiverId=. Outcomes: not_found,
-- already_deleted, deleted.
CREATE OR REPLACE FUNCTION boardready.waiver_delete(
  p_repository_id bigint, p_repository_ids bigint[], p_waiver_id bigint, p_actor text,
  p_now timestamptz DEFAULT now())
RETURNS TABLE (outcome text, waiver_id bigint, deleted_at timestamptz, decisions_changed integer)
LANGUAGE plpgsql ROWS 1 SECURITY DEFINER SET search_path = boardready, pg_temp AS $$
DECLARE
  v_waiver       waivers%ROWTYPE;
  v_installation bigint;
BEGIN
  SELECT w.* INTO v_waiver FROM waivers w
   WHERE w.id = p_waiver_id AND w.repository_id = p_repository_id AND p_repository_id = ANY (p_repository_ids)
     FOR UPDATE;
  IF NOT FOUND THEN
    RETURN QUERY SELECT 'not_found'::text, NULL::bigint, NULL::timestamptz, 0;
    RETURN;
  END IF;
  IF v_waiver.deleted_at IS NOT NULL THEN
    RETURN QUERY SELECT 'already_deleted'::text, v_waiver.id, v_waiver.deleted_at, 0;
    RETURN;
  END IF;
  UPDATE waivers SET deleted_at = p_now, deleted_by = p_actor WHERE id = v_waiver.id;
  SELECT r.installation_id INTO v_installation FROM repositories r WHERE r.id = p_repository_id;
  INSERT INTO audit_events (event_type, installation_id, actor, operation_id, item_type, item_id, occurred_at, details)
  VALUES ('review.waiver_deleted', v_installation, p_actor, 'waiver:' || v_waiver.id || ':delete', 'waiver',
          v_waiver.id::text, p_now, jsonb_build_object('repositoryId', p_repository_id));
  RETURN QUERY SELECT 'deleted'::text, v_waiver.id, p_now,
                      boardready_private.release_decisions_refresh_fingerprint(p_repository_id, v_waiver.fingerprint, p_now);
END $$;

-- The outbox worker updates a check run to its run's decision: recompute it
-- now (a waiver may have expired) and say what to send. Outcomes: lease_lost,
-- skip (superseded, not current, no completed check run yet: the completion
-- will queue it), unchanged (the check run already shows it), publish.
CREATE OR REPLACE FUNCTION boardready.release_decision_publication(
  p_item_id bigint, p_lease_token uuid, p_now timestamptz DEFAULT now())
RETURNS TABLE (outcome text, decision text, conclusion text, readiness text, score integer,
               review_decision text, blocking integer, unwaived_blocking integer, waived integer,
               tool_name text, tool_version text)
LANGUAGE plpgsql ROWS 1 SECURITY DEFINER SET search_path = boardready, pg_temp AS $$
DECLARE
  v_run_id   bigint;
  v_decision text;
  v_run      release_runs%ROWTYPE;
  v_in       record;
BEGIN
  IF boardready_private.work_lock_leased(p_item_id, p_lease_token) IS NULL THEN
    RETURN QUERY SELECT 'lease_lost'::text, NULL::text, NULL::text, NULL::text, NULL::integer, NULL::text,
                        NULL::integer, NULL::integer, NULL::integer, NULL::text, NULL::text;
    RETURN;
  END IF;
  SELECT o.release_run_id INTO v_run_id FROM outbox_items o WHERE o.id = p_item_id;
  SELECT d.decision INTO v_decision FROM boardready_private.release_decision_refresh(v_run_id, p_now, false) d;
  SELECT * INTO v_run FROM release_runs WHERE id = v_run_id;
  SELECT * INTO v_in FROM boardready_private.release_decision_inputs(v_run_id, p_now);
  RETURN QUERY
  SELECT CASE WHEN NOT coalesce(boardready_private.release_run_publishable(v_run_id), false) THEN 'skip'
              WHEN coalesce(v_run.published_decision, boardready_private.run_result_completion_decision(v_in.run_result_id))
                   = v_decision THEN 'unchanged'
              ELSE 'publish' END,
         v_decision, boardready_private.conclusion_for_decision(v_decision), r.readiness, r.score, v_in.review_decision,
         v_in.blocking, v_in.unwaived_blocking, v_in.waived, r.tool_name, r.tool_version
    FROM run_results r WHERE r.id = v_in.run_result_id;
END $$;

-- The check run's decision update is reported through outbox_report
-- (outbox.sql, decision_published).

-- For operators: reviews with their standing approvals, and waivers (reasons
-- are tenant text and stay out).
CREATE OR REPLACE VIEW ops.reviews AS
SELECT rv.id, rv.release_run_id, rv.repository_id, rv.created_by, rv.decision, rv.created_at, rv.updated_at,
       (SELECT count(*) FROM boardready.review_approvals a WHERE a.review_id = rv.id AND a.status = 'approved')
         AS approvals,
       (SELECT count(*) FROM boardready.review_approvals a WHERE a.review_id = rv.id AND a.break_glass)
         AS break_glass_approvals
  FROM boardready.reviews rv;

CREATE OR REPLACE VIEW ops.waivers AS
SELECT w.id, w.repository_id, w.fingerprint, w.expires_at, w.created_by, w.created_at, w.deleted_at, w.deleted_by,
       w.deleted_at IS NULL AND (w.expires_at IS NULL OR w.expires_at > now()) AS standing
  FROM boardready.waivers w;

-- A review approval (review_approval_record): at most p_limit decisions a minute
-- per actor and repository (rate_limited, nothing recorded), and the same
-- standing approval again is already_applied (nothing recorded, nothing
-- published). p_actor is the person: a token minted by a person acts as them.
CREATE OR REPLACE FUNCTION boardready.review_record_approval_v2(
  p_review_id bigint, p_repository_ids bigint[], p_actor text, p_status text, p_break_glass boolean,
  p_break_glass_reason text, p_limit integer, p_now timestamptz DEFAULT now())
RETURNS TABLE (outcome text, approval_id bigint, status text, break_glass boolean, review_decision text,
               release_run_id bigint, release_decision text, updated_at timestamptz, retry_after_seconds integer)
LANGUAGE plpgsql ROWS 1 SECURITY DEFINER SET search_path = boardready, pg_temp AS $$
DECLARE
  v_repository bigint;
  v_rate       record;
BEGIN
  SELECT rv.repository_id INTO v_repository FROM reviews rv
   WHERE rv.id = p_review_id AND rv.repository_id = ANY (p_repository_ids);
  IF v_repository IS NOT NULL THEN
    SELECT * INTO v_rate FROM rate_take('decisions', p_actor || '@' || v_repository, p_limit, p_now);
    IF NOT v_rate.allowed THEN
      RETURN QUERY SELECT 'rate_limited'::text, NULL::bigint, NULL::text, NULL::boolean, NULL::text, NULL::bigint,
                          NULL::text, NULL::timestamptz, v_rate.retry_after_seconds;
      RETURN;
    END IF;
  END IF;
  RETURN QUERY
  SELECT CASE WHEN a.outcome = 'unchanged' THEN 'already_applied' ELSE a.outcome END, a.approval_id, a.status,
         a.break_glass, a.review_decision, a.release_run_id, a.release_decision, a.updated_at, NULL::integer
    FROM boardready_private.review_approval_record(p_review_id, p_repository_ids, p_actor, p_status, p_break_glass,
                                                   p_break_glass_reason, p_now) a;
END $$;

-- A waiver (waiver_store): the decisions limit as for approvals, and
-- an expiry at most p_max_days ahead (invalid_expires_at, nothing stored).
-- A fingerprint the repository's runs report as checker.rule-failed (a rule
-- that did not run: the check is incomplete) is never waived
-- (finding_not_waivable, nothing stored), as the checker refuses to let the
-- repository's .boardready.toml lower it: what a rule did not look at cannot
-- be accepted as looked at.
CREATE OR REPLACE FUNCTION boardready.waiver_create_v3(
  p_repository_id bigint, p_repository_ids bigint[], p_fingerprint text, p_reason text, p_expires_at timestamptz,
  p_actor text, p_max_days integer, p_limit integer, p_now timestamptz DEFAULT now())
RETURNS TABLE (outcome text, waiver_id bigint, created_at timestamptz, decisions_changed integer,
               retry_after_seconds integer)
LANGUAGE plpgsql ROWS 1 SECURITY DEFINER SET search_path = boardready, pg_temp AS $$
DECLARE
  v_rate record;
BEGIN
  IF p_expires_at IS NOT NULL
     AND (p_expires_at <= p_now OR p_expires_at > p_now + make_interval(days => p_max_days)) THEN
    RETURN QUERY SELECT 'invalid_expires_at'::text, NULL::bigint, NULL::timestamptz, 0, NULL::integer;
    RETURN;
  END IF;
  IF p_repository_id = ANY (p_repository_ids) THEN
    IF EXISTS (SELECT FROM run_results r
                 JOIN run_findings f ON f.run_result_id = r.id
                WHERE r.repository_id = p_repository_id AND f.fingerprint = p_fingerprint
                  AND f.rule_id = 'checker.rule-failed') THEN
      RETURN QUERY SELECT 'finding_not_waivable'::text, NULL::bigint, NULL::timestamptz, 0, NULL::integer;
      RETURN;
    END IF;
    SELECT * INTO v_rate FROM rate_take('decisions', p_actor || '@' || p_repository_id, p_limit, p_now);
    IF NOT v_rate.allowed THEN
      RETURN QUERY SELECT 'rate_limited'::text, NULL::bigint, NULL::timestamptz, 0, v_rate.retry_after_seconds;
      RETURN;
    END IF;
  END IF;
  RETURN QUERY SELECT w.outcome, w.waiver_id, w.created_at, w.decisions_changed, NULL::integer
    FROM boardready_private.waiver_store(p_repository_id, p_repository_ids, p_fingerprint, p_reason, p_expires_at,
                                         p_actor, p_now) w;
END $$;

-- Release 0.7.0's waiver (its code has no answer for finding_not_waivable):
-- waiver_create_v3 without that refusal.
CREATE OR REPLACE FUNCTION boardready.waiver_create_v2(
  p_repository_id bigint, p_repository_ids bigint[], p_fingerprint text, p_reason text, p_expires_at timestamptz,
  p_actor text, p_max_days integer, p_limit integer, p_now timestamptz DEFAULT now())
RETURNS TABLE (outcome text, waiver_id bigint, created_at timestamptz, decisions_changed integer,
               retry_after_seconds integer)
LANGUAGE plpgsql ROWS 1 SECURITY DEFINER SET search_path = boardready, pg_temp AS $$
DECLARE
  v_rate record;
BEGIN
  IF p_expires_at IS NOT NULL
     AND (p_expires_at <= p_now OR p_expires_at > p_now + make_interval(days => p_max_days)) THEN
    RETURN QUERY SELECT 'invalid_expires_at'::text, NULL::bigint, NULL::timestamptz, 0, NULL::integer;
    RETURN;
  END IF;
  IF p_repository_id = ANY (p_repository_ids) THEN
    SELECT * INTO v_rate FROM rate_take('decisions', p_actor || '@' || p_repository_id, p_limit, p_now);
    IF NOT v_rate.allowed THEN
      RETURN QUERY SELECT 'rate_limited'::text, NULL::bigint, NULL::timestamptz, 0, v_rate.retry_after_seconds;
      RETURN;
    END IF;
  END IF;
  RETURN QUERY SELECT w.outcome, w.waiver_id, w.created_at, w.decisions_changed, NULL::integer
    FROM boardready_private.waiver_store(p_repository_id, p_repository_ids, p_fingerprint, p_reason, p_expires_at,
                                         p_actor, p_now) w;
END $$;

-- review_record_approval_v2 with the reviewer's comment, in the same
-- transaction: a request for changes that is recorded keeps p_comment on the
-- approval (shown in the run page's history while comment_at = updated_at).
-- A comment goes only with changes_requested (invalid_comment otherwise). The
-- same standing request again (already_applied: nothing published) with a
-- comment replaces the comment, so one the code host did not take can be sent
-- again; a refused approval keeps what it had.
CREATE OR REPLACE FUNCTION boardready.review_record_approval_comment_v2(
  p_review_id bigint, p_repository_ids bigint[], p_actor text, p_status text, p_break_glass boolean,
  p_break_glass_reason text, p_comment text, p_limit integer, p_now timestamptz DEFAULT now())
RETURNS TABLE (outcome text, approval_id bigint, status text, break_glass boolean, review_decision text,
               release_run_id bigint, release_decision text, updated_at timestamptz, retry_after_seconds integer)
LANGUAGE plpgsql ROWS 1 SECURITY DEFINER SET search_path = boardready, pg_temp AS $$
DECLARE
  v_row record;
BEGIN
  IF p_comment IS NOT NULL AND (p_status IS DISTINCT FROM 'changes_requested'
                                OR length(p_comment) NOT BETWEEN 1 AND 4000) THEN
    RETURN QUERY SELECT 'invalid_comment'::text, NULL::bigint, NULL::text, NULL::boolean, NULL::text, NULL::bigint,
                        NULL::text, NULL::timestamptz, NULL::integer;
    RETURN;
  END IF;
  SELECT * INTO v_row FROM review_record_approval_v2(p_review_id, p_repository_ids, p_actor, p_status, p_break_glass,
                                                     p_break_glass_reason, p_limit, p_now) a;
  IF v_row.outcome = 'recorded' OR (v_row.outcome = 'already_applied' AND p_comment IS NOT NULL) THEN
    UPDATE review_approvals a
       SET comment = p_comment, comment_at = CASE WHEN p_comment IS NOT NULL THEN a.updated_at END
     WHERE a.id = v_row.approval_id;
  END IF;
  RETURN QUERY SELECT v_row.outcome, v_row.approval_id, v_row.status, v_row.break_glass, v_row.review_decision,
                      v_row.release_run_id, v_row.release_decision, v_row.updated_at, v_row.retry_after_seconds;
END $$;

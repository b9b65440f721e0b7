-- Run results: the canonical decision, ingest for the review pages, and the
-- acceptance of a release run's result, which closes the attempt and queues
-- the check run completion and the pull request comment in one transaction.

-- readiness ready, at-risk, blocked map to PASS, CONDITIONAL, FAIL.
CREATE OR REPLACE FUNCTION boardready_private.decision_for_readiness(p_readiness text)
RETURNS text LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE p_readiness WHEN 'ready' THEN 'PASS' WHEN 'at-risk' THEN 'CONDITIONAL'
                          WHEN 'blocked' THEN 'FAIL' ELSE 'UNKNOWN' END
$$;

-- PASS success, FAIL failure, CONDITIONAL (an accepted at-risk result)
-- neutral; UNKNOWN fails closed: never success.
CREATE OR REPLACE FUNCTION boardready_private.conclusion_for_decision(p_decision text)
RETURNS text LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE p_decision WHEN 'PASS' THEN 'success' WHEN 'CONDITIONAL' THEN 'neutral' ELSE 'failure' END
$$;

-- Store a validated result and its findings; returns the new id.
CREATE OR REPLACE FUNCTION boardready_private.run_result_store(
  p_repository_id bigint, p_release_run_id bigint, p_attempt_id bigint, p_source text, p_result jsonb,
  p_digest text, p_api_token_id text, p_oidc_jti text, p_now timestamptz)
RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
  v_id       bigint;
  v_decision text := boardready_private.decision_for_readiness(p_result ->> 'readiness');
BEGIN
  INSERT INTO boardready.run_results (repository_id, release_run_id, attempt_id, source, trigger_kind, head_sha,
                                      readiness, score, decision, conclusion, tool_name, tool_version, kicad_version,
                                      findings_count, digest, api_token_id, oidc_jti, report_sha256, report_bytes,
                                      received_at)
  VALUES (p_repository_id, p_release_run_id, p_attempt_id, p_source, p_result ->> 'triggerKind',
          p_result ->> 'headSha', p_result ->> 'readiness', (p_result ->> 'score')::integer, v_decision,
          boardready_private.conclusion_for_decision(v_decision), p_result #>> '{tool,name}', p_result #>> '{tool,version}',
          p_result ->> 'kicadVersion', jsonb_array_length(p_result -> 'findings'), p_digest, p_api_token_id,
          p_oidc_jti, p_result #>> '{reportArtifact,sha256}', (p_result #>> '{reportArtifact,bytes}')::integer,
          p_now)
  RETURNING id INTO v_id;

  INSERT INTO boardready.run_findings (run_result_id, ordinal, rule_id, severity, message, fingerprint, title, path,
                                       start_line, end_line, start_column, end_column, relaxed)
  SELECT v_id, f.ordinal, f.value ->> 'ruleId', f.value ->> 'severity', f.value ->> 'message',
         f.value ->> 'fingerprint', f.value ->> 'title', f.value ->> 'path',
         (f.value ->> 'startLine')::integer, (f.value ->> 'endLine')::integer,
         (f.value ->> 'startColumn')::integer, (f.value ->> 'endColumn')::integer,
         f.value -> 'relaxed'   -- the pull request relaxed it (reviews_relaxed.sql)
    FROM jsonb_array_elements(p_result -> 'findings') WITH ORDINALITY AS f (value, ordinal);
  PERFORM boardready_private.run_bom_store(v_id, p_result -> 'bom');  -- supply tracking (supply.sql)
  RETURN v_id;
END $$;

-- POST /api/v1/runs: a run for the review pages. Touches no check run.
CREATE OR REPLACE FUNCTION boardready.run_ingest(
  p_repository_id bigint, p_api_token_id text, p_result jsonb, p_now timestamptz DEFAULT now())
RETURNS TABLE (outcome text, run_result_id bigint, decision text)
LANGUAGE plpgsql ROWS 1 SECURITY DEFINER SET search_path = boardready, pg_temp AS $$
DECLARE
  v_id bigint;
BEGIN
  IF NOT EXISTS (SELECT 1 FROM repositories WHERE id = p_repository_id AND removed_at IS NULL) THEN
    RETURN QUERY SELECT 'repository_unknown'::text, NULL::bigint, NULL::text;
    RETURN;
  END IF;
  v_id := boardready_private.run_result_store(p_repository_id, NULL, NULL, 'ingest', p_result, NULL, p_api_token_id, NULL, p_now);
  RETURN QUERY SELECT 'accepted'::text, v_id, boardready_private.decision_for_readiness(p_result ->> 'readiness');
END $$;

-- A release run's result, from the signed workflow callback (p_workflow_run_id
-- from the ID token) or a bearer token (p_workflow_run_id NULL). Refusals
-- write nothing; acceptance stores the result, decides, closes the attempt,
-- writes an audit event and queues the check run completion and the comment.
-- A bearer result decides only where the repository opted in
-- (token_published_results; else oidc_result_required), and the signed result
-- is never locked out by it: arriving later for the same attempt, it
-- supersedes the token's result, decision and publication.
CREATE OR REPLACE FUNCTION boardready.release_result_accept(
  p_attempt_ref     text,
  p_repository_id   bigint,
  p_workflow_run_id bigint,
  p_source          text,
  p_result          jsonb,
  p_digest          text,
  p_api_token_id    text,
  p_oidc_jti        text,
  p_now             timestamptz DEFAULT now())
RETURNS TABLE (outcome text, run_result_id bigint, release_run_id bigint, decision text, conclusion text,
               check_run_id bigint)
LANGUAGE plpgsql ROWS 1 SECURITY DEFINER SET search_path = boardready, pg_temp AS $$
DECLARE
  v_attempt  release_run_attempts%ROWTYPE;
  v_run      release_runs%ROWTYPE;
  v_existing run_results%ROWTYPE;
  v_id       bigint;
  v_decision text := boardready_private.decision_for_readiness(p_result ->> 'readiness');
  v_supersede boolean := false;
  v_binds_run boolean;
BEGIN
  SELECT * INTO v_attempt FROM release_run_attempts a
   WHERE p_attempt_ref ~ '^[0-9]{1,18}-[0-9a-f]{32}$'
     AND a.id = split_part(p_attempt_ref, '-', 1)::bigint AND a.nonce = split_part(p_attempt_ref, '-', 2);
  IF NOT FOUND THEN
    RETURN QUERY SELECT 'attempt_not_found'::text, NULL::bigint, NULL::bigint, NULL::text, NULL::text, NULL::bigint;
    RETURN;
  END IF;
  -- One decision per release run at a time: concurrent callbacks queue here.
  SELECT * INTO v_run FROM release_runs WHERE id = v_attempt.release_run_id FOR UPDATE;

  IF v_run.repository_id <> p_repository_id THEN
    RETURN QUERY SELECT 'repository_mismatch'::text, NULL::bigint, NULL::bigint, NULL::text, NULL::text, NULL::bigint;
    RETURN;
  END IF;
  IF p_source = 'bearer_result'
     AND NOT (SELECT r.token_published_results FROM repositories r WHERE r.id = v_run.repository_id) THEN
    RETURN QUERY SELECT 'oidc_result_required'::text, NULL::bigint, v_run.id, NULL::text, NULL::text, NULL::bigint;
    RETURN;
  END IF;
  -- A dispatch the host answered without run details (204), or whose answer
  -- was lost, leaves the attempt without a run id until reconciliation finds
  -- the run by its name. A fast workflow may call back first: its verified ID
  -- token, from this repository's readiness workflow and carrying the
  -- attempt's nonce, names the run, and acceptance binds it (below).
  v_binds_run := p_source = 'workflow_callback' AND v_attempt.workflow_run_id IS NULL
                 AND v_attempt.dispatch_state IN ('dispatched', 'uncertain') AND p_workflow_run_id IS NOT NULL;
  IF p_source = 'workflow_callback' AND NOT v_binds_run
     AND v_attempt.workflow_run_id IS DISTINCT FROM p_workflow_run_id THEN
    RETURN QUERY SELECT 'run_id_mismatch'::text, NULL::bigint, NULL::bigint, NULL::text, NULL::text, NULL::bigint;
    RETURN;
  END IF;

  SELECT * INTO v_existing FROM run_results r WHERE r.attempt_id = v_attempt.id AND r.superseded_at IS NULL;
  IF FOUND THEN
    v_supersede := v_existing.source = 'bearer_result' AND p_source = 'workflow_callback';
    IF NOT v_supersede THEN
      -- The same result again is accepted once; another one is a conflict.
      RETURN QUERY SELECT CASE WHEN v_existing.digest = p_digest THEN 'duplicate' ELSE 'conflict' END,
                          v_existing.id, v_run.id, v_existing.decision, v_existing.conclusion, v_run.check_run_id;
      RETURN;
    END IF;
  END IF;
  -- A token-published result completed the run; only the signed result may follow it.
  IF v_run.current_attempt_id <> v_attempt.id
     OR (v_run.status NOT IN ('queued', 'dispatched') AND NOT v_supersede) THEN
    RETURN QUERY SELECT 'attempt_not_current'::text, NULL::bigint, v_run.id, NULL::text, NULL::text, NULL::bigint;
    RETURN;
  END IF;
  IF (p_result ->> 'headSha') IS DISTINCT FROM v_run.head_sha THEN
    RETURN QUERY SELECT 'head_sha_mismatch'::text, NULL::bigint, v_run.id, NULL::text, NULL::text, NULL::bigint;
    RETURN;
  END IF;

  IF v_supersede THEN
    UPDATE run_results SET superseded_at = p_now WHERE id = v_existing.id;
    -- What the token's result still had to publish is dropped: the signed one is published instead.
    UPDATE outbox_items o SET status = 'completed', outcome = 'superseded', completed_at = p_now, updated_at = p_now
     WHERE o.run_result_id = v_existing.id AND o.status = 'accepted';
  END IF;
  v_id := boardready_private.run_result_store(p_repository_id, v_run.id, v_attempt.id, p_source, p_result, p_digest, p_api_token_id,
                           p_oidc_jti, p_now);
  UPDATE release_runs SET status = 'completed', decision = v_decision,
         conclusion = boardready_private.conclusion_for_decision(v_decision), completed_at = p_now, updated_at = p_now
   WHERE id = v_run.id;
  UPDATE release_run_attempts
     SET lease_closed_at = p_now,
         workflow_run_id = CASE WHEN v_binds_run THEN p_workflow_run_id ELSE workflow_run_id END,
         dispatch_state = CASE WHEN v_binds_run THEN 'dispatched' ELSE dispatch_state END
   WHERE id = v_attempt.id;
  IF v_binds_run THEN
    -- The uncertain dispatch did start this run: its dead letter is resolved,
    -- as reconciliation resolves it when it finds the run first. Closed now,
    -- the attempt is nothing reconciliation looks at again, so a dead letter
    -- left here would stay, unreplayable, in every operator's list.
    UPDATE outbox_items
       SET status = 'completed', outcome = 'dispatch_reconciled', completed_at = p_now, updated_at = p_now
     WHERE attempt_id = v_attempt.id AND kind = 'workflow_dispatch' AND status = 'dead_letter';
  END IF;
  INSERT INTO audit_events (event_type, installation_id, actor, operation_id, item_type, item_id, occurred_at, details)
  VALUES ('release_run.result_accepted', v_run.installation_id,
          -- One actor format everywhere (reviews.sql): the workflow is no person or token, so 'system'.
          CASE p_source WHEN 'workflow_callback' THEN 'system' ELSE 'token:' || p_api_token_id END,
          'result:' || v_id, 'release_run', v_run.id::text, p_now,
          jsonb_build_object('attemptId', v_attempt.id, 'decision', v_decision, 'source', p_source,
                             'supersedes', CASE WHEN v_supersede THEN v_existing.id END));

  -- The run's review, and its release decision with the repository's waivers (reviews.sql).
  PERFORM boardready_private.review_open(v_run.id, boardready_private.review_creator(v_run.id, CASE WHEN p_api_token_id IS NOT NULL
                                                              THEN 'token:' || p_api_token_id END), p_now);
  PERFORM boardready_private.release_decision_refresh(v_run.id, p_now);
  PERFORM boardready_private.outbox_enqueue_for_result(v_run.id, v_attempt.id, v_run.installation_id, v_id, 'check_run_complete',
                                    'check_run_complete:' || v_run.id
                                      || CASE WHEN v_supersede THEN ':result:' || v_id ELSE '' END, p_now);
  PERFORM boardready_private.outbox_enqueue_for_result(v_run.id, v_attempt.id, v_run.installation_id, v_id, 'pr_comment',
                                    'pr_comment:' || v_id, p_now);
  -- On a watched board's repository both wait (bounded) for the supply check (supply.sql).
  PERFORM boardready_private.supply_check_open(v_id, p_now);
  RETURN QUERY SELECT 'accepted'::text, v_id, v_run.id, v_decision, boardready_private.conclusion_for_decision(v_decision),
                      v_run.check_run_id;
END $$;

-- (Ids, not a release_runs row: a row-typed argument would pin the table
-- against the migration rollbacks.)
CREATE OR REPLACE FUNCTION boardready_private.outbox_enqueue_for_result(
  p_release_run_id bigint, p_attempt_id bigint, p_installation_id bigint, p_run_result_id bigint, p_kind text,
  p_key text, p_now timestamptz)
RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
  v_id bigint;
BEGIN
  v_id := boardready_private.outbox_enqueue(p_release_run_id, p_attempt_id, p_installation_id, p_kind, p_key,
                                    '{}'::jsonb, p_now);
  UPDATE boardready.outbox_items SET run_result_id = p_run_result_id WHERE id = v_id;
  RETURN v_id;
END $$;

-- The exact conclusion used at the first check run publication is kept: a
-- later write (an older replica during a rolling upgrade) cannot change it.
CREATE OR REPLACE FUNCTION boardready_private.run_results_keep_published_conclusion()
RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF OLD.published_conclusion IS NOT NULL THEN
    NEW.published_conclusion := OLD.published_conclusion;
  END IF;
  RETURN NEW;
END $$;

-- The trigger that calls it is migration 0035's.

-- The decision a result's check run completion shows: the release decision
-- when the completion waited for it (a supply check: run_result_completion_await
-- stored it on the item), else the result's own. What reviews.sql takes the
-- check run to show until a decision update, so that a completion that
-- already carried the release decision is not followed by a second one.
CREATE OR REPLACE FUNCTION boardready_private.run_result_completion_decision(p_run_result_id bigint)
RETURNS text LANGUAGE sql STABLE AS $$
  SELECT coalesce((SELECT o.params ->> 'decision' FROM boardready.outbox_items o
                    WHERE o.run_result_id = r.id AND o.kind = 'check_run_complete'
                    ORDER BY o.id DESC LIMIT 1), r.decision)
    FROM boardready.run_results r WHERE r.id = p_run_result_id
$$;

-- The result's completion will show the release decision p_decision
-- (supply_check_findings). Only a completion whose next attempt sends the
-- conclusion takes it: never claimed (an operator's replay counts afresh) and
-- nothing recorded as sent. One that was claimed may have sent the result's
-- own conclusion already, and a retry does not send the conclusion again once
-- its first request landed (app/host/outbox.py).
CREATE OR REPLACE FUNCTION boardready_private.run_result_completion_await(p_run_result_id bigint, p_decision text)
RETURNS void LANGUAGE sql AS $$
  UPDATE boardready.outbox_items o SET params = o.params || jsonb_build_object('decision', p_decision)
   WHERE o.run_result_id = p_run_result_id AND o.kind = 'check_run_complete' AND o.status = 'accepted'
     AND o.attempts = 0 AND o.progress = 0 AND p_decision IS NOT NULL
$$;

-- The release decision changed (release_decision_refresh): a completion that
-- will show it, on the same terms, shows the new one. Once claimed it is
-- fixed, so the decision update after the completion compares with exactly
-- what was sent.
CREATE OR REPLACE FUNCTION boardready_private.run_result_completion_follow(p_release_run_id bigint, p_decision text)
RETURNS void LANGUAGE sql AS $$
  UPDATE boardready.outbox_items o SET params = o.params || jsonb_build_object('decision', p_decision)
   WHERE o.release_run_id = p_release_run_id AND o.kind = 'check_run_complete' AND o.status = 'accepted'
     AND o.attempts = 0 AND o.progress = 0 AND o.params ? 'decision' AND p_decision IS NOT NULL
$$;

-- What the check run and the comment show: the result and its findings in
-- order, with the decision its completion shows (run_result_completion_decision).
-- (source and api_token_id: a token-published result says so on the check
-- run; the older shape is dropped by migration 0031.)
CREATE OR REPLACE FUNCTION boardready.run_result_publication(p_run_result_id bigint)
RETURNS TABLE (readiness text, score integer, decision text, conclusion text, tool_name text, tool_version text,
               kicad_version text, head_sha text, source text, api_token_id text, findings jsonb)
LANGUAGE sql ROWS 1 STABLE SECURITY DEFINER SET search_path = boardready, pg_temp AS $$
  SELECT r.readiness, r.score, shown.decision, boardready_private.conclusion_for_decision(shown.decision), r.tool_name, r.tool_version,
         r.kicad_version, r.head_sha, r.source, r.api_token_id,
         coalesce((SELECT jsonb_agg(jsonb_build_object(
                     'ruleId', f.rule_id, 'severity', f.severity, 'message', f.message, 'title', f.title,
                     'path', f.path, 'startLine', f.start_line, 'endLine', f.end_line,
                     'startColumn', f.start_column, 'endColumn', f.end_column)
                     || CASE WHEN f.relaxed IS NOT NULL THEN jsonb_build_object('relaxed', f.relaxed)
                             ELSE '{}'::jsonb END ORDER BY f.ordinal)
                     FROM run_findings f WHERE f.run_result_id = r.id), '[]'::jsonb)
    FROM run_results r CROSS JOIN LATERAL (SELECT boardready_private.run_result_completion_decision(r.id) AS decision) shown
   WHERE r.id = p_run_result_id
$$;

-- The branch the readiness workflow of an attempt ("<attempt id>-<nonce>") was
-- dispatched on (the repository's default branch), or NULL for an unknown
-- attempt: the workflow result callback accepts an OIDC token only when its
-- job_workflow_ref is readiness-runner.yml at that branch (app/web/runs.py).
CREATE OR REPLACE FUNCTION boardready.release_attempt_dispatch_ref(p_attempt_ref text)
RETURNS text LANGUAGE sql STABLE SECURITY DEFINER SET search_path = boardready, pg_temp AS $$
  SELECT o.params ->> 'dispatchRef'
    FROM release_run_attempts a
    JOIN outbox_items o ON o.release_run_id = a.release_run_id
   WHERE p_attempt_ref ~ '^[0-9]{1,18}-[0-9a-f]{32}$'
     AND a.id = split_part(p_attempt_ref, '-', 1)::bigint AND a.nonce = split_part(p_attempt_ref, '-', 2)
     AND o.params ? 'dispatchRef'
   ORDER BY o.id DESC
   LIMIT 1
$$;

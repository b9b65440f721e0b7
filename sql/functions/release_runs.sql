-- Release runs: open one for a pull request head (superseding the previous
-- run of that pull request) and queue its first outbox work.

CREATE OR REPLACE FUNCTION boardready_private.outbox_enqueue(
  p_release_run_id bigint, p_attempt_id bigint, p_installation_id bigint, p_kind text,
  p_idempotency_key text, p_params jsonb, p_now timestamptz)
RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
  v_id bigint;
BEGIN
  INSERT INTO boardready.outbox_items (release_run_id, attempt_id, installation_id, kind, idempotency_key, params,
                                       status, run_after, created_at, updated_at)
  VALUES (p_release_run_id, p_attempt_id, p_installation_id, p_kind, p_idempotency_key, p_params,
          'accepted', p_now, p_now, p_now)
  ON CONFLICT (idempotency_key) DO NOTHING
  RETURNING id INTO v_id;
  IF v_id IS NULL THEN
    RETURN NULL;
  END IF;
  -- lifecycle_job_run's caller wakes the outbox workers after its commit.
  IF current_setting('boardready.outbox_notify', true) IN ('caller', 'owed') THEN
    PERFORM set_config('boardready.outbox_notify', 'owed', true);
  ELSE
    PERFORM pg_notify('outbox_items', '');
  END IF;
  RETURN v_id;
END $$;

-- Complete a check run closed without a result, with its reason code; the
-- words are app/host/publication.py's (closed_words).
CREATE OR REPLACE FUNCTION boardready_private.release_run_enqueue_check_run_completion_v2(
  p_release_run_id bigint, p_conclusion text, p_reason_code text, p_now timestamptz, p_newer_head_sha text DEFAULT NULL)
RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
  v_run boardready.release_runs%ROWTYPE;
BEGIN
  SELECT * INTO v_run FROM boardready.release_runs WHERE id = p_release_run_id;
  RETURN boardready_private.outbox_enqueue(v_run.id, v_run.current_attempt_id, v_run.installation_id, 'check_run_complete',
                                   'check_run_complete:' || v_run.id,
                                   jsonb_strip_nulls(jsonb_build_object('conclusion', p_conclusion,
                                                                        'reasonCode', p_reason_code,
                                                                        'newerHeadSha', p_newer_head_sha)),
                                   p_now);
END $$;

CREATE OR REPLACE FUNCTION boardready_private.release_run_open(
  p_repository_id bigint, p_installation_id bigint, p_pr_number integer, p_head_sha text, p_dispatch_ref text,
  p_trigger_action text, p_now timestamptz)
RETURNS TABLE (outcome text, release_run_id bigint, attempt_id bigint)
LANGUAGE plpgsql AS $$
DECLARE
  v_run       bigint;
  v_attempt   bigint;
  v_old       record;
BEGIN
  -- Serialize concurrent events of one pull request on its row.
  PERFORM 1 FROM boardready.pull_requests WHERE repository_id = p_repository_id AND number = p_pr_number FOR UPDATE;

  SELECT rr.id, rr.current_attempt_id INTO v_run, v_attempt FROM boardready.release_runs rr
   WHERE rr.repository_id = p_repository_id AND rr.pr_number = p_pr_number AND rr.head_sha = p_head_sha
     AND rr.status <> 'superseded';
  IF FOUND THEN
    RETURN QUERY SELECT 'release_run_exists'::text, v_run, v_attempt;
    RETURN;
  END IF;

  -- The attempt's id is drawn first, so the run is written once, naming it
  -- (that foreign key is checked at commit): setting it afterwards wrote the
  -- new run twice, every index with it.
  v_attempt := nextval('boardready.release_run_attempts_id_seq'::regclass);
  INSERT INTO boardready.release_runs (repository_id, installation_id, pr_number, head_sha, trigger_action, status,
                                       current_attempt_id, started_at, updated_at)
  VALUES (p_repository_id, p_installation_id, p_pr_number, p_head_sha, p_trigger_action, 'queued', v_attempt,
          p_now, p_now)
  RETURNING id INTO v_run;
  INSERT INTO boardready.release_run_attempts (id, release_run_id, attempt_number, nonce, created_at)
  VALUES (v_attempt, v_run, 1, replace(gen_random_uuid()::text, '-', ''), p_now);

  -- The previous runs of this pull request that are still open are superseded:
  -- their attempts are no longer current, so anything late for them is refused.
  FOR v_old IN
    UPDATE boardready.release_runs rr SET status = 'superseded', superseded_by = v_run, completed_at = p_now,
           updated_at = p_now
     WHERE rr.repository_id = p_repository_id AND rr.pr_number = p_pr_number AND rr.id <> v_run
       AND rr.status IN ('queued', 'dispatched')
    RETURNING rr.id, rr.check_run_id
  LOOP
    IF v_old.check_run_id IS NOT NULL THEN
      PERFORM boardready_private.release_run_enqueue_check_run_completion_v2(v_old.id, 'cancelled', 'superseded', p_now,
                                                                     p_head_sha);
    END IF;
  END LOOP;

  PERFORM boardready_private.outbox_enqueue(v_run, v_attempt, p_installation_id, 'check_run_create',
                                    'check_run_create:' || v_run,
                                    jsonb_build_object('dispatchRef', p_dispatch_ref), p_now);
  RETURN QUERY SELECT 'release_run_opened'::text, v_run, v_attempt;
END $$;

-- Operator dead letters: a bounded listing per installation and replay with
-- an Idempotency-Key. Replay changes the item, writes the audit event and
-- binds the key to it in one transaction.

-- One page of an installation's dead letters, newest failure first. Rows come
-- from ops.dead_letters (jobs and outbox items), filtered by
-- the installation before anything else: another tenant's items never appear.
CREATE OR REPLACE FUNCTION boardready.dead_letter_list(
  p_installation_id bigint, p_before timestamptz, p_limit integer)
RETURNS TABLE (item_type text, item_id bigint, repository text, reason_code text, error_class text,
               attempts integer, failed_at timestamptz, replay_safe boolean)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = boardready, pg_temp AS $$
  SELECT d.item_type, d.item_id, d.repository, d.reason_code, d.error_class, d.attempts, d.failed_at, d.replay_safe
    FROM ops.dead_letters d
   WHERE d.installation_id = p_installation_id
     AND d.failed_at < coalesce(p_before, 'infinity'::timestamptz)
   ORDER BY d.failed_at DESC, d.item_type, d.item_id DESC
   LIMIT least(greatest(p_limit, 1), 101)
$$;

-- Replay of one dead-lettered lifecycle job: back to 'accepted' with a fresh
-- attempt budget, due now. Handlers are upserts, so running one again is safe,
-- unless the account has since been canceled (new lifecycle jobs are blocked).
CREATE OR REPLACE FUNCTION boardready.dead_letter_replay_job(
  p_installation_id bigint, p_item_id bigint, p_now timestamptz)
RETURNS TABLE (outcome text, details jsonb)
LANGUAGE plpgsql AS $$
DECLARE
  v_job boardready.lifecycle_jobs%ROWTYPE;
BEGIN
  SELECT * INTO v_job FROM boardready.lifecycle_jobs j
   WHERE j.id = p_item_id AND j.installation_id = p_installation_id AND j.status = 'dead_letter'
   FOR UPDATE;
  IF NOT FOUND THEN
    RETURN QUERY SELECT 'not_found'::text, NULL::jsonb;
    RETURN;
  END IF;
  IF boardready.installation_account_canceled(p_installation_id, NULL) THEN
    RETURN QUERY SELECT 'not_replayable'::text, NULL::jsonb;
    RETURN;
  END IF;
  UPDATE boardready.lifecycle_jobs
     SET status = 'accepted', attempts = 0, run_after = p_now, updated_at = p_now
   WHERE id = v_job.id;
  PERFORM pg_notify('lifecycle_jobs', '');
  -- Stable codes and counts only: never actions or payload.
  RETURN QUERY SELECT 'replayed'::text, jsonb_build_object(
    'previousReasonCode', v_job.reason_code, 'previousErrorClass', v_job.error_class,
    'previousAttempts', v_job.attempts, 'previousFailedAt', v_job.failed_at);
END $$;

-- Outcomes: replayed, already_applied (same key, same request: same audit
-- event), idempotency_key_reused (same key, another request), not_found,
-- not_replayable.
CREATE OR REPLACE FUNCTION boardready.dead_letter_replay(
  p_installation_id  bigint,
  p_item_type        text,
  p_item_id          bigint,
  p_idempotency_key  text,
  p_actor            text,
  p_operation_id     text,
  p_now              timestamptz DEFAULT now())
RETURNS TABLE (outcome text, audit_event_id uuid)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = boardready, pg_temp AS $$
DECLARE
  v_previous replay_requests%ROWTYPE;
  v_outcome  text;
  v_details  jsonb;
  v_audit    uuid;
BEGIN
  IF p_item_type NOT IN ('job', 'outbox') OR p_idempotency_key !~ '^[\x21-\x7e]{1,200}$'
     OR p_actor !~ '^[A-Za-z0-9._:-]{1,200}$' OR p_operation_id IS NULL THEN
    RAISE EXCEPTION 'replay_invalid_request' USING ERRCODE = '22023';
  END IF;

  -- Requests with one key take turns, so a concurrent repeat waits for the
  -- first and then reads its row (the next statement takes a new snapshot);
  -- the primary key on replay_requests stays the final guard.
  PERFORM pg_advisory_xact_lock(hashtextextended('boardready.replay:' || p_idempotency_key, 0));
  SELECT * INTO v_previous FROM replay_requests r WHERE r.idempotency_key = p_idempotency_key;
  IF FOUND THEN
    IF (v_previous.installation_id, v_previous.item_type, v_previous.item_id)
       = (p_installation_id, p_item_type, p_item_id) THEN
      RETURN QUERY SELECT 'already_applied'::text, v_previous.audit_event_id;
    ELSE
      RETURN QUERY SELECT 'idempotency_key_reused'::text, NULL::uuid;
    END IF;
    RETURN;
  END IF;

  -- One branch per item type; each locks its item within the installation and
  -- returns replayed, not_found or not_replayable.
  CASE p_item_type
    WHEN 'job' THEN
      SELECT r.outcome, r.details INTO v_outcome, v_details
        FROM dead_letter_replay_job(p_installation_id, p_item_id, p_now) r;
    WHEN 'outbox' THEN
      SELECT r.outcome, r.details INTO v_outcome, v_details
        FROM dead_letter_replay_outbox(p_installation_id, p_item_id, p_now) r;
  END CASE;

  IF v_outcome <> 'replayed' THEN
    -- Nothing changed, so nothing is recorded: the key stays free.
    RETURN QUERY SELECT v_outcome, NULL::uuid;
    RETURN;
  END IF;

  INSERT INTO audit_events (event_type, installation_id, actor, operation_id, item_type, item_id, occurred_at, details)
  VALUES ('control_plane.dead_letter_replayed', p_installation_id, p_actor, p_operation_id, p_item_type,
          p_item_id::text, p_now, coalesce(v_details, '{}'::jsonb))
  RETURNING id INTO v_audit;
  INSERT INTO replay_requests (idempotency_key, installation_id, item_type, item_id, audit_event_id, created_at)
  VALUES (p_idempotency_key, p_installation_id, p_item_type, p_item_id, v_audit, p_now);
  RETURN QUERY SELECT 'replayed'::text, v_audit;
END $$;

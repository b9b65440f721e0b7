-- Operator dead letters: replay with an Idempotency-Key. Replay changes the
-- item, writes the audit event and binds the key to it in one transaction.

-- The listing is a named query now (sql/queries/dead_letters_page.sql).

-- Replay of one dead-lettered item (a lifecycle job, an outbox call or supply
-- work): back to 'accepted' with a fresh attempt budget, due now, and a NOTIFY
-- on its workers' channel. Refused when ops.dead_letters says it is not safe:
-- a job of a canceled account (its new lifecycle jobs are blocked), an
-- uncertain dispatch with no persisted workflow run id (it may have started a
-- workflow already). Everything else is safe to run again: job handlers are
-- upserts, and an outbox item's idempotency key and external_id keep a repeat
-- from creating a second check run or comment. Returns the audit event's
-- details: stable codes and counts only, never actions or payload.
CREATE OR REPLACE FUNCTION boardready_private.queue_replay_details(
  p_kind text, p_reason_code text, p_error_class text, p_attempts integer, p_failed_at timestamptz)
RETURNS jsonb LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE WHEN p_kind IS NULL THEN '{}'::jsonb ELSE jsonb_build_object('kind', p_kind) END
         || jsonb_build_object('previousReasonCode', p_reason_code, 'previousErrorClass', p_error_class,
                               'previousAttempts', p_attempts, 'previousFailedAt', p_failed_at)
$$;

CREATE OR REPLACE FUNCTION boardready_private.work_replay(
  p_item_type text, p_installation_id bigint, p_item_id bigint, p_now timestamptz)
RETURNS TABLE (outcome text, details jsonb)
LANGUAGE plpgsql AS $$
DECLARE
  v_item boardready.work_items%ROWTYPE;
BEGIN
  SELECT * INTO v_item FROM boardready.work_items w
   WHERE w.id = p_item_id AND w.installation_id = p_installation_id AND w.status = 'dead_letter'
     AND w.kind = ANY (boardready_private.work_queue_kinds(CASE p_item_type WHEN 'outbox' THEN 'outbox' ELSE 'supply' END))
     FOR UPDATE;
  IF NOT FOUND THEN
    RETURN QUERY SELECT 'not_found'::text, NULL::jsonb;
    RETURN;
  END IF;
  IF NOT (SELECT d.replay_safe FROM ops.dead_letters d WHERE d.item_type = p_item_type AND d.item_id = p_item_id) THEN
    RETURN QUERY SELECT 'not_replayable'::text, NULL::jsonb;
    RETURN;
  END IF;
  UPDATE boardready.work_items SET status = 'accepted', attempts = 0, run_after = p_now, updated_at = p_now
   WHERE id = p_item_id;
  PERFORM pg_notify(boardready_private.work_channel(v_item.kind), '');
  RETURN QUERY SELECT 'replayed'::text, boardready_private.queue_replay_details(v_item.kind, v_item.reason_code,
                                                                       v_item.error_class, v_item.attempts,
                                                                       v_item.failed_at);
END $$;

CREATE OR REPLACE FUNCTION boardready_private.job_replay(p_installation_id bigint, p_job_id bigint, p_now timestamptz)
RETURNS TABLE (outcome text, details jsonb)
LANGUAGE plpgsql AS $$
DECLARE
  v_job boardready.lifecycle_jobs%ROWTYPE;
BEGIN
  SELECT * INTO v_job FROM boardready.lifecycle_jobs j
   WHERE j.id = p_job_id AND j.installation_id = p_installation_id AND j.status = 'dead_letter'
     FOR UPDATE;
  IF NOT FOUND THEN
    RETURN QUERY SELECT 'not_found'::text, NULL::jsonb;
    RETURN;
  END IF;
  IF NOT (SELECT d.replay_safe FROM ops.dead_letters d WHERE d.item_type = 'job' AND d.item_id = p_job_id) THEN
    RETURN QUERY SELECT 'not_replayable'::text, NULL::jsonb;
    RETURN;
  END IF;
  UPDATE boardready.lifecycle_jobs SET status = 'accepted', attempts = 0, run_after = p_now, updated_at = p_now
   WHERE id = p_job_id;
  PERFORM pg_notify('lifecycle_jobs', '');
  RETURN QUERY SELECT 'replayed'::text, boardready_private.queue_replay_details(NULL, v_job.reason_code, v_job.error_class,
                                                                       v_job.attempts, v_job.failed_at);
END $$;

-- The previous release's name for the two above (internal to its
-- dead_letter_replay; kept one release).
CREATE OR REPLACE FUNCTION boardready_private.queue_replay(
  p_table text, p_item_type text, p_installation_id bigint, p_item_id bigint, p_now timestamptz)
RETURNS TABLE (outcome text, details jsonb)
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM boardready_private.queue_check_table(p_table);
  IF p_table = 'lifecycle_jobs' THEN
    RETURN QUERY SELECT * FROM boardready_private.job_replay(p_installation_id, p_item_id, p_now);
  ELSE
    RETURN QUERY SELECT * FROM boardready_private.work_replay(p_item_type, p_installation_id, p_item_id, p_now);
  END IF;
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
LANGUAGE plpgsql ROWS 1 SECURITY DEFINER SET search_path = boardready, pg_temp AS $$
DECLARE
  v_previous replay_requests%ROWTYPE;
  v_outcome  text;
  v_details  jsonb;
  v_audit    uuid;
BEGIN
  IF p_item_type NOT IN ('job', 'outbox', 'supply') OR p_idempotency_key !~ '^[\x21-\x7e]{1,200}$'
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

  -- Locks the item within the installation; replayed, not_found or not_replayable.
  IF p_item_type = 'job' THEN
    SELECT r.outcome, r.details INTO v_outcome, v_details FROM boardready_private.job_replay(p_installation_id, p_item_id, p_now) r;
  ELSE
    SELECT r.outcome, r.details INTO v_outcome, v_details
      FROM boardready_private.work_replay(p_item_type, p_installation_id, p_item_id, p_now) r;
  END IF;

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

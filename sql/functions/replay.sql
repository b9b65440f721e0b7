-- Operator dead letters: replay with an Idempotency-Key. Replay changes the
-- item, writes the audit event and binds the key to it in one transaction.

-- The listing is a named query now (sql/queries/dead_letters_page.sql).

-- Replaced by queue_replay below; dropped so that a database migrated before
-- keeps no second way to replay.

-- Replay of one dead-lettered queue item (a lifecycle job, an outbox item or supply work):
-- back to 'accepted' with a fresh attempt budget, due now, and a NOTIFY on
-- the queue's channel (named after its table). Refused when ops.dead_letters
-- says it is not safe: a job of a canceled account (its new lifecycle jobs are
-- blocked), an uncertain dispatch with no persisted workflow run id (it may
-- have started a workflow already). Everything else is safe to run again:
-- job handlers are upserts, and an outbox item's idempotency key and
-- external_id keep a repeat from creating a second check run or comment.
CREATE OR REPLACE FUNCTION boardready.queue_replay(
  p_table text, p_item_type text, p_installation_id bigint, p_item_id bigint, p_now timestamptz)
RETURNS TABLE (outcome text, details jsonb)
LANGUAGE plpgsql AS $$
DECLARE
  v_item jsonb;
BEGIN
  PERFORM boardready.queue_check_table(p_table);
  EXECUTE format('SELECT to_jsonb(q) FROM boardready.%I q WHERE q.id = $1 AND q.installation_id = $2 '
                 'AND q.status = ''dead_letter'' FOR UPDATE', p_table)
    INTO v_item USING p_item_id, p_installation_id;
  IF v_item IS NULL THEN
    RETURN QUERY SELECT 'not_found'::text, NULL::jsonb;
    RETURN;
  END IF;
  IF NOT (SELECT d.replay_safe FROM ops.dead_letters d WHERE d.item_type = p_item_type AND d.item_id = p_item_id) THEN
    RETURN QUERY SELECT 'not_replayable'::text, NULL::jsonb;
    RETURN;
  END IF;
  EXECUTE format('UPDATE boardready.%I SET status = ''accepted'', attempts = 0, run_after = $2, updated_at = $2 '
                 'WHERE id = $1', p_table)
    USING p_item_id, p_now;
  PERFORM pg_notify(p_table, '');
  -- Stable codes and counts only: never actions or payload.
  RETURN QUERY SELECT 'replayed'::text,
    CASE WHEN p_item_type IN ('outbox', 'supply') THEN jsonb_build_object('kind', v_item->'kind') ELSE '{}'::jsonb END
    || jsonb_build_object('previousReasonCode', v_item->'reason_code', 'previousErrorClass', v_item->'error_class',
                          'previousAttempts', v_item->'attempts', 'previousFailedAt', v_item->'failed_at');
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
  SELECT r.outcome, r.details INTO v_outcome, v_details
    FROM queue_replay(CASE p_item_type WHEN 'job' THEN 'lifecycle_jobs' WHEN 'outbox' THEN 'outbox_items'
                                       ELSE 'work_items' END, p_item_type,
                      p_installation_id, p_item_id, p_now) r;

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

-- Webhook intake: store a verified delivery and, for lifecycle events, its job,
-- in one transaction. Idempotent on <provider>:<delivery_id>.

-- p_acceptance_ms (0010): how long the request took to get here, kept for
-- the SLO's acceptance p95. The signature without it is dropped, so that a
-- call by name resolves to one function.
DROP FUNCTION IF EXISTS boardready.intake_accept_delivery(text, text, text, text, bigint, jsonb, text, integer,
                                                          timestamptz);
CREATE OR REPLACE FUNCTION boardready.intake_accept_delivery(
  p_provider        text,
  p_delivery_id     text,
  p_event           text,
  p_action          text,
  p_installation_id bigint,
  p_actions         jsonb,
  p_payload_sha256  text,
  p_payload_bytes   integer,
  p_acceptance_ms   integer DEFAULT NULL,
  p_now             timestamptz DEFAULT now())
RETURNS TABLE (outcome text, inbox_id bigint, job_id bigint)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = boardready, pg_temp AS $$
DECLARE
  v_key        text := p_provider || ':' || p_delivery_id;
  -- ping and events the service does not act on are kept as processed evidence,
  -- and so are lifecycle events of an account whose marketplace subscription is
  -- canceled: new lifecycle jobs are blocked for it (marketplace.sql).
  v_creates_job boolean := p_event IN ('installation', 'installation_repositories', 'pull_request')
    AND NOT installation_account_canceled(p_installation_id, (p_actions #>> '{installation,account,id}')::bigint);
  v_inbox      bigint;
  v_job        bigint;
BEGIN
  -- Lengths apart from the patterns: PostgreSQL's regex engine unrolls a
  -- bounded repeat such as {1,200}, and the three checks written that way
  -- were a fifth of this function's CPU time.
  IF NOT (length(p_provider) <= 32 AND p_provider ~ '^[a-z][a-z0-9_-]*$'
          AND length(p_delivery_id) <= 200 AND p_delivery_id ~ '^[A-Za-z0-9._:-]+$'
          AND length(p_event) <= 64 AND p_event ~ '^[a-z_]+$') THEN
    RAISE EXCEPTION 'intake_invalid_identity' USING ERRCODE = '22023';
  END IF;

  INSERT INTO webhook_inbox AS i (provider, delivery_id, idempotency_key, event, action, installation_id,
                                  actions, payload_sha256, payload_bytes, state, received_at, updated_at,
                                  acceptance_ms)
  VALUES (p_provider, p_delivery_id, v_key, p_event, p_action, p_installation_id, p_actions,
          p_payload_sha256, p_payload_bytes,
          CASE WHEN v_creates_job THEN 'accepted' ELSE 'processed' END, p_now, p_now,
          least(greatest(p_acceptance_ms, 0), 3600000))
  ON CONFLICT (idempotency_key) DO NOTHING
  RETURNING i.id INTO v_inbox;

  IF v_inbox IS NULL THEN
    -- A concurrent or earlier delivery with this id won; report what it stored.
    SELECT i.id, j.id INTO v_inbox, v_job
      FROM webhook_inbox i LEFT JOIN lifecycle_jobs j ON j.inbox_id = i.id
     WHERE i.idempotency_key = v_key;
    RETURN QUERY SELECT 'duplicate'::text, v_inbox, v_job;
    RETURN;
  END IF;

  IF v_creates_job THEN
    INSERT INTO lifecycle_jobs (inbox_id, idempotency_key, installation_id, kind, action,
                                status, run_after, created_at, updated_at)
    VALUES (v_inbox, v_key, p_installation_id, p_event, p_action, 'accepted', p_now, p_now, p_now)
    RETURNING id INTO v_job;
    -- No NOTIFY here: it would serialize concurrent intake commits on one
    -- lock. The API wakes the workers after the commit (app/wakeup.py).
  END IF;

  RETURN QUERY SELECT 'accepted'::text, v_inbox, v_job;
END $$;

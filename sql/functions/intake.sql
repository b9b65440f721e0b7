-- Webhook intake: store a verified delivery, idempotent on
-- <provider>:<delivery_id>. One row: a lifecycle event's job is made from it
-- by the workers (lifecycle_jobs_from_inbox in jobs.sql, migration 0017).

-- p_acceptance_ms (0010): how long the request took to get here, kept for
-- the SLO's acceptance p95. The signature without it is dropped, so that a
-- call by name resolves to one function; so is the one that returned the
-- job id (before 0017), since a function's result type cannot be replaced.
DROP FUNCTION IF EXISTS boardready.intake_accept_delivery(text, text, text, text, bigint, jsonb, text, integer,
                                                          timestamptz);
DO $$
BEGIN
  IF EXISTS (SELECT 1 FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
              WHERE n.nspname = 'boardready' AND p.proname = 'intake_accept_delivery'
                AND 'job_id' = ANY (p.proargnames)) THEN
    DROP FUNCTION boardready.intake_accept_delivery(text, text, text, text, bigint, jsonb, text, integer, integer,
                                                    timestamptz);
  END IF;
END $$;

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
RETURNS TABLE (outcome text, inbox_id bigint, awaits_job boolean)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = boardready, pg_temp AS $$
DECLARE
  v_key        text := p_provider || ':' || p_delivery_id;
  -- Lifecycle events await their job; ping and events the service does not
  -- act on are kept as processed evidence.
  v_awaits_job boolean := p_event IN ('installation', 'installation_repositories', 'pull_request');
  v_inbox      bigint;
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
                                  actions, payload_sha256, payload_bytes, state, awaiting_job, received_at,
                                  updated_at, acceptance_ms)
  VALUES (p_provider, p_delivery_id, v_key, p_event, p_action, p_installation_id, p_actions,
          p_payload_sha256, p_payload_bytes, CASE WHEN v_awaits_job THEN 'accepted' ELSE 'processed' END,
          v_awaits_job, p_now, p_now, least(greatest(p_acceptance_ms, 0), 3600000))
  ON CONFLICT (idempotency_key) DO NOTHING
  RETURNING i.id INTO v_inbox;

  IF v_inbox IS NULL THEN
    -- A concurrent or earlier delivery with this id won; report what it stored.
    SELECT i.id INTO v_inbox FROM webhook_inbox i WHERE i.idempotency_key = v_key;
    RETURN QUERY SELECT 'duplicate'::text, v_inbox, false;
    RETURN;
  END IF;
  -- No NOTIFY here: it would serialize concurrent intake commits on one
  -- lock. The API wakes the workers after the commit (app/wakeup.py).
  RETURN QUERY SELECT 'accepted'::text, v_inbox, v_awaits_job;
END $$;

-- Webhook intake: store verified deliveries, idempotent on
-- <provider>:<delivery_id>. One row each: a lifecycle event's job is made from
-- it by the workers (lifecycle_jobs_from_inbox in jobs.sql, migration 0017).

-- Older signatures of intake_accept_delivery are dropped by migration 0031.

-- A batch of deliveries in one transaction: the API stores the deliveries
-- that arrive together with one call and one commit (app/web/intake_batch.py),
-- and answers each only after that commit. Row n of the result is input n:
-- `accepted` for a new delivery, `duplicate` for a delivery id stored before
-- or earlier in the same batch.
CREATE OR REPLACE FUNCTION boardready.intake_accept_deliveries(
  p_provider          text,
  p_delivery_ids      text[],
  p_events            text[],
  p_actions           text[],        -- the payloads' `action`, NULL where none
  p_installation_ids  bigint[],
  p_normalized        jsonb[],       -- each delivery's normalized actions
  p_payload_sha256s   text[],
  p_payload_bytes     integer[],
  p_acceptance_ms     integer[],
  p_now               timestamptz DEFAULT now())
RETURNS TABLE (delivery_id text, outcome text, inbox_id bigint, awaits_job boolean)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = boardready, pg_temp AS $$
DECLARE
  v_inserted bigint[];
BEGIN
  -- Lengths apart from the patterns: PostgreSQL's regex engine unrolls a
  -- bounded repeat such as {1,200}, and the three checks written that way
  -- were a fifth of the single intake's CPU time.
  IF NOT (length(p_provider) <= 32 AND p_provider ~ '^[a-z][a-z0-9_-]*$')
     OR EXISTS (SELECT FROM unnest(p_delivery_ids, p_events) AS d(id, event)
                 WHERE NOT (length(d.id) <= 200 AND d.id ~ '^[A-Za-z0-9._:-]+$'
                            AND length(d.event) <= 64 AND d.event ~ '^[a-z_]+$')) THEN
    RAISE EXCEPTION 'intake_invalid_identity' USING ERRCODE = '22023';
  END IF;

  -- Lifecycle events await their job, which a worker makes from the row
  -- (jobs.sql); ping and events the service does not act on are kept as
  -- processed evidence. No NOTIFY here: it would serialize concurrent intake
  -- commits on one lock. The API wakes the workers after the commit
  -- (app/wakeup.py).
  WITH inserted AS (
    INSERT INTO webhook_inbox AS i (provider, delivery_id, idempotency_key, event, action, installation_id,
                                    actions, payload_sha256, payload_bytes, state, awaiting_job, received_at,
                                    updated_at, acceptance_ms)
    SELECT p_provider, d.id, p_provider || ':' || d.id, d.event, d.action, d.installation_id, d.normalized,
           d.sha256, d.bytes, CASE WHEN d.awaits_job THEN 'accepted' ELSE 'processed' END, d.awaits_job,
           p_now, p_now, least(greatest(d.acceptance_ms, 0), 3600000)
      FROM (SELECT u.*, u.event IN ('installation', 'installation_repositories', 'pull_request') AS awaits_job
              FROM unnest(p_delivery_ids, p_events, p_actions, p_installation_ids, p_normalized, p_payload_sha256s,
                          p_payload_bytes, p_acceptance_ms)
                   WITH ORDINALITY AS u(id, event, action, installation_id, normalized, sha256, bytes,
                                        acceptance_ms, n)) d
     ORDER BY d.n
    ON CONFLICT (idempotency_key) DO NOTHING
    RETURNING i.id)
  SELECT array_agg(id) INTO v_inserted FROM inserted;

  -- A statement of its own, so that its snapshot sees a row a concurrent
  -- delivery of the same id committed meanwhile (this one's is `duplicate`).
  RETURN QUERY
  SELECT d.id, CASE WHEN d.first AND i.id = ANY (v_inserted) THEN 'accepted' ELSE 'duplicate' END, i.id,
         d.first AND i.id = ANY (v_inserted) AND i.awaiting_job
    FROM (SELECT u.id, u.n, u.n = min(u.n) OVER (PARTITION BY u.id) AS first
            FROM unnest(p_delivery_ids) WITH ORDINALITY AS u(id, n)) d
    JOIN webhook_inbox i ON i.idempotency_key = p_provider || ':' || d.id
   ORDER BY d.n;
END $$;

-- One delivery: a batch of one (operator tools and tests store deliveries
-- one at a time).
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
LANGUAGE sql ROWS 1 SECURITY DEFINER SET search_path = boardready, pg_temp AS $$
  SELECT b.outcome, b.inbox_id, b.awaits_job
    FROM intake_accept_deliveries(p_provider, ARRAY[p_delivery_id], ARRAY[p_event], ARRAY[p_action],
                                  ARRAY[p_installation_id], ARRAY[p_actions], ARRAY[p_payload_sha256],
                                  ARRAY[p_payload_bytes], ARRAY[p_acceptance_ms], p_now) b
$$;

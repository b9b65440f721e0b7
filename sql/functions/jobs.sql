-- Lifecycle job queue: claim with a lease, fail with backoff or dead-letter,
-- release on shutdown (the rules live in queue.sql.j2). Completion is the handler's own function
-- (lifecycle_job_process), which applies the effect and completes in one
-- transaction. The inbox state follows the job through a trigger, so every
-- path (claim, fail, replay, reconciliation) keeps the projection.

CREATE OR REPLACE FUNCTION boardready_private.lifecycle_inbox_state_for(p_job_status text)
RETURNS text LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE p_job_status
    WHEN 'accepted' THEN 'accepted'
    WHEN 'leased' THEN 'processing'
    WHEN 'completed' THEN 'processed'
    WHEN 'dead_letter' THEN 'dead_letter'
  END
$$;

CREATE OR REPLACE FUNCTION boardready_private.lifecycle_job_project_inbox()
RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE boardready.webhook_inbox
     SET state = boardready_private.lifecycle_inbox_state_for(NEW.status), updated_at = NEW.updated_at
   WHERE id = NEW.inbox_id AND state IS DISTINCT FROM boardready_private.lifecycle_inbox_state_for(NEW.status);
  RETURN NULL;
END $$;

-- The trigger that calls it is migration 0021's.

-- Stable codes only: a raw database error or payload never reaches a dead letter.
CREATE OR REPLACE FUNCTION boardready_private.job_check_failure_codes(p_reason_code text, p_error_class text)
RETURNS void LANGUAGE sql IMMUTABLE AS $$
  SELECT boardready_private.refuse_if(p_reason_code !~ '^[a-z][a-z0-9_]{0,63}$'
                              OR p_error_class !~ '^[A-Za-z_][A-Za-z0-9_.]{0,127}$', 'job_invalid_failure_code')
$$;

-- Jobs for the given inbox rows, each keyed by its delivery's idempotency key
-- (its actions stay on the inbox row). A row that has a job already gets no
-- second one. Returns the jobs made.
CREATE OR REPLACE FUNCTION boardready_private.lifecycle_jobs_insert(p_inbox_ids bigint[], p_now timestamptz)
RETURNS TABLE (inbox_id bigint, job_id bigint) LANGUAGE sql AS $$
  INSERT INTO boardready.lifecycle_jobs AS j (inbox_id, idempotency_key, installation_id, kind, action, status,
                                              run_after, created_at, updated_at)
  SELECT i.id, i.idempotency_key, i.installation_id, i.event, i.action, 'accepted', p_now, p_now, p_now
    FROM boardready.webhook_inbox i
   WHERE i.id = ANY (p_inbox_ids)
  ON CONFLICT (inbox_id) DO NOTHING
  RETURNING j.inbox_id, j.id
$$;

-- Turn up to p_limit inbox rows awaiting their job (the intake stores the
-- delivery alone) into jobs, oldest first. A row whose account is canceled
-- gets none and is kept as processed evidence: new lifecycle jobs are
-- blocked for it (marketplace.sql); the account is looked up now, so a
-- cancellation that arrived after the delivery counts. Rows another worker
-- holds are skipped: it is making their jobs.
CREATE OR REPLACE FUNCTION boardready_private.lifecycle_jobs_from_inbox(p_limit integer, p_now timestamptz)
RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
  v_inbox_ids bigint[];
BEGIN
  -- Most claims find nothing awaiting (the intake's bursts are made into
  -- jobs by one claim): a look at the partial index is all they pay. The
  -- order makes it the index: right after a burst the statistics still count
  -- its rows as awaiting, and the planner read the whole inbox instead (and
  -- an EXISTS would drop the order).
  PERFORM FROM boardready.webhook_inbox i WHERE i.awaiting_job ORDER BY i.id LIMIT 1;
  IF NOT FOUND THEN
    RETURN 0;
  END IF;
  WITH awaiting AS (
    SELECT i.id, boardready_private.installation_account_canceled(
                   i.installation_id, (i.actions #>> '{installation,account,id}')::bigint) AS blocked
      FROM boardready.webhook_inbox i
     WHERE i.awaiting_job
     ORDER BY i.id
     LIMIT p_limit
       FOR UPDATE SKIP LOCKED
  ), settled AS (
    UPDATE boardready.webhook_inbox i
       SET awaiting_job = false, updated_at = p_now,
           state = CASE WHEN a.blocked THEN 'processed' ELSE i.state END
      FROM awaiting a
     WHERE i.id = a.id
    RETURNING i.id, a.blocked
  )
  SELECT coalesce(array_agg(id) FILTER (WHERE NOT blocked), '{}') INTO v_inbox_ids FROM settled;
  IF cardinality(v_inbox_ids) = 0 THEN
    RETURN 0;  -- rows another worker holds, or only blocked ones
  END IF;
  RETURN (SELECT count(*) FROM boardready_private.lifecycle_jobs_insert(v_inbox_ids, p_now));
END $$;

-- Claim due jobs, first making the jobs of up to 500 deliveries that await
-- one (more when the claim may take more): a burst becomes jobs at once, so
-- a backlog waits as jobs, counted and aged as it always was. Its commit
-- does not wait for the WAL flush, for the reasons lifecycle_job_run gives
-- (lifecycle.sql): lost in a crash, its deliveries await their jobs again.
CREATE OR REPLACE FUNCTION boardready.job_claim(
  p_worker          text,
  p_limit           integer,
  p_lease_seconds   integer,
  p_max_attempts    integer,
  p_now             timestamptz DEFAULT now())
RETURNS TABLE (job_id bigint, lease_token uuid, kind text, action text, installation_id bigint,
               actions jsonb, attempts integer)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = boardready, pg_temp AS $$
DECLARE
  v_claimed queue_claimed[];
BEGIN
  PERFORM set_config('synchronous_commit', 'off', true);
  PERFORM boardready_private.lifecycle_jobs_from_inbox(greatest(p_limit, 500), p_now);
  v_claimed := boardready_private.job_lease_due(p_worker, p_limit, p_lease_seconds, p_max_attempts, p_now);
  -- A statement of its own, so its snapshot sees every row the claim took.
  RETURN QUERY
  SELECT j.id, c.lease_token, j.kind, j.action, j.installation_id, i.actions, c.attempts
    FROM unnest(v_claimed) c
    JOIN lifecycle_jobs j ON j.id = c.id
    JOIN webhook_inbox i ON i.id = j.inbox_id
   ORDER BY j.id;
END $$;

-- A job's failure and its release on shutdown are queue.sql.j2's job_fail and
-- job_release.

-- Lifecycle job queue: claim with a lease, fail with backoff or dead-letter,
-- release on shutdown (the rules live in queue.sql). Completion is the handler's own function
-- (lifecycle_job_process), which applies the effect and completes in one
-- transaction. The inbox state follows the job through a trigger, so every
-- path (claim, fail, replay, reconciliation) keeps the projection.

CREATE OR REPLACE FUNCTION boardready.lifecycle_inbox_state_for(p_job_status text)
RETURNS text LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE p_job_status
    WHEN 'accepted' THEN 'accepted'
    WHEN 'leased' THEN 'processing'
    WHEN 'completed' THEN 'processed'
    WHEN 'dead_letter' THEN 'dead_letter'
  END
$$;

CREATE OR REPLACE FUNCTION boardready.lifecycle_job_project_inbox()
RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE boardready.webhook_inbox
     SET state = boardready.lifecycle_inbox_state_for(NEW.status), updated_at = NEW.updated_at
   WHERE id = NEW.inbox_id AND state IS DISTINCT FROM boardready.lifecycle_inbox_state_for(NEW.status);
  RETURN NULL;
END $$;

DROP TRIGGER IF EXISTS lifecycle_job_project_inbox ON boardready.lifecycle_jobs;
CREATE TRIGGER lifecycle_job_project_inbox
  AFTER UPDATE OF status ON boardready.lifecycle_jobs
  FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status)
  EXECUTE FUNCTION boardready.lifecycle_job_project_inbox();

CREATE OR REPLACE FUNCTION boardready.job_check_failure_codes(p_reason_code text, p_error_class text)
RETURNS void LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
  -- Stable codes only: a raw database error or payload never reaches a dead letter.
  IF p_reason_code !~ '^[a-z][a-z0-9_]{0,63}$' OR p_error_class !~ '^[A-Za-z_][A-Za-z0-9_.]{0,127}$' THEN
    RAISE EXCEPTION 'job_invalid_failure_code' USING ERRCODE = '22023';
  END IF;
END $$;

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
  v_claimed queue_claimed[] := queue_claim_all('lifecycle_jobs', p_worker, p_limit, p_lease_seconds,
                                               p_max_attempts, p_now);
BEGIN
  -- A statement of its own, so its snapshot sees every row the claim took.
  RETURN QUERY
  SELECT j.id, c.lease_token, j.kind, j.action, j.installation_id, i.actions, c.attempts
    FROM unnest(v_claimed) c
    JOIN lifecycle_jobs j ON j.id = c.id
    JOIN webhook_inbox i ON i.id = j.inbox_id
   ORDER BY j.id;
END $$;

CREATE OR REPLACE FUNCTION boardready.job_fail(
  p_job_id        bigint,
  p_lease_token   uuid,
  p_reason_code   text,
  p_error_class   text,
  p_max_attempts  integer,
  p_now           timestamptz DEFAULT now())
RETURNS TABLE (outcome text, run_after timestamptz)
LANGUAGE sql SECURITY DEFINER SET search_path = boardready, pg_temp AS $$
  SELECT * FROM queue_fail('lifecycle_jobs', p_job_id, p_lease_token, p_reason_code, p_error_class,
                           p_max_attempts, p_now)
$$;

-- Give a claimed job back untouched (a worker shutting down): not an attempt.
CREATE OR REPLACE FUNCTION boardready.job_release(
  p_job_id bigint, p_lease_token uuid, p_now timestamptz DEFAULT now())
RETURNS TABLE (outcome text)
LANGUAGE sql SECURITY DEFINER SET search_path = boardready, pg_temp AS $$
  SELECT * FROM queue_release('lifecycle_jobs', p_job_id, p_lease_token, p_now)
$$;

-- Lifecycle job queue: claim with a lease, fail with backoff or dead-letter,
-- release on shutdown. Completion is the handler's own function
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
BEGIN
  -- A worker that died holding its last attempt does not get another run.
  UPDATE lifecycle_jobs j
     SET status = 'dead_letter', reason_code = 'lease_expired', error_class = 'LeaseExpired',
         failed_at = p_now, lease_token = NULL, leased_until = NULL, leased_by = NULL, updated_at = p_now
   WHERE j.id IN (SELECT x.id FROM lifecycle_jobs x
                   WHERE x.status = 'leased' AND x.leased_until < p_now AND x.attempts >= p_max_attempts
                   FOR UPDATE SKIP LOCKED);

  RETURN QUERY
  WITH due AS (
    SELECT x.id FROM lifecycle_jobs x
     WHERE (x.status = 'accepted' AND x.run_after <= p_now)
        OR (x.status = 'leased' AND x.leased_until < p_now)
     ORDER BY x.id
     FOR UPDATE SKIP LOCKED
     LIMIT p_limit)
  UPDATE lifecycle_jobs j
     SET status = 'leased', attempts = j.attempts + 1, lease_token = gen_random_uuid(),
         leased_until = p_now + make_interval(secs => p_lease_seconds), leased_by = p_worker, updated_at = p_now
    FROM due
   WHERE j.id = due.id
  RETURNING j.id, j.lease_token, j.kind, j.action, j.installation_id, j.actions, j.attempts;
END $$;

CREATE OR REPLACE FUNCTION boardready.job_fail(
  p_job_id        bigint,
  p_lease_token   uuid,
  p_reason_code   text,
  p_error_class   text,
  p_max_attempts  integer,
  p_now           timestamptz DEFAULT now())
RETURNS TABLE (outcome text, run_after timestamptz)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = boardready, pg_temp AS $$
DECLARE
  v_attempts integer;
  v_delay    double precision;
BEGIN
  PERFORM job_check_failure_codes(p_reason_code, p_error_class);
  SELECT j.attempts INTO v_attempts FROM lifecycle_jobs j
   WHERE j.id = p_job_id AND j.status = 'leased' AND j.lease_token = p_lease_token
   FOR UPDATE;
  IF NOT FOUND THEN
    RETURN QUERY SELECT 'lease_lost'::text, NULL::timestamptz;
    RETURN;
  END IF;

  IF v_attempts >= p_max_attempts THEN
    UPDATE lifecycle_jobs SET status = 'dead_letter', reason_code = p_reason_code, error_class = p_error_class,
           failed_at = p_now, lease_token = NULL, leased_until = NULL, leased_by = NULL, updated_at = p_now
     WHERE id = p_job_id;
    RETURN QUERY SELECT 'dead_letter'::text, NULL::timestamptz;
    RETURN;
  END IF;

  -- Exponential backoff, 1 s doubling per attempt, capped at 5 minutes, with
  -- +-25 % jitter so that a burst of failures does not retry in lockstep.
  v_delay := least(300, power(2, v_attempts - 1)) * (0.75 + random() * 0.5);
  UPDATE lifecycle_jobs SET status = 'accepted', reason_code = p_reason_code, error_class = p_error_class,
         failed_at = p_now, run_after = p_now + make_interval(secs => v_delay),
         lease_token = NULL, leased_until = NULL, leased_by = NULL, updated_at = p_now
   WHERE id = p_job_id;
  RETURN QUERY SELECT 'retry_scheduled'::text, p_now + make_interval(secs => v_delay);
END $$;

-- Give a claimed job back untouched (a worker shutting down): not an attempt.
CREATE OR REPLACE FUNCTION boardready.job_release(
  p_job_id bigint, p_lease_token uuid, p_now timestamptz DEFAULT now())
RETURNS TABLE (outcome text)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = boardready, pg_temp AS $$
BEGIN
  UPDATE lifecycle_jobs j
     SET status = 'accepted', attempts = greatest(j.attempts - 1, 0), run_after = p_now,
         lease_token = NULL, leased_until = NULL, leased_by = NULL, updated_at = p_now
   WHERE j.id = p_job_id AND j.status = 'leased' AND j.lease_token = p_lease_token;
  IF FOUND THEN
    PERFORM pg_notify('lifecycle_jobs', '');
    RETURN QUERY SELECT 'released'::text;
  ELSE
    RETURN QUERY SELECT 'lease_lost'::text;
  END IF;
END $$;

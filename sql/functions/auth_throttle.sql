-- Failed-authentication limiter, shared by every replica: per limiter
-- ('bearer' or 'operator', separate counters) and client, failures are counted
-- in fixed one-minute windows. A client whose failures in the current window
-- reached the limit is refused before its credentials are even looked at,
-- until the window ends. Successful authentications are never counted.

CREATE OR REPLACE FUNCTION boardready_private.auth_throttle_window(p_now timestamptz)
RETURNS timestamptz LANGUAGE sql IMMUTABLE AS $$
  SELECT date_bin(interval '1 minute', p_now, timestamptz '2000-01-01 00:00:00+00')
$$;

-- Is the client over the limit? retry_after_seconds counts to the end of the window.
CREATE OR REPLACE FUNCTION boardready.auth_throttle_check(
  p_limiter text, p_client_key text, p_limit integer, p_now timestamptz DEFAULT now())
RETURNS TABLE (limited boolean, failures integer, retry_after_seconds integer)
LANGUAGE sql ROWS 1 STABLE SECURITY DEFINER SET search_path = boardready, pg_temp AS $$
  SELECT coalesce(f.failures, 0) >= p_limit, coalesce(f.failures, 0),
         greatest(1, ceil(extract(epoch FROM boardready_private.auth_throttle_window(p_now) + interval '1 minute' - p_now)))::integer
    FROM (SELECT 1) one
    LEFT JOIN auth_failures f
      ON f.limiter = p_limiter AND f.client_key = p_client_key AND f.window_start = boardready_private.auth_throttle_window(p_now)
$$;

-- Count one failure; returns the client's failures in the current window.
CREATE OR REPLACE FUNCTION boardready.auth_throttle_record_failure(
  p_limiter text, p_client_key text, p_now timestamptz DEFAULT now())
RETURNS TABLE (failures integer)
LANGUAGE plpgsql ROWS 1 SECURITY DEFINER SET search_path = boardready, pg_temp AS $$
BEGIN
  IF p_limiter NOT IN ('bearer', 'operator') OR length(p_client_key) NOT BETWEEN 1 AND 100 THEN
    RAISE EXCEPTION 'auth_throttle_invalid_key' USING ERRCODE = '22023';
  END IF;
  -- Ended windows are never read again: each failure sweeps a few, which keeps
  -- the table at about one row per failing client per minute.
  DELETE FROM auth_failures f
   WHERE f.ctid IN (SELECT x.ctid FROM auth_failures x
                     WHERE x.window_start < boardready_private.auth_throttle_window(p_now) - interval '5 minutes' LIMIT 100);
  RETURN QUERY
  INSERT INTO auth_failures AS f (limiter, client_key, window_start, failures)
  VALUES (p_limiter, p_client_key, boardready_private.auth_throttle_window(p_now), 1)
  ON CONFLICT (limiter, client_key, window_start) DO UPDATE SET failures = f.failures + 1
  RETURNING f.failures;
END $$;

-- Rate limits that protect people rather than lock them out (issue 25):
-- sign-in starts and callbacks per client address, decisions per person and
-- repository. Each call takes one hit in the subject's current one-minute
-- window, unless the window already holds p_limit (then allowed is false and
-- nothing is counted).
CREATE OR REPLACE FUNCTION boardready.rate_take(
  p_limiter text, p_subject text, p_limit integer, p_now timestamptz DEFAULT now())
RETURNS TABLE (allowed boolean, hits integer, retry_after_seconds integer)
LANGUAGE plpgsql ROWS 1 SECURITY DEFINER SET search_path = boardready, pg_temp AS $$
DECLARE
  v_window timestamptz := boardready_private.auth_throttle_window(p_now);
  v_hits   integer;
  v_retry  integer := greatest(1, ceil(extract(epoch FROM v_window + interval '1 minute' - p_now)))::integer;
BEGIN
  IF p_limiter NOT IN ('sign_in', 'decisions') OR length(p_subject) NOT BETWEEN 1 AND 200 OR p_limit < 1 THEN
    RAISE EXCEPTION 'rate_invalid_key' USING ERRCODE = '22023';
  END IF;
  DELETE FROM rate_counters c
   WHERE c.ctid IN (SELECT x.ctid FROM rate_counters x
                     WHERE x.window_start < v_window - interval '5 minutes' LIMIT 100);
  INSERT INTO rate_counters AS c (limiter, subject, window_start, hits)
  VALUES (p_limiter, p_subject, v_window, 1)
  ON CONFLICT (limiter, subject, window_start) DO UPDATE SET hits = c.hits + 1 WHERE c.hits < p_limit
  RETURNING c.hits INTO v_hits;
  IF v_hits IS NULL THEN
    RETURN QUERY SELECT false, p_limit, v_retry;
  ELSE
    RETURN QUERY SELECT true, v_hits, v_retry;
  END IF;
END $$;

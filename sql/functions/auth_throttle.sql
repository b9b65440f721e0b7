-- Failed-authentication limiter, shared by every replica: per limiter
-- ('bearer' or 'operator', separate counters) and client, failures are counted
-- in fixed one-minute windows. A client whose failures in the current window
-- reached the limit is refused before its credentials are even looked at,
-- until the window ends. Successful authentications are never counted.

CREATE OR REPLACE FUNCTION boardready.auth_throttle_window(p_now timestamptz)
RETURNS timestamptz LANGUAGE sql IMMUTABLE AS $$
  SELECT date_bin(interval '1 minute', p_now, timestamptz '2000-01-01 00:00:00+00')
$$;

-- Is the client over the limit? retry_after_seconds counts to the end of the window.
CREATE OR REPLACE FUNCTION boardready.auth_throttle_check(
  p_limiter text, p_client_key text, p_limit integer, p_now timestamptz DEFAULT now())
RETURNS TABLE (limited boolean, failures integer, retry_after_seconds integer)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = boardready, pg_temp AS $$
  SELECT coalesce(f.failures, 0) >= p_limit, coalesce(f.failures, 0),
         greatest(1, ceil(extract(epoch FROM auth_throttle_window(p_now) + interval '1 minute' - p_now)))::integer
    FROM (SELECT 1) one
    LEFT JOIN auth_failures f
      ON f.limiter = p_limiter AND f.client_key = p_client_key AND f.window_start = auth_throttle_window(p_now)
$$;

-- Count one failure; returns the client's failures in the current window.
CREATE OR REPLACE FUNCTION boardready.auth_throttle_record_failure(
  p_limiter text, p_client_key text, p_now timestamptz DEFAULT now())
RETURNS TABLE (failures integer)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = boardready, pg_temp AS $$
BEGIN
  IF p_limiter NOT IN ('bearer', 'operator') OR length(p_client_key) NOT BETWEEN 1 AND 100 THEN
    RAISE EXCEPTION 'auth_throttle_invalid_key' USING ERRCODE = '22023';
  END IF;
  -- Ended windows are never read again: each failure sweeps a few, which keeps
  -- the table at about one row per failing client per minute.
  DELETE FROM auth_failures f
   WHERE f.ctid IN (SELECT x.ctid FROM auth_failures x
                     WHERE x.window_start < auth_throttle_window(p_now) - interval '5 minutes' LIMIT 100);
  RETURN QUERY
  INSERT INTO auth_failures AS f (limiter, client_key, window_start, failures)
  VALUES (p_limiter, p_client_key, auth_throttle_window(p_now), 1)
  ON CONFLICT (limiter, client_key, window_start) DO UPDATE SET failures = f.failures + 1
  RETURNING f.failures;
END $$;

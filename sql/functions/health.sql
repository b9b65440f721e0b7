-- Readiness probe: proves the schema is migrated and the queue table is
-- readable (a lock held on it shows as database-timeout, not as healthy).
CREATE OR REPLACE FUNCTION boardready.health_probe()
RETURNS TABLE (ok boolean)
LANGUAGE sql ROWS 1 STABLE SECURITY DEFINER SET search_path = boardready, pg_temp AS $$
  SELECT true FROM (SELECT 1 FROM lifecycle_jobs LIMIT 1) AS probe RIGHT JOIN (SELECT 1) AS one ON true LIMIT 1
$$;

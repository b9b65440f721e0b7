-- GET /metrics: each queue's open items by kind, and the age of the oldest
-- (from when it was created, so a job that keeps failing and backing off
-- still ages). Open: accepted or leased. Only the partial indexes of open
-- items are read (lifecycle_jobs_due/_leased, outbox_items_due/_leased,
-- reconciliation_items' open index), so the cost follows the backlog, not
-- the tables. Aggregates only: no tenant data.
CREATE OR REPLACE FUNCTION boardready.metrics_queues(p_now timestamptz DEFAULT now())
RETURNS TABLE (queue text, kind text, depth bigint, oldest_age_seconds double precision)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = boardready, pg_temp AS $$
  SELECT 'lifecycle', j.kind, count(*), extract(epoch FROM p_now - min(j.created_at))::double precision
    FROM lifecycle_jobs j WHERE j.status IN ('accepted', 'leased') GROUP BY j.kind
  UNION ALL
  SELECT 'outbox', o.kind, count(*), extract(epoch FROM p_now - min(o.created_at))::double precision
    FROM outbox_items o WHERE o.status IN ('accepted', 'leased') GROUP BY o.kind
  UNION ALL
  SELECT 'reconciliation', r.kind, count(*), extract(epoch FROM p_now - min(r.created_at))::double precision
    FROM reconciliation_items r WHERE r.status IN ('accepted', 'leased') GROUP BY r.kind
$$;

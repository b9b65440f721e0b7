-- The aggregate SLI snapshot the SLO policy host-cloud-ga-v1 evaluates and
-- GET /metrics exposes. Counts, ages and percentiles only: no tenant data.
--
--   webhook_acceptance_p95_ms   p95 of the server-side acceptance time of the deliveries received in
--                               the last p_acceptance_window_seconds (NULL without deliveries)
--   lifecycle_queue_age_seconds age of the oldest accepted or leased lifecycle job (0 when none)
--   outbox_lag_seconds          how long the oldest due outbox item has waited past its due time
--   reconciliation_backlog      open reconciliation items (all kinds; per kind in the jsonb)
--   stale_attempts              current attempts of open release runs older than the reconciliation
--                               deadline: reconciliation should have closed them
--   terminal_*                  release runs that ended in the last p_failure_window_seconds, and how
--                               many of them failed or timed out (superseded runs do not count)
CREATE OR REPLACE FUNCTION boardready.slo_snapshot(
  p_deadline_seconds           integer,
  p_acceptance_window_seconds  integer DEFAULT 60,
  p_failure_window_seconds     integer DEFAULT 3600,
  p_now                        timestamptz DEFAULT now())
RETURNS TABLE (taken_at timestamptz, webhook_deliveries bigint, webhook_acceptance_p95_ms double precision,
               lifecycle_accepted bigint, lifecycle_leased bigint, lifecycle_dead_letter bigint,
               lifecycle_queue_age_seconds double precision, outbox_accepted bigint, outbox_leased bigint,
               outbox_dead_letter bigint, outbox_lag_seconds double precision, reconciliation_backlog bigint,
               reconciliation_backlog_by_kind jsonb, stale_attempts bigint, terminal_runs bigint,
               failed_runs bigint, terminal_failure_rate_bp integer, reconcilers jsonb)
LANGUAGE sql ROWS 1 STABLE SECURITY DEFINER SET search_path = boardready, pg_temp AS $$
  WITH deliveries AS (
    SELECT count(*) AS n,
           percentile_cont(0.95) WITHIN GROUP (ORDER BY i.acceptance_ms) AS p95
      FROM webhook_inbox i
     WHERE i.received_at > p_now - make_interval(secs => p_acceptance_window_seconds)
       AND i.acceptance_ms IS NOT NULL
  ), awaiting AS (
    SELECT i.received_at FROM webhook_inbox i WHERE i.awaiting_job
  ), jobs AS (
    -- A delivery awaiting its job (jobs.sql) is queued work as much as an accepted job.
    SELECT count(*) FILTER (WHERE j.status = 'accepted') + (SELECT count(*) FROM awaiting) AS accepted,
           count(*) FILTER (WHERE j.status = 'leased') AS leased,
           count(*) FILTER (WHERE j.status = 'dead_letter') AS dead,
           least(min(j.created_at) FILTER (WHERE j.status IN ('accepted', 'leased')),
                 (SELECT min(received_at) FROM awaiting)) AS oldest
      FROM lifecycle_jobs j WHERE j.status <> 'completed'
  ), outbox AS (
    SELECT count(*) FILTER (WHERE o.status = 'accepted') AS accepted,
           count(*) FILTER (WHERE o.status = 'leased') AS leased,
           count(*) FILTER (WHERE o.status = 'dead_letter') AS dead,
           min(o.run_after) FILTER (WHERE o.status = 'accepted' AND o.run_after <= p_now) AS oldest_due
      FROM outbox_items o WHERE o.status <> 'completed'
  ), backlog AS (
    SELECT coalesce(sum(n), 0)::bigint AS total,
           jsonb_object_agg(k.kind, coalesce(b.n, 0) ORDER BY k.kind) AS by_kind
      FROM (VALUES ('lifecycle_inbox'), ('release_run'), ('workflow_attempt')) AS k (kind)
      LEFT JOIN (SELECT ri.kind, count(*) AS n FROM reconciliation_items ri
                  WHERE ri.status IN ('accepted', 'leased') GROUP BY ri.kind) b ON b.kind = k.kind
  ), stale AS (
    SELECT count(*) AS n
      FROM release_runs rr JOIN release_run_attempts a ON a.id = rr.current_attempt_id
     WHERE rr.status IN ('queued', 'dispatched') AND a.lease_closed_at IS NULL
       AND a.created_at < p_now - make_interval(secs => p_deadline_seconds)
  ), terminal AS (
    SELECT count(*) AS n, count(*) FILTER (WHERE rr.status IN ('failed', 'timed_out')) AS failed
      FROM release_runs rr
     WHERE rr.status IN ('completed', 'failed', 'timed_out')
       AND rr.completed_at > p_now - make_interval(secs => p_failure_window_seconds)
  ), beats AS (
    SELECT coalesce(jsonb_object_agg(h.reconciler, jsonb_build_object(
             'lastPollAt', h.last_poll_at, 'lastSuccessAt', h.last_success_at)), '{}'::jsonb) AS doc
      FROM reconciler_heartbeats h
  )
  SELECT p_now, d.n, d.p95,
         j.accepted, j.leased, j.dead,
         coalesce(extract(epoch FROM p_now - j.oldest)::double precision, 0),
         o.accepted, o.leased, o.dead,
         coalesce(extract(epoch FROM p_now - o.oldest_due)::double precision, 0),
         b.total, b.by_kind, s.n, t.n, t.failed,
         CASE WHEN t.n = 0 THEN 0 ELSE (t.failed * 10000 / t.n)::integer END,
         beats.doc
    FROM deliveries d, jobs j, outbox o, backlog b, stale s, terminal t, beats
$$;

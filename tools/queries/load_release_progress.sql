-- bin/load's release-run phase: the runs of the phase's pull request heads,
-- and when each was done (terminal, its check run published, its comment
-- posted when it has a result). Times in epoch seconds.
SELECT rr.head_sha, rr.status, extract(epoch FROM rr.started_at)::float8 AS started,
       rr.status NOT IN ('queued', 'dispatched')
       AND (rr.check_run_id IS NULL OR rr.check_run_published_at IS NOT NULL)
       AND (c.completed_at IS NOT NULL OR NOT EXISTS (
              SELECT 1 FROM boardready.run_results r WHERE r.release_run_id = rr.id AND r.superseded_at IS NULL))
         AS done,
       extract(epoch FROM greatest(rr.check_run_published_at, c.completed_at))::float8 AS done_at
  FROM boardready.release_runs rr
  LEFT JOIN LATERAL (SELECT max(o.completed_at) AS completed_at FROM boardready.outbox_items o
                      WHERE o.release_run_id = rr.id AND o.kind = 'pr_comment' AND o.status = 'completed') c ON true
 WHERE rr.head_sha = ANY(%(heads)s::text[]) AND rr.status <> 'superseded'

-- bin/load's audit (tools/load/audit.py), after every phase: one row per
-- check, its violations (0 when it holds) and counts that explain them.
--
-- accepted:      the delivery ids the service acknowledged (2xx)
-- check_runs, comments, workflow_runs: what the code host (the emulator)
--                shows, so that a doubled check run, comment or dispatch is
--                counted where a person would see it
-- settled:       the load has drained: anything still pending is lost work
--
-- No constraint is trusted: a doubled row is counted even where a unique
-- index should have refused it, since the audit is there to catch the day
-- one is dropped.
WITH accepted AS (
  SELECT DISTINCT 'host:' || d AS key FROM unnest(%(accepted)s::text[]) AS d
),
stored AS (
  SELECT a.key, count(i.id) AS rows
    FROM accepted a LEFT JOIN boardready.webhook_inbox i ON i.idempotency_key = a.key
   GROUP BY a.key
),
-- The deliveries that must have a job: the lifecycle events (ping and other
-- events are kept as evidence without one). Until a worker makes it, the
-- inbox row awaits its job (jobs.sql): pending work, not a lost job.
job_deliveries AS (
  SELECT i.id, count(j.id) AS jobs, i.awaiting_job AS awaiting
    FROM boardready.webhook_inbox i
    JOIN accepted a ON a.key = i.idempotency_key
    LEFT JOIN boardready.lifecycle_jobs j ON j.inbox_id = i.id
   WHERE i.event IN ('installation', 'installation_repositories', 'pull_request')
   GROUP BY i.id
),
jobs AS (
  SELECT j.* FROM boardready.lifecycle_jobs j JOIN boardready.webhook_inbox i ON i.id = j.inbox_id
    JOIN accepted a ON a.key = i.idempotency_key
),
-- One outbox item per call: the check run per run, the dispatch per attempt,
-- the completion and the comment per result.
outbox_groups AS (
  SELECT o.release_run_id, o.kind, count(*) AS items
    FROM boardready.outbox_items o
   WHERE o.kind <> 'check_run_decision'
   GROUP BY o.release_run_id, o.kind,
            CASE o.kind WHEN 'workflow_dispatch' THEN o.attempt_id WHEN 'check_run_create' THEN NULL
                        ELSE o.run_result_id END
),
current_results AS (
  SELECT r.id, r.release_run_id, r.attempt_id, rr.repository_id, rr.pr_number
    FROM boardready.run_results r JOIN boardready.release_runs rr ON rr.id = r.release_run_id
   WHERE r.superseded_at IS NULL AND rr.status <> 'superseded'
),
outbox_lost AS (
  SELECT count(*) AS runs
    FROM boardready.release_runs rr
   WHERE NOT EXISTS (SELECT 1 FROM boardready.outbox_items o
                      WHERE o.release_run_id = rr.id AND o.kind = 'check_run_create')
      OR (rr.status NOT IN ('queued', 'dispatched') AND rr.check_run_id IS NOT NULL
          AND NOT EXISTS (SELECT 1 FROM boardready.outbox_items o
                           WHERE o.release_run_id = rr.id AND o.kind = 'check_run_complete'))
      OR EXISTS (SELECT 1 FROM current_results c
                  WHERE c.release_run_id = rr.id
                    AND NOT EXISTS (SELECT 1 FROM boardready.outbox_items o
                                     WHERE o.run_result_id = c.id AND o.kind = 'pr_comment'))
),
host_check_runs AS (
  SELECT (c ->> 'id')::bigint AS id, (c ->> 'repository_id')::bigint AS repository_id, c ->> 'head_sha' AS head_sha,
         c ->> 'external_id' AS external_id, c ->> 'status' AS status, c ->> 'conclusion' AS conclusion
    FROM jsonb_array_elements(%(check_runs)s::jsonb) AS c
),
host_comments AS (
  SELECT (c ->> 'id')::bigint AS id, (c ->> 'repository_id')::bigint AS repository_id,
         (c ->> 'issue_number')::integer AS issue_number
    FROM jsonb_array_elements(%(comments)s::jsonb) AS c
),
host_runs AS (
  SELECT (w ->> 'id')::bigint AS id, w ->> 'attempt_ref' AS attempt_ref
    FROM jsonb_array_elements(%(workflow_runs)s::jsonb) AS w
),
checked_runs AS (
  -- Every run that should show one check run: not superseded before it was created.
  SELECT rr.* FROM boardready.release_runs rr WHERE rr.status <> 'superseded' OR rr.check_run_id IS NOT NULL
),
-- What the code host shows, each object with the subject it must be the
-- only one for: a check run per head, a comment per pull request, a workflow
-- run per attempt.
host_objects AS (
  SELECT 'check_runs' AS kind, jsonb_build_array(repository_id, head_sha) AS subject FROM host_check_runs
  UNION ALL SELECT 'comments', jsonb_build_array(repository_id, issue_number) FROM host_comments
  UNION ALL SELECT 'workflow_runs', to_jsonb(attempt_ref) FROM host_runs
),
-- One check per kind of host object: beyond one per subject is doubled (the
-- query's end counts it); missing, once settled, is what the service recorded
-- and the host lacks; mismatched, where it applies, is what the service
-- points at that the host shows otherwise.
host_checks AS (
  SELECT 'one_check_run_per_head' AS check_name, 'check_runs' AS kind,
         CASE WHEN %(settled)s THEN
           (SELECT count(*) FROM checked_runs rr
             WHERE NOT EXISTS (SELECT 1 FROM host_check_runs h
                                WHERE h.external_id = 'boardready:release_run:' || rr.id))
         ELSE 0 END AS missing,
         (SELECT count(*) FROM host_check_runs h JOIN boardready.release_runs rr
                   ON h.external_id = 'boardready:release_run:' || rr.id
           WHERE rr.check_run_id IS DISTINCT FROM h.id
             AND (%(settled)s OR rr.check_run_id IS NOT NULL)) AS mismatched
  UNION ALL
  SELECT 'at_most_one_comment_per_pull_request', 'comments',
         CASE WHEN %(settled)s THEN
           (SELECT count(DISTINCT (c.repository_id, c.pr_number)) FROM current_results c
             WHERE NOT EXISTS (SELECT 1 FROM host_comments h
                                WHERE h.repository_id = c.repository_id AND h.issue_number = c.pr_number))
         ELSE 0 END,
         (SELECT count(*) FROM boardready.pull_request_comments p
           WHERE NOT EXISTS (SELECT 1 FROM host_comments h WHERE h.id = p.comment_id))
  UNION ALL
  SELECT 'one_workflow_run_per_attempt', 'workflow_runs',
         CASE WHEN %(settled)s THEN
           (SELECT count(*) FROM boardready.release_run_attempts a
             WHERE a.workflow_run_id IS NOT NULL
               AND NOT EXISTS (SELECT 1 FROM host_runs h WHERE h.id = a.workflow_run_id))
         ELSE 0 END,
         NULL
),
leases AS (
  SELECT status, leased_until FROM boardready.lifecycle_jobs WHERE status = 'leased'
  UNION ALL SELECT status, leased_until FROM boardready.outbox_items WHERE status = 'leased'
  UNION ALL SELECT status, leased_until FROM boardready.reconciliation_items WHERE status = 'leased'
)
SELECT 'deliveries_stored_once' AS check_name,
       count(*) FILTER (WHERE rows <> 1) AS violations,
       jsonb_build_object('accepted', count(*), 'missing', count(*) FILTER (WHERE rows = 0),
                          'doubled', count(*) FILTER (WHERE rows > 1)) AS detail
  FROM stored
UNION ALL
SELECT 'one_job_per_delivery',
       count(*) FILTER (WHERE jobs <> 1 AND NOT (jobs = 0 AND awaiting))
         + (SELECT count(*) - count(DISTINCT idempotency_key) FROM boardready.lifecycle_jobs),
       jsonb_build_object('deliveries', count(*), 'lost', count(*) FILTER (WHERE jobs = 0 AND NOT awaiting),
                          'doubled', count(*) FILTER (WHERE jobs > 1),
                          'same_key_twice', (SELECT count(*) - count(DISTINCT idempotency_key)
                                               FROM boardready.lifecycle_jobs))
  FROM job_deliveries
UNION ALL
SELECT 'jobs_completed',
       count(*) FILTER (WHERE status = 'dead_letter'
                           OR (%(settled)s AND status IN ('accepted', 'leased')))
         + CASE WHEN %(settled)s THEN (SELECT count(*) FROM job_deliveries WHERE awaiting) ELSE 0 END,
       jsonb_build_object('jobs', count(*), 'completed', count(*) FILTER (WHERE status = 'completed'),
                          'pending', count(*) FILTER (WHERE status IN ('accepted', 'leased'))
                                     + (SELECT count(*) FROM job_deliveries WHERE awaiting),
                          'dead_letter', count(*) FILTER (WHERE status = 'dead_letter'))
  FROM jobs
UNION ALL
SELECT 'outbox_items_once',
       coalesce(sum(items - 1) FILTER (WHERE items > 1), 0)
         + CASE WHEN %(settled)s THEN (SELECT runs FROM outbox_lost) ELSE 0 END,
       jsonb_build_object('calls', count(*), 'doubled', coalesce(sum(items - 1) FILTER (WHERE items > 1), 0),
                          'runs_missing_a_call', (SELECT runs FROM outbox_lost))
  FROM outbox_groups
UNION ALL
SELECT 'outbox_items_completed',
       count(*) FILTER (WHERE status = 'dead_letter' OR (%(settled)s AND status IN ('accepted', 'leased'))),
       jsonb_build_object('items', count(*), 'pending', count(*) FILTER (WHERE status IN ('accepted', 'leased')),
                          'dead_letter', count(*) FILTER (WHERE status = 'dead_letter'))
  FROM boardready.outbox_items
UNION ALL
SELECT c.check_name, d.doubled + c.missing + coalesce(c.mismatched, 0),
       jsonb_build_object(c.kind, d.objects, 'doubled', d.doubled, 'missing', c.missing)
       || CASE WHEN c.mismatched IS NULL THEN '{}'::jsonb ELSE jsonb_build_object('mismatched', c.mismatched) END
  FROM host_checks c
  CROSS JOIN LATERAL (SELECT coalesce(sum(g.n), 0) AS objects, coalesce(sum(g.n - 1), 0) AS doubled
                        FROM (SELECT count(*) AS n FROM host_objects h WHERE h.kind = c.kind GROUP BY h.subject) g) d
UNION ALL
SELECT 'check_runs_completed',
       CASE WHEN %(settled)s THEN count(*) FILTER (WHERE NOT done) ELSE 0 END,
       jsonb_build_object('terminal_runs', count(*), 'not_completed', count(*) FILTER (WHERE NOT done))
  FROM (SELECT rr.id,
               rr.check_run_published_at IS NOT NULL
               AND EXISTS (SELECT 1 FROM host_check_runs h
                            WHERE h.id = rr.check_run_id AND h.status = 'completed'
                              AND (rr.status = 'superseded' OR h.conclusion = rr.conclusion)) AS done
          FROM boardready.release_runs rr
         WHERE rr.status NOT IN ('queued', 'dispatched') AND rr.check_run_id IS NOT NULL
           AND (rr.status <> 'superseded')) t
UNION ALL
SELECT 'one_result_per_attempt', coalesce(sum(n - 1), 0),
       jsonb_build_object('doubled', coalesce(sum(n - 1), 0))
  FROM (SELECT count(*) AS n FROM current_results GROUP BY attempt_id HAVING count(*) > 1) g
UNION ALL
SELECT 'release_runs_terminal',
       CASE WHEN %(settled)s THEN count(*) FILTER (WHERE status IN ('queued', 'dispatched')) ELSE 0 END,
       jsonb_build_object('runs', count(*), 'open', count(*) FILTER (WHERE status IN ('queued', 'dispatched')),
                          'completed', count(*) FILTER (WHERE status = 'completed'),
                          'failed', count(*) FILTER (WHERE status IN ('failed', 'timed_out')),
                          'superseded', count(*) FILTER (WHERE status = 'superseded'))
  FROM boardready.release_runs
UNION ALL
SELECT 'nothing_stuck_in_a_lease',
       count(*) FILTER (WHERE leased_until < now() OR %(settled)s),
       jsonb_build_object('leased', count(*), 'expired', count(*) FILTER (WHERE leased_until < now()))
  FROM leases

-- GET /runs (the page), beside the run listing API's page of runs: for each
-- listed run, what a reviewer scans the list for. The latest result's score,
-- its findings and the blocking ones not waived now (error, high), the
-- review's state, when the run last changed, the installation (for the pull
-- request's title from the code host), and whether a newer run of the same
-- pull request exists (release_runs_pull_request: one index probe a run).
SELECT rr.id, rr.installation_id, rr.updated_at, rr.status = 'superseded' OR newer.id IS NOT NULL AS superseded,
       result.score, rv.decision AS review_decision,
       coalesce(judged.findings, 0) AS findings, coalesce(judged.blocking, 0) AS blocking
  FROM boardready.release_runs rr
  LEFT JOIN LATERAL (
    SELECT n.id FROM boardready.release_runs n
     WHERE n.repository_id = rr.repository_id AND n.pr_number = rr.pr_number AND n.id > rr.id
     LIMIT 1) newer ON true
  LEFT JOIN LATERAL (
    SELECT r.id, r.score, r.repository_id FROM boardready.run_results r
     WHERE r.release_run_id = rr.id ORDER BY r.id DESC LIMIT 1) result ON true
  LEFT JOIN LATERAL (
    SELECT count(*) AS findings,
           count(*) FILTER (WHERE f.severity IN ('error', 'high') AND w.id IS NULL) AS blocking
      FROM boardready.run_findings f
      LEFT JOIN boardready.waivers w ON w.repository_id = result.repository_id AND w.fingerprint = f.fingerprint
            AND w.deleted_at IS NULL AND (w.expires_at IS NULL OR w.expires_at > now())
     WHERE f.run_result_id = result.id) judged ON true
  LEFT JOIN boardready.reviews rv ON rv.release_run_id = rr.id
 WHERE rr.id = ANY (%(run_ids)s::bigint[]) AND rr.repository_id = ANY (%(repository_ids)s::bigint[])

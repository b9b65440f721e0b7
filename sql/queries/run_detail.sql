-- GET /api/v1/runs/{id}: a release run of one of the caller's repositories,
-- its latest result, its review and the counts of its findings (waived: a
-- standing waiver of the repository covers the fingerprint now).
WITH run AS (
  SELECT rr.* FROM boardready.release_runs rr
   WHERE rr.id = %(release_run_id)s AND rr.repository_id = ANY (%(repository_ids)s::bigint[])
), result AS (
  SELECT r.* FROM boardready.run_results r JOIN run ON r.release_run_id = run.id ORDER BY r.id DESC LIMIT 1
), judged AS (
  SELECT f.severity, w.id IS NOT NULL AS waived
    FROM result JOIN boardready.run_findings f ON f.run_result_id = result.id
    LEFT JOIN boardready.waivers w ON w.repository_id = result.repository_id AND w.fingerprint = f.fingerprint
          AND w.deleted_at IS NULL AND (w.expires_at IS NULL OR w.expires_at > now())
)
SELECT run.id, run.repository_id, repo.full_name, run.pr_number, run.head_sha, run.status, run.decision,
       run.conclusion, run.failure_reason, run.started_at, run.completed_at,
       result.id AS run_result_id, result.readiness, result.score, result.decision AS readiness_decision,
       result.published_conclusion,
       rv.id AS review_id, rv.created_by AS review_created_by, rv.decision AS review_decision,
       (SELECT count(*) FROM judged) AS findings,
       (SELECT count(*) FROM judged WHERE severity = 'error') AS error,
       (SELECT count(*) FROM judged WHERE severity = 'high') AS high,
       (SELECT count(*) FROM judged WHERE severity = 'medium') AS medium,
       (SELECT count(*) FROM judged WHERE severity = 'low') AS low,
       (SELECT count(*) FROM judged WHERE severity = 'info') AS info,
       (SELECT count(*) FROM judged WHERE waived) AS waived,
       (SELECT count(*) FROM judged WHERE severity IN ('error', 'high') AND NOT waived) AS unwaived_blocking
  FROM run
  JOIN boardready.repositories repo ON repo.id = run.repository_id
  LEFT JOIN result ON true
  LEFT JOIN boardready.reviews rv ON rv.release_run_id = run.id

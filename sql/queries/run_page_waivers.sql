-- The run page: the standing waivers of the run's repository that cover its
-- latest result's findings (who waived, why, until when; the id revokes it).
WITH run AS (
  SELECT rr.id, rr.repository_id FROM boardready.release_runs rr
   WHERE rr.id = %(release_run_id)s AND rr.repository_id = ANY (%(repository_ids)s::bigint[])
), result AS (
  SELECT r.id FROM boardready.run_results r JOIN run ON r.release_run_id = run.id ORDER BY r.id DESC LIMIT 1
)
SELECT w.id, w.fingerprint, w.reason, w.created_by, w.created_at, w.expires_at
  FROM run JOIN boardready.waivers w ON w.repository_id = run.repository_id
 WHERE w.deleted_at IS NULL AND (w.expires_at IS NULL OR w.expires_at > now())
   AND w.fingerprint IN (SELECT f.fingerprint FROM boardready.run_findings f JOIN result ON f.run_result_id = result.id)

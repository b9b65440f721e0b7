-- The run page's history: the review's approvals (one standing per actor,
-- with break-glass reasons) and the waivers of the repository that cover the
-- run's findings (created and deleted), newest first.
WITH run AS (
  SELECT rr.id, rr.repository_id FROM boardready.release_runs rr
   WHERE rr.id = %(release_run_id)s AND rr.repository_id = ANY (%(repository_ids)s::bigint[])
), result AS (
  SELECT r.id FROM boardready.run_results r JOIN run ON r.release_run_id = run.id ORDER BY r.id DESC LIMIT 1
)
SELECT * FROM (
  SELECT 'approval' AS kind, a.approver_id AS actor, a.status AS what, a.break_glass,
         a.break_glass_reason AS reason, NULL::text AS fingerprint, a.updated_at AS at
    FROM run JOIN boardready.reviews rv ON rv.release_run_id = run.id
    JOIN boardready.review_approvals a ON a.review_id = rv.id
  UNION ALL
  SELECT 'waiver', w.created_by, 'waived', false, w.reason, w.fingerprint, w.created_at
    FROM run JOIN boardready.waivers w ON w.repository_id = run.repository_id
   WHERE w.fingerprint IN (SELECT f.fingerprint FROM boardready.run_findings f JOIN result ON f.run_result_id = result.id)
  UNION ALL
  SELECT 'waiver', w.deleted_by, 'waiver_deleted', false, NULL, w.fingerprint, w.deleted_at
    FROM run JOIN boardready.waivers w ON w.repository_id = run.repository_id
   WHERE w.deleted_at IS NOT NULL
     AND w.fingerprint IN (SELECT f.fingerprint FROM boardready.run_findings f JOIN result ON f.run_result_id = result.id)
) events
 ORDER BY at DESC
 LIMIT 200

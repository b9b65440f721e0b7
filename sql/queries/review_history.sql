-- The run page's history: the review's approvals (one standing per actor,
-- with break-glass reasons, and a request for changes with its comment while
-- the comment is the one written with it: comment_at = updated_at, as the
-- previous release replaces approvals without knowing the column) and the
-- waivers of the repository that cover the run's findings (created and
-- revoked), newest first. A waiver names the finding it covers in this run
-- (title or rule, file and line) and says until when it stands.
WITH run AS (
  SELECT rr.id, rr.repository_id FROM boardready.release_runs rr
   WHERE rr.id = %(release_run_id)s AND rr.repository_id = ANY (%(repository_ids)s::bigint[])
), result AS (
  SELECT r.id FROM boardready.run_results r JOIN run ON r.release_run_id = run.id ORDER BY r.id DESC LIMIT 1
), covered AS (
  SELECT DISTINCT ON (f.fingerprint) f.fingerprint, coalesce(f.title, f.rule_id) AS finding, f.path, f.start_line
    FROM boardready.run_findings f JOIN result ON f.run_result_id = result.id
   ORDER BY f.fingerprint, f.ordinal
)
SELECT * FROM (
  SELECT 'approval' AS kind, a.approver_id AS actor, a.status AS what, a.break_glass,
         a.break_glass_reason AS reason, NULL::text AS fingerprint, NULL::text AS finding, NULL::text AS path,
         NULL::integer AS start_line, NULL::timestamptz AS expires_at, a.updated_at AS at,
         CASE WHEN a.status = 'changes_requested' AND a.comment_at = a.updated_at THEN a.comment END AS comment
    FROM run JOIN boardready.reviews rv ON rv.release_run_id = run.id
    JOIN boardready.review_approvals a ON a.review_id = rv.id
  UNION ALL
  SELECT 'waiver', w.created_by, 'waived', false, w.reason, w.fingerprint, c.finding, c.path, c.start_line,
         w.expires_at, w.created_at, NULL
    FROM run JOIN boardready.waivers w ON w.repository_id = run.repository_id
    JOIN covered c ON c.fingerprint = w.fingerprint
  UNION ALL
  SELECT 'waiver', w.deleted_by, 'waiver_deleted', false, NULL, w.fingerprint, c.finding, c.path, c.start_line,
         NULL, w.deleted_at, NULL
    FROM run JOIN boardready.waivers w ON w.repository_id = run.repository_id
    JOIN covered c ON c.fingerprint = w.fingerprint
   WHERE w.deleted_at IS NOT NULL
) events
 ORDER BY at DESC
 LIMIT 200

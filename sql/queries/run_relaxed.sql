-- The run page: the findings of the latest result that the pull request's own
-- policy relaxed (run_findings.relaxed, checker/policy.py), by fingerprint.
WITH run AS (
  SELECT rr.id FROM boardready.release_runs rr
   WHERE rr.id = %(release_run_id)s AND rr.repository_id = ANY (%(repository_ids)s::bigint[])
), result AS (
  SELECT r.id FROM boardready.run_results r JOIN run ON r.release_run_id = run.id ORDER BY r.id DESC LIMIT 1
)
SELECT f.fingerprint, f.rule_id, f.relaxed
  FROM result JOIN boardready.run_findings f ON f.run_result_id = result.id
 WHERE f.relaxed IS NOT NULL
 ORDER BY f.ordinal

-- A check run's decision update: the findings of the run's latest result that
-- the pull request's own policy relaxed (run_findings.relaxed, checker/policy.py),
-- so that the update names the relaxed settings as the completion did.
WITH result AS (
  SELECT r.id FROM boardready.run_results r
   WHERE r.release_run_id = %(release_run_id)s ORDER BY r.id DESC LIMIT 1
)
SELECT f.relaxed
  FROM result JOIN boardready.run_findings f ON f.run_result_id = result.id
 WHERE f.relaxed IS NOT NULL
 ORDER BY f.ordinal

-- GET /release-runs/{id} (the run page), beside the API's run detail: the
-- check run, the installation (for names from the code host), the pull
-- request's author and the latest result's report artifact, for a run among the caller's repositories.
SELECT rr.id, rr.installation_id, rr.check_run_id, rr.published_decision, pr.author_login, pr.author_id,
       res.last_publication_error, art.id AS artifact_id, art.size_bytes AS artifact_bytes
  FROM boardready.release_runs rr
  LEFT JOIN boardready.pull_requests pr ON pr.repository_id = rr.repository_id AND pr.number = rr.pr_number
  LEFT JOIN LATERAL (SELECT r.id, r.last_publication_error FROM boardready.run_results r
                      WHERE r.release_run_id = rr.id ORDER BY r.id DESC LIMIT 1) res ON true
  LEFT JOIN boardready.report_artifacts art ON art.run_result_id = res.id
 WHERE rr.id = %(release_run_id)s AND rr.repository_id = ANY (%(repository_ids)s::bigint[])

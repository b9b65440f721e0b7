-- GET /release-runs/{id} (the run page), beside the API's run detail: the
-- check run, the installation (for names from the code host), the pull
-- request's author and the latest result's report artifact, for a run among the caller's repositories;
-- whether the repository accepts token-published results and whether this run's result was one.
SELECT rr.id, rr.installation_id, rr.check_run_id, rr.published_decision, pr.author_login, pr.author_id,
       coalesce(res.last_publication_error, rr.last_publication_error) AS last_publication_error,
       art.id AS artifact_id, art.size_bytes AS artifact_bytes,
       repo.token_published_results, res.source = 'bearer_result' AS decided_by_token
  FROM boardready.release_runs rr
  JOIN boardready.repositories repo ON repo.id = rr.repository_id
  LEFT JOIN boardready.pull_requests pr ON pr.repository_id = rr.repository_id AND pr.number = rr.pr_number
  LEFT JOIN LATERAL (SELECT r.id, r.last_publication_error, r.source FROM boardready.run_results r
                      WHERE r.release_run_id = rr.id ORDER BY r.id DESC LIMIT 1) res ON true
  LEFT JOIN boardready.report_artifacts art ON art.run_result_id = res.id
 WHERE rr.id = %(release_run_id)s AND rr.repository_id = ANY (%(repository_ids)s::bigint[])

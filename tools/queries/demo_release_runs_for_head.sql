-- The release runs of one head commit (bin/demo).
SELECT id, repository, pr_number, status, decision, conclusion, dispatch_state, workflow_run_id
FROM ops.release_runs
WHERE head_sha = %(head_sha)s
ORDER BY id

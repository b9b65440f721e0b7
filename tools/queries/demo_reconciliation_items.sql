-- The workflow reconciliation items of one head commit's attempts (bin/demo).
SELECT ri.id, ri.kind, ri.subject_id, ri.reason_code, ri.status, ri.outcome, ri.observations
FROM ops.reconciliation_items ri
JOIN boardready.release_run_attempts a ON a.id = ri.subject_id
JOIN boardready.release_runs rr ON rr.id = a.release_run_id
WHERE ri.kind = 'workflow_attempt' AND rr.head_sha = %(head_sha)s
ORDER BY ri.id

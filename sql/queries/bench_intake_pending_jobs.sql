-- Jobs of one intake benchmark run that the workers have not completed yet.
SELECT count(*) AS pending
FROM boardready.lifecycle_jobs
WHERE idempotency_key LIKE %(key_pattern)s AND status <> 'completed'

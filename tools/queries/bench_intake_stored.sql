-- What one intake benchmark run stored: inbox rows and jobs, each counted
-- twice (rows and distinct keys) so that a doubled delivery shows, and the
-- rows still awaiting their job (the workers make it, jobs.sql).
SELECT
  (SELECT count(*) FROM boardready.webhook_inbox WHERE idempotency_key LIKE %(key_pattern)s) AS inbox_rows,
  (SELECT count(DISTINCT idempotency_key) FROM boardready.webhook_inbox
    WHERE idempotency_key LIKE %(key_pattern)s) AS inbox_distinct,
  (SELECT count(*) FROM boardready.webhook_inbox
    WHERE idempotency_key LIKE %(key_pattern)s AND awaiting_job) AS awaiting_job,
  count(*) AS jobs,
  count(DISTINCT inbox_id) AS jobs_distinct_inbox,
  count(DISTINCT idempotency_key) AS jobs_distinct_key
FROM boardready.lifecycle_jobs
WHERE idempotency_key LIKE %(key_pattern)s

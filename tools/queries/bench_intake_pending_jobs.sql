-- Deliveries of one intake benchmark run whose job the workers have not
-- completed yet, or not even made.
SELECT
  (SELECT count(*) FROM boardready.lifecycle_jobs
    WHERE idempotency_key LIKE %(key_pattern)s AND status <> 'completed')
  + (SELECT count(*) FROM boardready.webhook_inbox
      WHERE idempotency_key LIKE %(key_pattern)s AND awaiting_job) AS pending

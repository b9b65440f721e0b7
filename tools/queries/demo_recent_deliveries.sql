-- The newest deliveries with their inbox state and job status, newest last (bin/demo).
SELECT idempotency_key AS delivery, event, action, state AS inbox, job_status
FROM (SELECT * FROM ops.inbox ORDER BY id DESC LIMIT %(limit)s) newest
ORDER BY id

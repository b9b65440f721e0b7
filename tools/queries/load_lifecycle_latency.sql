-- bin/load's lifecycle phase: for each delivery of the intake phase, when the
-- service accepted it and when its lifecycle job completed (epoch seconds).
SELECT extract(epoch FROM i.received_at)::float8 AS received, extract(epoch FROM j.completed_at)::float8 AS completed,
       j.status
  FROM boardready.webhook_inbox i
  JOIN boardready.lifecycle_jobs j ON j.inbox_id = i.id
 WHERE i.idempotency_key = ANY(%(keys)s::text[])

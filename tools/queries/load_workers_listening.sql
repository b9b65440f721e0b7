-- bin/load: worker processes up since a moment. Each worker process's
-- lifecycle loop holds one connection that LISTENs on lifecycle_jobs; one
-- started since the kill is one replacement running its loop.
SELECT count(*) AS listening
  FROM pg_stat_activity
 WHERE query = 'LISTEN lifecycle_jobs' AND backend_start >= to_timestamp(%(since)s)

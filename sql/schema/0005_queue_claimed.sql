-- The rows one claim took, passed between a queue's claim statements.
-- depends: 0004_run_results
CREATE TYPE boardready.queue_claimed AS (id bigint, lease_token uuid, attempts integer);

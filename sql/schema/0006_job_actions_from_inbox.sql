-- A job's normalized actions are its inbox row's: keep them once, there.
-- depends: 0005_queue_claimed
DROP VIEW IF EXISTS ops.dead_letters;
ALTER TABLE boardready.lifecycle_jobs DROP COLUMN actions;

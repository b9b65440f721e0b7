-- The intake stores a delivery as one row, and the lifecycle workers turn
-- the rows that call for a job into jobs, in batches, when they claim work
-- (lifecycle_jobs_from_inbox in jobs.sql). Writing the job in the intake's
-- own transaction was the second heap row and three more index entries of
-- every delivery, under 80 concurrent senders the largest part of the
-- intake's database time (README, Benchmarks).
--
-- `awaiting_job` marks the rows whose job is still to be made; the partial
-- index holds only those, so finding them costs nothing however many
-- deliveries the inbox keeps. The inbox state stays `accepted` meanwhile,
-- as it does while a job waits.
-- depends: 0016_intake_job_guard

ALTER TABLE boardready.webhook_inbox ADD COLUMN awaiting_job boolean NOT NULL DEFAULT false;
CREATE INDEX webhook_inbox_awaiting_job ON boardready.webhook_inbox (id) WHERE awaiting_job;

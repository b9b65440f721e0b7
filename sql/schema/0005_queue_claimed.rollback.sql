-- The claim functions that use the type are re-created by the next migrate.
DROP TYPE boardready.queue_claimed CASCADE;

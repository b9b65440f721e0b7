-- The dropped signatures belong to releases before 0.6.0: nothing to restore.
SELECT 1;

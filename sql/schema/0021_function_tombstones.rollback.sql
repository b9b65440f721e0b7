-- The dropped signatures belong to releases before 0.6.0: nothing to restore. The trigger
-- stays (sql/functions of the release rolled back to creates it again, as 0.6.0 did).
SELECT 1;

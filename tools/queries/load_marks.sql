-- bin/load: the newest delivery and release run when a fault ends. What was
-- in flight up to them must converge (load_pending.sql).
SELECT (SELECT coalesce(max(id), 0) FROM boardready.webhook_inbox) AS inbox_mark,
       (SELECT coalesce(max(id), 0) FROM boardready.release_runs) AS run_mark

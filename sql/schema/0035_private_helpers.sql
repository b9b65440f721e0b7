-- The SQL API split in two (issue 28): the functions the app, the workers and
-- the tools call stay in boardready, where the API role is granted each by
-- name (app/migrations.py, from app/sql_api.py's list); the helpers only
-- other functions call are defined in boardready_private (sql/functions), on
-- which the API role has no USAGE, so it cannot call them. An ops view may
-- still call a helper: the API role is granted EXECUTE on exactly those (a
-- view names its functions by oid, without the schema's USAGE).
--
-- Rolling upgrade: the previous release's bodies run until sql/functions
-- replaces them right after the migrations, and a call of theirs under way
-- when a helper it names moves fails (PostgreSQL plans the statement again
-- against the catalog of that moment and no longer finds the name). So the
-- previous release's helpers stay where they are, sql/functions defines this
-- release's in boardready_private beside them, and the contract migration
-- 0037 drops the old copies once the previous release's processes have
-- stopped.
--
-- The trigger functions move now, keeping their oid, so that their triggers
-- call them as before: only a trigger calls one, and this lock waits until
-- every transaction that wrote one of their tables has ended and holds new
-- writers back until this migration commits (app/migrations.py bounds the
-- wait and retries).
-- depends: 0031_more_function_tombstones

LOCK TABLE boardready.webhook_inbox, boardready.lifecycle_jobs, boardready.run_results IN SHARE ROW EXCLUSIVE MODE;

CREATE SCHEMA boardready_private;

DO $$
DECLARE
  v_function regprocedure;
BEGIN
  FOR v_function IN
    SELECT p.oid::regprocedure FROM pg_proc p
     WHERE p.pronamespace = 'boardready'::regnamespace
       AND p.proname IN ('webhook_inbox_refuse_orphaning', 'lifecycle_job_project_inbox',
                         'run_results_keep_published_conclusion')
  LOOP
    EXECUTE format('ALTER FUNCTION %s SET SCHEMA boardready_private', v_function);
  END LOOP;
END $$;

-- The trigger that keeps a run result's first published conclusion was
-- dropped and created again by results.sql on every migrate; it lives here
-- now (its function created here first for a database migrated from empty).
-- A database that has it keeps it: it calls the function moved above by oid.
CREATE OR REPLACE FUNCTION boardready_private.run_results_keep_published_conclusion()
RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF OLD.published_conclusion IS NOT NULL THEN
    NEW.published_conclusion := OLD.published_conclusion;
  END IF;
  RETURN NEW;
END $$;

DO $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_trigger WHERE tgrelid = 'boardready.run_results'::regclass
                                              AND tgname = 'run_results_keep_published_conclusion') THEN
    CREATE TRIGGER run_results_keep_published_conclusion
      BEFORE UPDATE OF published_conclusion ON boardready.run_results
      FOR EACH ROW EXECUTE FUNCTION boardready_private.run_results_keep_published_conclusion();
  END IF;
END $$;

-- Moved with their grants (0.6.0 granted the API role every function): taken back.
REVOKE ALL ON ALL FUNCTIONS IN SCHEMA boardready_private FROM PUBLIC, boardready_api;

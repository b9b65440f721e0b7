-- The previous release's copies of the helpers that now live in
-- boardready_private. Migrations 0035 and 0036 leave them in boardready: a
-- call under way in one of the previous release's processes names them, and
-- would fail the moment they moved. Once those processes have stopped,
-- nothing calls them: each is a boardready function with the name of one
-- this release defines in boardready_private. A database migrated from empty
-- has none.
-- depends: 0036_private_queue_helpers
DO $$
DECLARE
  v_function regprocedure;
BEGIN
  FOR v_function IN
    SELECT p.oid::regprocedure FROM pg_proc p
     WHERE p.pronamespace = 'boardready'::regnamespace
       AND p.proname IN (SELECT q.proname FROM pg_proc q WHERE q.pronamespace = 'boardready_private'::regnamespace)
  LOOP
    EXECUTE format('DROP FUNCTION %s', v_function);
  END LOOP;
END $$;

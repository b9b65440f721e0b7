-- Every function of boardready_private back in boardready, called as such
-- again, and the private schema gone (the trigger of run results stays: the
-- release before this one created it on every migrate).
SET LOCAL check_function_bodies = off;

DO $$
DECLARE
  v_helpers  text[];
  v_function regprocedure;
BEGIN
  SELECT array_agg(DISTINCT p.proname) INTO v_helpers
    FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
   WHERE n.nspname = 'boardready_private' AND p.proname <> 'migration_requalify_calls';
  FOR v_function IN
    SELECT p.oid::regprocedure FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
     WHERE n.nspname = 'boardready_private' AND p.proname <> 'migration_requalify_calls'
  LOOP
    EXECUTE format('ALTER FUNCTION %s SET SCHEMA boardready', v_function);
  END LOOP;
  IF v_helpers IS NOT NULL THEN
    PERFORM boardready_private.migration_requalify_calls(v_helpers, 'boardready_private', 'boardready');
  END IF;
END $$;

DROP FUNCTION boardready_private.migration_requalify_calls(text[], text, text);
DROP SCHEMA boardready_private;

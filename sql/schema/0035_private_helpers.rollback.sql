-- Every function of boardready_private back in boardready, called as such
-- again (a previous release's copy left there gives way), and the private
-- schema gone (the trigger of run results stays: the release before this one
-- created it on every migrate).
SET LOCAL check_function_bodies = off;

DO $$
DECLARE
  v_helpers  text[];
  v_call     text;
  v_function regprocedure;
  v_public   regprocedure;
BEGIN
  SELECT array_agg(DISTINCT p.proname) INTO v_helpers
    FROM pg_proc p WHERE p.pronamespace = 'boardready_private'::regnamespace;
  FOR v_function, v_public IN
    SELECT p.oid::regprocedure,
           to_regprocedure(format('boardready.%I(%s)', p.proname, oidvectortypes(p.proargtypes)))
      FROM pg_proc p WHERE p.pronamespace = 'boardready_private'::regnamespace
  LOOP
    IF v_public IS NOT NULL THEN
      EXECUTE format('DROP FUNCTION %s', v_public);
    END IF;
    EXECUTE format('ALTER FUNCTION %s SET SCHEMA boardready', v_function);
  END LOOP;
  IF v_helpers IS NULL THEN
    RETURN;
  END IF;
  -- Every body that calls one as boardready_private.<name>(...) calls boardready.<name>(...).
  v_call := '\mboardready_private\.(' || array_to_string(v_helpers, '|') || ')\s*\(';
  FOR v_function IN
    SELECT p.oid FROM pg_proc p WHERE p.pronamespace = 'boardready'::regnamespace AND p.prokind = 'f'
                                  AND p.prosrc ~ v_call
  LOOP
    EXECUTE regexp_replace(pg_get_functiondef(v_function), v_call, 'boardready.\1(', 'g');
  END LOOP;
END $$;

DROP SCHEMA boardready_private;

-- The SQL API split in two (issue 28): the functions the app, the workers and
-- the tools call stay in boardready, where the API role is granted each by
-- name (app/migrations.py, from app/sql_api.py's list); the helpers only
-- other functions call move to boardready_private, on which the API role has
-- no USAGE, so it cannot call them. An ops view may still call a helper: the
-- API role is granted EXECUTE on exactly those (a view names its functions by
-- oid, without the schema's USAGE).
--
-- Rolling upgrade: the previous release's function bodies stay in place
-- until sql/functions replaces them right after the migrations, and call the
-- helpers as boardready.<name> or by search_path. So that no call fails in
-- between, the same transaction that moves a helper rewrites every body that
-- names it (boardready.<name> becomes boardready_private.<name>) and adds the
-- private schema to every function's search_path. A helper keeps its oid:
-- the triggers that call one keep calling it.
--
-- The helpers of queue, outbox, reconciliation, supply and replay move in
-- 0036 (those files were being rewritten when this was written).
-- depends: 0031_more_function_tombstones

CREATE SCHEMA boardready_private;

SET LOCAL check_function_bodies = off;

-- This migration's tool and 0036's: every body in the two schemas that calls
-- one of p_helpers as p_from.<name>(...) calls p_to.<name>(...) instead, and
-- every search_path set to the public schema names the private one too
-- (p_to = boardready_private) or no longer does (the rollbacks).
CREATE FUNCTION boardready_private.migration_requalify_calls(p_helpers text[], p_from text, p_to text)
RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  v_call     text := '\m' || p_from || '\.(' || array_to_string(p_helpers, '|') || ')\s*\(';
  v_function oid;
  v_private  boolean := p_to = 'boardready_private';
BEGIN
  FOR v_function IN
    SELECT p.oid FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
     WHERE n.nspname IN ('boardready', 'boardready_private') AND p.prokind = 'f' AND p.prosrc ~ v_call
  LOOP
    EXECUTE regexp_replace(pg_get_functiondef(v_function), v_call, p_to || '.\1(', 'g');
  END LOOP;
  FOR v_function IN
    SELECT p.oid FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
     WHERE n.nspname IN ('boardready', 'boardready_private')
       AND (CASE WHEN v_private THEN 'search_path=boardready, pg_temp'
                 ELSE 'search_path=boardready, boardready_private, pg_temp' END) = ANY (p.proconfig)
  LOOP
    EXECUTE format('ALTER FUNCTION %s SET search_path = %s', v_function::regprocedure,
                   CASE WHEN v_private THEN 'boardready, boardready_private, pg_temp' ELSE 'boardready, pg_temp' END);
  END LOOP;
END $$;

DO $$
DECLARE
  v_helpers text[] := ARRAY[
    'account_erasure_purge',
    'account_lock_key',
    'auth_throttle_window',
    'conclusion_for_decision',
    'decision_for_readiness',
    'inbox_purge',
    'legal_hold_check_request',
    'legal_hold_previous_request',
    'legal_hold_request_digest',
    'lifecycle_apply_installation',
    'lifecycle_apply_installation_repositories',
    'lifecycle_apply_pull_request',
    'lifecycle_ensure_installation',
    'lifecycle_job_project_inbox',
    'lifecycle_jobs_from_inbox',
    'lifecycle_remove_repositories',
    'lifecycle_upsert_account',
    'lifecycle_upsert_repositories',
    'outbox_enqueue_for_result',
    'purge_counts_add',
    'purge_counts_total',
    'purge_rows',
    'purge_step',
    'purge_steps',
    'refuse_if',
    'release_decision',
    'release_decision_enqueue_update',
    'release_decision_inputs',
    'release_decisions_refresh_fingerprint',
    'release_run_closed_words',
    'release_run_enqueue_check_run_completion',
    'release_run_open',
    'release_run_publishable',
    'release_runs_purge',
    'repository_access_denial',
    'retention_busy_runs',
    'retention_candidates',
    'retention_comments',
    'retention_held',
    'retention_held_installations',
    'retention_next_position',
    'retention_purge_table',
    'review_creator',
    'review_decision_of',
    'review_open',
    'run_result_completion_decision',
    'run_result_completion_follow',
    'run_result_store',
    'run_results_keep_published_conclusion',
    'run_results_purge',
    'session_verify',
    'session_visible_repositories',
    'webhook_inbox_refuse_orphaning'];
  v_function regprocedure;
BEGIN
  FOR v_function IN
    SELECT p.oid::regprocedure FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
     WHERE n.nspname = 'boardready' AND p.proname = ANY (v_helpers)
  LOOP
    EXECUTE format('ALTER FUNCTION %s SET SCHEMA boardready_private', v_function);
  END LOOP;
  PERFORM boardready_private.migration_requalify_calls(v_helpers, 'boardready', 'boardready_private');
END $$;

-- The trigger that keeps a run result's first published conclusion was
-- dropped and created again by results.sql on every migrate; it lives here
-- now (its function created here first for a database migrated from empty).
-- A database that has it keeps it (it calls the moved function by oid):
-- creating it again would lock run_results under the previous release's
-- processes.
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

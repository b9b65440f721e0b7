-- The rest of the helpers move to boardready_private, as 0035 moved the
-- others: those of the queue, outbox, reconciliation, supply and replay
-- files (rewritten by the one worker loop, 0032), those other files' helpers
-- that these call, and the previous release's queue functions only its own
-- bodies called (queue_claim*, queue_lock_leased, queue_check_table,
-- queue_replay, reconciliation_claim_ids: kept one release, not callable).
-- The same transaction rewrites every body that names one (0035's
-- boardready_private.migration_requalify_calls), so the previous release's
-- bodies keep working until sql/functions replaces them.
-- depends: 0035_private_helpers

SET LOCAL check_function_bodies = off;

DO $$
DECLARE
  v_helpers text[] := ARRAY[
    'component_provider_transition',
    'component_provider_window',
    'installation_account_canceled',
    'job_check_failure_codes',
    'job_lease_due',
    'job_lock_leased',
    'job_replay',
    'lifecycle_inbox_state_for',
    'lifecycle_jobs_insert',
    'outbox_enqueue',
    'queue_check_table',
    'queue_claim',
    'queue_claim_all',
    'queue_claim_one',
    'queue_expired_status',
    'queue_lock_leased',
    'queue_replay',
    'queue_replay_details',
    'queue_retry_after',
    'queue_table_kinds',
    'reconciliation_check_reason',
    'reconciliation_check_run_observe',
    'reconciliation_claim_ids',
    'reconciliation_finish',
    'reconciliation_lifecycle_repair',
    'reconciliation_open_item',
    'reconciliation_open_items',
    'reconciliation_recheck',
    'reconciliation_workflow_observe',
    'release_decision_after_completion',
    'release_decision_refresh',
    'release_run_enqueue_check_run_completion_v2',
    'release_run_expected_conclusion',
    'run_bom_store',
    'run_result_completion_await',
    'supply_array',
    'supply_check_open',
    'supply_distributor_classification',
    'supply_fingerprint',
    'supply_lifecycle_status',
    'supply_part_key',
    'supply_parts_to_fetch',
    'supply_price_breaks',
    'supply_work_parts',
    'watched_board_bom_run',
    'watched_boards_unwatch_canceled',
    'work_channel',
    'work_item_for_lease',
    'work_lease_due',
    'work_lock_leased',
    'work_queue_kinds',
    'work_replay'];
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

REVOKE ALL ON ALL FUNCTIONS IN SCHEMA boardready_private FROM PUBLIC, boardready_api;

-- Release 0.7.0's layer goes, once its processes have stopped
-- (bin/migrate --contract): what sql/compat/0_7.sql defines, 0.7.0's
-- helpers that nothing current calls, and what 0.7.0 still had for 0.6.0's
-- processes (an upgrade from 0.6.0 passes through 0.7.0, whose contract ran
-- first): the queue functions that took a table name with their private
-- helpers, 0.6.0's supply claim and defer, its lifecycle handler, its session
-- authentication and token revocation; and two dead lease columns. After
-- this migration app/migrations.py no longer applies sql/compat/0_7.sql. A
-- database migrated from empty runs it at once.
-- depends: 0037_previous_release_helpers_contract

-- Every lock it needs first (0032 says why): the tables that lose a column.
LOCK TABLE boardready.watched_boards, boardready.supply_checks IN ACCESS EXCLUSIVE MODE;

-- sql/compat/0_7.sql
DROP FUNCTION IF EXISTS boardready.review_record_approval;
DROP FUNCTION IF EXISTS boardready.waiver_create;
DROP FUNCTION IF EXISTS boardready.token_verify;
DROP FUNCTION IF EXISTS boardready.supply_check_apply;
DROP FUNCTION IF EXISTS boardready.supply_board_refreshed;

-- 0.7.0's helpers nothing current calls: the check run completion with
-- words, and SQL's words for a check run closed without a result (this
-- release's completions carry the reason code; app/host/publication.py has
-- the words)
DROP FUNCTION IF EXISTS boardready_private.release_run_enqueue_check_run_completion;
DROP FUNCTION IF EXISTS boardready_private.release_run_closed_words;

-- 0.6.0's, which 0.7.0 kept
DROP FUNCTION IF EXISTS boardready.queue_complete;
DROP FUNCTION IF EXISTS boardready.queue_fail;
DROP FUNCTION IF EXISTS boardready.queue_release;
DROP FUNCTION IF EXISTS boardready.queue_renew_leases;
DROP FUNCTION IF EXISTS boardready_private.queue_claim;
DROP FUNCTION IF EXISTS boardready_private.queue_claim_all;
DROP FUNCTION IF EXISTS boardready_private.queue_claim_one;
DROP FUNCTION IF EXISTS boardready_private.queue_lock_leased;
DROP FUNCTION IF EXISTS boardready_private.queue_table_kinds;
DROP FUNCTION IF EXISTS boardready_private.queue_check_table;
DROP FUNCTION IF EXISTS boardready.supply_work_claim;
DROP FUNCTION IF EXISTS boardready.supply_work_defer;
DROP FUNCTION IF EXISTS boardready.lifecycle_job_process;
DROP FUNCTION IF EXISTS boardready.session_authenticate;
DROP FUNCTION IF EXISTS boardready.token_revoke_within;

-- Two lease columns only ever set to NULL since the supply work moved to
-- work_items (0020).
ALTER TABLE boardready.watched_boards DROP COLUMN IF EXISTS refresh_leased_until;
ALTER TABLE boardready.supply_checks DROP COLUMN IF EXISTS leased_until;

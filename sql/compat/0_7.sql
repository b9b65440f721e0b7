-- What exists only for release 0.7.0's processes while they run beside this
-- release (a rolling upgrade): the public functions 0.7.0's bodies call that
-- this release's do not. Each keeps 0.7.0's signature and meaning as a thin
-- wrapper over what this release calls instead (`-- successor:`), so that a
-- call under way in a 0.7.0 body finds it. app/migrations.py applies this
-- file after sql/functions until the contract migration below has been
-- applied (bin/migrate --contract, once 0.7.0's processes have stopped); that
-- migration drops everything defined here. Nothing current calls into this
-- file (tests/sql/test_compat.py). Removing 0.7.0's layer is deleting it.
-- contract: 0038_release_0_7_contract

-- successor: review_record_approval_v2
CREATE OR REPLACE FUNCTION boardready.review_record_approval(
  p_review_id bigint, p_repository_ids bigint[], p_actor text, p_status text, p_break_glass boolean,
  p_break_glass_reason text, p_now timestamptz DEFAULT now())
RETURNS TABLE (outcome text, approval_id bigint, status text, break_glass boolean, review_decision text,
               release_run_id bigint, release_decision text, updated_at timestamptz)
LANGUAGE sql SECURITY DEFINER SET search_path = boardready, pg_temp AS $$
  SELECT * FROM boardready_private.review_approval_record(p_review_id, p_repository_ids, p_actor, p_status,
                                                          p_break_glass, p_break_glass_reason, p_now)
$$;

-- successor: waiver_create_v2
CREATE OR REPLACE FUNCTION boardready.waiver_create(
  p_repository_id bigint, p_repository_ids bigint[], p_fingerprint text, p_reason text, p_expires_at timestamptz,
  p_actor text, p_now timestamptz DEFAULT now())
RETURNS TABLE (outcome text, waiver_id bigint, created_at timestamptz, decisions_changed integer)
LANGUAGE sql SECURITY DEFINER SET search_path = boardready, pg_temp AS $$
  SELECT * FROM boardready_private.waiver_store(p_repository_id, p_repository_ids, p_fingerprint, p_reason,
                                                p_expires_at, p_actor, p_now)
$$;

-- successor: token_verify_v2
CREATE OR REPLACE FUNCTION boardready.token_verify(p_token_sha256 bytea, p_now timestamptz DEFAULT now())
RETURNS TABLE (outcome text, token_id uuid, repository_id bigint, scopes text[], expires_at timestamptz)
LANGUAGE sql SECURITY DEFINER SET search_path = boardready, pg_temp AS $$
  SELECT v.outcome, v.token_id, v.repository_id, v.scopes, v.expires_at FROM token_verify_v2(p_token_sha256, p_now) v
$$;

-- successor: supply_work_complete
CREATE OR REPLACE FUNCTION boardready.supply_check_apply(
  p_run_result_id bigint, p_unavailable_reason text, p_now timestamptz DEFAULT now())
RETURNS TABLE (outcome text, findings_added integer)
LANGUAGE sql SECURITY DEFINER SET search_path = boardready, pg_temp AS $$
  SELECT * FROM boardready_private.supply_check_findings(p_run_result_id, p_unavailable_reason, p_now)
$$;

-- successor: supply_work_complete
CREATE OR REPLACE FUNCTION boardready.supply_board_refreshed(
  p_board_id bigint, p_refreshed boolean, p_next_after timestamptz, p_now timestamptz DEFAULT now())
RETURNS void LANGUAGE sql SECURITY DEFINER SET search_path = boardready, pg_temp AS $$
  SELECT boardready_private.watched_board_refreshed(p_board_id, p_refreshed, p_next_after, p_now)
$$;

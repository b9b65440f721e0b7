-- Report artifacts (sql/schema/0013_report_artifacts.sql).

-- The readiness workflow's HTML report, uploaded after its signed result was
-- accepted, with the same OIDC identity: bound to the attempt (its id and
-- nonce), the repository and the dispatched workflow run, exactly as the
-- result was, and attached to the attempt's standing result. One report per
-- result: the first stored stays. The report must be the one the signed
-- result announced in its `reportArtifact` (SHA-256 and size, which the
-- result's digest covers): anything else is refused and nothing is stored.
-- Outcomes: stored, unchanged (a report is already attached),
-- attempt_not_found, repository_mismatch, run_id_mismatch, result_not_found
-- (no accepted result for the attempt yet), report_not_announced (the result
-- names no report), report_mismatch (not the announced hash and size).
CREATE OR REPLACE FUNCTION boardready.artifact_store(
  p_attempt_ref     text,
  p_repository_id   bigint,
  p_workflow_run_id bigint,
  p_sha256          text,
  p_content         bytea,
  p_size_bytes      integer,
  p_now             timestamptz DEFAULT now())
RETURNS TABLE (outcome text, artifact_id bigint, release_run_id bigint)
LANGUAGE plpgsql ROWS 1 SECURITY DEFINER SET search_path = boardready, pg_temp AS $$
DECLARE
  v_attempt  release_run_attempts%ROWTYPE;
  v_run      release_runs%ROWTYPE;
  v_result   run_results%ROWTYPE;
  v_id       bigint;
BEGIN
  SELECT * INTO v_attempt FROM release_run_attempts a
   WHERE p_attempt_ref ~ '^[0-9]{1,18}-[0-9a-f]{32}$'
     AND a.id = split_part(p_attempt_ref, '-', 1)::bigint AND a.nonce = split_part(p_attempt_ref, '-', 2);
  IF NOT FOUND THEN
    RETURN QUERY SELECT 'attempt_not_found'::text, NULL::bigint, NULL::bigint;
    RETURN;
  END IF;
  SELECT * INTO v_run FROM release_runs WHERE id = v_attempt.release_run_id;
  IF v_run.repository_id <> p_repository_id THEN
    RETURN QUERY SELECT 'repository_mismatch'::text, NULL::bigint, NULL::bigint;
    RETURN;
  END IF;
  IF v_attempt.workflow_run_id IS DISTINCT FROM p_workflow_run_id THEN
    RETURN QUERY SELECT 'run_id_mismatch'::text, NULL::bigint, NULL::bigint;
    RETURN;
  END IF;
  SELECT * INTO v_result FROM run_results r
   WHERE r.attempt_id = v_attempt.id AND r.superseded_at IS NULL ORDER BY r.id DESC LIMIT 1;
  IF NOT FOUND THEN
    RETURN QUERY SELECT 'result_not_found'::text, NULL::bigint, v_run.id;
    RETURN;
  END IF;
  IF v_result.report_sha256 IS NULL THEN
    RETURN QUERY SELECT 'report_not_announced'::text, NULL::bigint, v_run.id;
    RETURN;
  END IF;
  IF v_result.report_sha256 <> p_sha256 OR v_result.report_bytes <> p_size_bytes
     OR octet_length(p_content) <> p_size_bytes OR encode(sha256(p_content), 'hex') <> p_sha256 THEN
    RETURN QUERY SELECT 'report_mismatch'::text, NULL::bigint, v_run.id;
    RETURN;
  END IF;
  INSERT INTO report_artifacts (run_result_id, release_run_id, repository_id, media_type, sha256, size_bytes,
                                content, created_at)
  VALUES (v_result.id, v_run.id, v_run.repository_id, 'text/html', p_sha256, p_size_bytes, p_content, p_now)
  ON CONFLICT (run_result_id) DO NOTHING
  RETURNING id INTO v_id;
  IF v_id IS NULL THEN
    SELECT a.id INTO v_id FROM report_artifacts a WHERE a.run_result_id = v_result.id;
    RETURN QUERY SELECT 'unchanged'::text, v_id, v_run.id;
    RETURN;
  END IF;
  RETURN QUERY SELECT 'stored'::text, v_id, v_run.id;
END $$;

-- Repository settings, changed with an admin token and audited in the same
-- transaction. Today one: whether a result published with a bearer token
-- (POST /api/v1/runs/result) may decide a release run.

CREATE OR REPLACE FUNCTION boardready.repository_settings_get(p_repository_id bigint)
RETURNS TABLE (outcome text, token_published_results boolean)
LANGUAGE sql ROWS 1 STABLE SECURITY DEFINER SET search_path = boardready, pg_temp AS $$
  SELECT 'found'::text, r.token_published_results FROM repositories r
   WHERE r.id = p_repository_id AND r.removed_at IS NULL
  UNION ALL
  SELECT 'repository_not_found'::text, NULL::boolean
   WHERE NOT EXISTS (SELECT 1 FROM repositories r WHERE r.id = p_repository_id AND r.removed_at IS NULL)
$$;

CREATE OR REPLACE FUNCTION boardready.repository_settings_update(
  p_repository_id bigint, p_token_published_results boolean, p_actor text, p_now timestamptz DEFAULT now())
RETURNS TABLE (outcome text, token_published_results boolean, audit_event_id uuid)
LANGUAGE plpgsql ROWS 1 SECURITY DEFINER SET search_path = boardready, pg_temp AS $$
DECLARE
  v_repo     repositories%ROWTYPE;
  v_audit_id uuid;
BEGIN
  SELECT * INTO v_repo FROM repositories r WHERE r.id = p_repository_id AND r.removed_at IS NULL FOR UPDATE;
  IF NOT FOUND THEN
    RETURN QUERY SELECT 'repository_not_found'::text, NULL::boolean, NULL::uuid;
    RETURN;
  END IF;
  IF v_repo.token_published_results = p_token_published_results THEN
    RETURN QUERY SELECT 'unchanged'::text, p_token_published_results, NULL::uuid;
    RETURN;
  END IF;
  UPDATE repositories SET token_published_results = p_token_published_results, updated_at = p_now
   WHERE id = p_repository_id;
  INSERT INTO audit_events (event_type, installation_id, actor, item_type, item_id, occurred_at, details)
  VALUES ('repository.settings_changed', v_repo.installation_id, p_actor, 'repository', p_repository_id::text,
          p_now, jsonb_build_object('tokenPublishedResults', p_token_published_results,
                                    'previous', v_repo.token_published_results))
  RETURNING id INTO v_audit_id;
  RETURN QUERY SELECT 'updated'::text, p_token_published_results, v_audit_id;
END $$;

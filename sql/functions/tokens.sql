-- Repository-scoped API tokens. The service hashes the value (SHA-256) before
-- it reaches the database; the plaintext never does.

CREATE OR REPLACE FUNCTION boardready.token_create(
  p_repository_id  bigint,
  p_name           text,
  p_scopes         text[],
  p_duration_days  integer,         -- NULL: never expires
  p_token_sha256   bytea,
  p_token_prefix   text,
  p_created_by     text,
  p_now            timestamptz DEFAULT now())
RETURNS TABLE (outcome text, token_id uuid, created_at timestamptz, expires_at timestamptz)
LANGUAGE plpgsql ROWS 1 SECURITY DEFINER SET search_path = boardready, pg_temp AS $$
DECLARE
  v_denial text;
  v_row    api_tokens%ROWTYPE;
BEGIN
  -- The API validates first and answers 400; these are invariants.
  IF p_duration_days IS NOT NULL AND p_duration_days NOT BETWEEN 1 AND 365 THEN
    RAISE EXCEPTION 'token_invalid_duration' USING ERRCODE = '22023';
  END IF;
  IF p_created_by IS NULL OR p_created_by !~ '^[A-Za-z0-9._:@-]{1,200}$' THEN
    RAISE EXCEPTION 'token_invalid_creator' USING ERRCODE = '22023';
  END IF;

  -- A token is only for a repository the service knows from an installation,
  -- that is still part of it, and whose account is not canceled.
  SELECT boardready_private.repository_access_denial(p_repository_id) INTO v_denial;
  IF v_denial IS NOT NULL THEN
    RETURN QUERY SELECT v_denial, NULL::uuid, NULL::timestamptz, NULL::timestamptz;
    RETURN;
  END IF;

  INSERT INTO api_tokens (repository_id, name, token_sha256, token_prefix, scopes, expires_at, created_by, created_at)
  VALUES (p_repository_id, p_name, p_token_sha256, p_token_prefix,
          -- Canonical order, no duplicates: the order the spec lists them in.
          ARRAY(SELECT s FROM unnest(ARRAY['runs:write', 'reviews:read', 'reviews:write', 'admin']) AS s
                 WHERE s = ANY (p_scopes)),
          p_now + make_interval(days => p_duration_days), p_created_by, p_now)
  RETURNING * INTO v_row;
  RETURN QUERY SELECT 'created'::text, v_row.id, v_row.created_at, v_row.expires_at;
END $$;

CREATE OR REPLACE FUNCTION boardready.token_list(p_repository_id bigint, p_now timestamptz DEFAULT now())
RETURNS TABLE (token_id uuid, name text, token_prefix text, scopes text[], status text, created_at timestamptz,
               expires_at timestamptz, last_used_at timestamptz, revoked_at timestamptz, created_by text)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = boardready, pg_temp AS $$
  SELECT t.id, t.name, t.token_prefix, t.scopes,
         CASE WHEN t.revoked_at IS NOT NULL THEN 'revoked'
              WHEN t.expires_at <= p_now THEN 'expired'
              ELSE 'active' END,
         t.created_at, t.expires_at, t.last_used_at, t.revoked_at, t.created_by
    FROM api_tokens t
   WHERE t.repository_id = p_repository_id
   ORDER BY t.created_at DESC, t.id
$$;

-- Revoke one token. p_repository_id is the caller's repository scope (the API
-- passes the bearer token's repository): a token of another repository is
-- not_found, exactly like one that does not exist. NULL (operator CLI) means any.
CREATE OR REPLACE FUNCTION boardready.token_revoke(
  p_token_id uuid, p_repository_id bigint, p_reason text, p_now timestamptz DEFAULT now())
RETURNS TABLE (outcome text, revoked_at timestamptz)
LANGUAGE plpgsql ROWS 1 SECURITY DEFINER SET search_path = boardready, pg_temp AS $$
DECLARE
  v_revoked timestamptz;
  v_found   boolean;
BEGIN
  IF p_reason NOT IN ('api', 'operator_cli') THEN
    RAISE EXCEPTION 'token_invalid_revoke_reason' USING ERRCODE = '22023';
  END IF;
  UPDATE api_tokens t SET revoked_at = p_now, revoked_reason = p_reason
   WHERE t.id = p_token_id AND (p_repository_id IS NULL OR t.repository_id = p_repository_id)
     AND t.revoked_at IS NULL
  RETURNING t.revoked_at INTO v_revoked;
  IF v_revoked IS NOT NULL THEN
    RETURN QUERY SELECT 'revoked'::text, v_revoked;
    RETURN;
  END IF;
  SELECT true, t.revoked_at INTO v_found, v_revoked FROM api_tokens t
   WHERE t.id = p_token_id AND (p_repository_id IS NULL OR t.repository_id = p_repository_id);
  IF v_found THEN
    RETURN QUERY SELECT 'already_revoked'::text, v_revoked;
  ELSE
    RETURN QUERY SELECT 'not_found'::text, NULL::timestamptz;
  END IF;
END $$;

-- token_create with the person the token acts as (p_person_id: the viewer of
-- the session that mints it, or the person of the token that mints it; NULL
-- for an operator's token). An admin token is audited with its person.
CREATE OR REPLACE FUNCTION boardready.token_create_v2(
  p_repository_id  bigint,
  p_name           text,
  p_scopes         text[],
  p_duration_days  integer,
  p_token_sha256   bytea,
  p_token_prefix   text,
  p_created_by     text,
  p_person_id      bigint,
  p_now            timestamptz DEFAULT now())
RETURNS TABLE (outcome text, token_id uuid, created_at timestamptz, expires_at timestamptz)
LANGUAGE plpgsql ROWS 1 SECURITY DEFINER SET search_path = boardready, pg_temp AS $$
DECLARE
  v_row record;
BEGIN
  SELECT * INTO v_row FROM token_create(p_repository_id, p_name, p_scopes, p_duration_days, p_token_sha256,
                                        p_token_prefix, p_created_by, p_now);
  IF v_row.outcome = 'created' THEN
    UPDATE api_tokens SET person_id = p_person_id WHERE id = v_row.token_id;
    IF 'admin' = ANY (p_scopes) THEN
      INSERT INTO audit_events (event_type, installation_id, actor, operation_id, item_type, item_id, occurred_at,
                                details)
      SELECT 'control_plane.admin_token_created', r.installation_id, p_created_by, 'token:' || v_row.token_id,
             'api_token', v_row.token_id::text, p_now,
             jsonb_build_object('repositoryId', p_repository_id, 'personId', p_person_id)
        FROM repositories r WHERE r.id = p_repository_id;
    END IF;
  END IF;
  RETURN QUERY SELECT v_row.outcome, v_row.token_id, v_row.created_at, v_row.expires_at;
END $$;

-- Authenticate a bearer token by the SHA-256 of its value, with the person it
-- acts as (NULL: itself). Outcomes: valid, unknown, revoked, expired,
-- account_canceled, repository_removed.
-- last_used_at is written only when the stored value is at least 60 s old, so
-- a busy token costs at most one write a minute, not one per request.
CREATE OR REPLACE FUNCTION boardready.token_verify_v2(p_token_sha256 bytea, p_now timestamptz DEFAULT now())
RETURNS TABLE (outcome text, token_id uuid, repository_id bigint, scopes text[], expires_at timestamptz,
               person_id bigint)
LANGUAGE plpgsql ROWS 1 SECURITY DEFINER SET search_path = boardready, pg_temp AS $$
DECLARE
  v_token  api_tokens%ROWTYPE;
  v_denial text;
  v_result text;
BEGIN
  SELECT * INTO v_token FROM api_tokens t WHERE t.token_sha256 = p_token_sha256;
  IF NOT FOUND THEN
    RETURN QUERY SELECT 'unknown'::text, NULL::uuid, NULL::bigint, NULL::text[], NULL::timestamptz,
                        NULL::bigint;
    RETURN;
  END IF;

  v_denial := boardready_private.repository_access_denial(v_token.repository_id);
  -- A canceled account fails closed first: its tokens were revoked with it.
  v_result := CASE
    WHEN v_denial = 'account_canceled' THEN 'account_canceled'
    WHEN v_token.revoked_at IS NOT NULL THEN 'revoked'
    WHEN v_token.expires_at <= p_now THEN 'expired'
    WHEN v_denial IS NOT NULL THEN 'repository_removed'
    ELSE 'valid'
  END;

  IF v_result = 'valid' AND (v_token.last_used_at IS NULL OR v_token.last_used_at <= p_now - interval '60 seconds') THEN
    UPDATE api_tokens t SET last_used_at = p_now
     WHERE t.id = v_token.id AND (t.last_used_at IS NULL OR t.last_used_at <= p_now - interval '60 seconds');
  END IF;
  RETURN QUERY SELECT v_result, v_token.id, v_token.repository_id, v_token.scopes, v_token.expires_at,
                      v_token.person_id;
END $$;

-- DELETE /api/v1/tokens by a caller that is admin of p_admin_repository_ids
-- and may revoke its own person's tokens in p_own_repository_ids. A token
-- outside both is not_found. Revoking another person's token is audited.
CREATE OR REPLACE FUNCTION boardready.token_revoke_v2(
  p_token_id uuid, p_admin_repository_ids bigint[], p_own_repository_ids bigint[], p_person_id bigint,
  p_actor text, p_now timestamptz DEFAULT now())
RETURNS TABLE (outcome text, revoked_at timestamptz)
LANGUAGE plpgsql ROWS 1 SECURITY DEFINER SET search_path = boardready, pg_temp AS $$
DECLARE
  v_token api_tokens%ROWTYPE;
  v_row   record;
BEGIN
  SELECT * INTO v_token FROM api_tokens t WHERE t.id = p_token_id;
  IF NOT FOUND OR NOT (v_token.repository_id = ANY (p_admin_repository_ids)
                       OR (v_token.repository_id = ANY (p_own_repository_ids) AND p_person_id IS NOT NULL
                           AND v_token.person_id = p_person_id)) THEN
    RETURN QUERY SELECT 'not_found'::text, NULL::timestamptz;
    RETURN;
  END IF;
  SELECT * INTO v_row FROM token_revoke(p_token_id, v_token.repository_id, 'api', p_now);
  IF v_row.outcome = 'revoked' AND v_token.person_id IS DISTINCT FROM p_person_id THEN
    INSERT INTO audit_events (event_type, installation_id, actor, operation_id, item_type, item_id, occurred_at,
                              details)
    SELECT 'control_plane.token_revoked', r.installation_id, p_actor, 'token:' || p_token_id || ':revoke',
           'api_token', p_token_id::text, p_now,
           jsonb_build_object('repositoryId', v_token.repository_id, 'createdBy', v_token.created_by)
      FROM repositories r WHERE r.id = v_token.repository_id;
  END IF;
  RETURN QUERY SELECT v_row.outcome, v_row.revoked_at;
END $$;

-- The repository of a token among p_repository_ids (NULL elsewhere): a
-- session's rights there are re-read before it revokes the token.
CREATE OR REPLACE FUNCTION boardready.token_repository_within(p_token_id uuid, p_repository_ids bigint[])
RETURNS bigint LANGUAGE sql STABLE SECURITY DEFINER SET search_path = boardready, pg_temp AS $$
  SELECT t.repository_id FROM api_tokens t WHERE t.id = p_token_id AND t.repository_id = ANY (p_repository_ids)
$$;

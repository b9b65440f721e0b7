-- Sign-in with the code host and browser sessions. Cookies are random values
-- held only by the browser; the database keeps their SHA-256.

-- A sign-in begins: remember the pre-session cookie's hash, the OAuth state
-- bound to it and where to return. Old attempts are swept on the way.
CREATE OR REPLACE FUNCTION boardready.sign_in_begin(
  p_cookie_sha256 bytea, p_state text, p_return_to text, p_ttl_seconds integer, p_now timestamptz DEFAULT now())
RETURNS TABLE (outcome text, expires_at timestamptz)
LANGUAGE plpgsql ROWS 1 SECURITY DEFINER SET search_path = boardready, pg_temp AS $$
BEGIN
  -- A pending sign-in is kept for its 10 minutes, no longer.
  DELETE FROM sign_in_attempts a WHERE a.expires_at < p_now;
  INSERT INTO sign_in_attempts (cookie_sha256, state, return_to, created_at, expires_at)
  VALUES (p_cookie_sha256, p_state, p_return_to, p_now, p_now + make_interval(secs => p_ttl_seconds));
  RETURN QUERY SELECT 'started'::text, p_now + make_interval(secs => p_ttl_seconds);
END $$;

-- The code host sent the browser back: the attempt is used up whatever the
-- outcome (a refused state cannot be tried again). Outcomes: ok, unknown
-- (no such pre-session), expired, state_mismatch.
CREATE OR REPLACE FUNCTION boardready.sign_in_finish(
  p_cookie_sha256 bytea, p_state text, p_now timestamptz DEFAULT now())
RETURNS TABLE (outcome text, return_to text)
LANGUAGE plpgsql ROWS 1 SECURITY DEFINER SET search_path = boardready, pg_temp AS $$
DECLARE
  v_attempt sign_in_attempts%ROWTYPE;
BEGIN
  DELETE FROM sign_in_attempts a WHERE a.cookie_sha256 = p_cookie_sha256 RETURNING * INTO v_attempt;
  IF NOT FOUND THEN
    RETURN QUERY SELECT 'unknown'::text, NULL::text;
  ELSIF v_attempt.expires_at <= p_now THEN
    RETURN QUERY SELECT 'expired'::text, NULL::text;
  ELSIF v_attempt.state <> p_state THEN
    RETURN QUERY SELECT 'state_mismatch'::text, NULL::text;
  ELSE
    RETURN QUERY SELECT 'ok'::text, v_attempt.return_to;
  END IF;
END $$;

-- A session for a viewer, with the installations and repositories the code
-- host said the viewer can reach (kept as ids; what is visible is decided
-- again on every request by session_verify).
CREATE OR REPLACE FUNCTION boardready.session_create(
  p_token_sha256 bytea, p_viewer_id bigint, p_viewer_login text, p_installation_ids bigint[],
  p_repository_ids bigint[], p_ttl_hours integer, p_now timestamptz DEFAULT now())
RETURNS TABLE (outcome text, session_id uuid, expires_at timestamptz)
LANGUAGE plpgsql ROWS 1 SECURITY DEFINER SET search_path = boardready, pg_temp AS $$
DECLARE
  v_id uuid;
BEGIN
  DELETE FROM sessions s WHERE s.expires_at < p_now - interval '1 day';
  INSERT INTO sessions (token_sha256, viewer_id, viewer_login, installation_ids, repository_ids, created_at,
                        expires_at)
  VALUES (p_token_sha256, p_viewer_id, p_viewer_login, coalesce(p_installation_ids, '{}'),
          coalesce(p_repository_ids, '{}'), p_now, p_now + make_interval(hours => p_ttl_hours))
  RETURNING id INTO v_id;
  RETURN QUERY SELECT 'created'::text, v_id, p_now + make_interval(hours => p_ttl_hours);
END $$;

-- The repositories a session may use now: those resolved at sign-in that the
-- service knows, still in a live installation, of an account not canceled.
CREATE OR REPLACE FUNCTION boardready_private.session_visible_repositories(p_repository_ids bigint[])
RETURNS bigint[] LANGUAGE sql STABLE SECURITY DEFINER SET search_path = boardready, pg_temp AS $$
  SELECT coalesce(array_agg(r.id ORDER BY r.id), '{}')
    FROM repositories r
    JOIN installations i ON i.id = r.installation_id
    LEFT JOIN marketplace_accounts m ON m.account_id = i.account_id
   WHERE r.id = ANY (p_repository_ids) AND r.removed_at IS NULL AND i.status NOT IN ('deleted', 'suspended')
     AND m.state IS DISTINCT FROM 'canceled'
$$;

-- Authenticate a session cookie by its SHA-256. Outcomes: valid, unknown, expired.
CREATE OR REPLACE FUNCTION boardready_private.session_verify(p_token_sha256 bytea, p_now timestamptz DEFAULT now())
RETURNS TABLE (outcome text, session_id uuid, viewer_id bigint, viewer_login text, repository_ids bigint[],
               expires_at timestamptz)
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = boardready, pg_temp AS $$
DECLARE
  v_session sessions%ROWTYPE;
BEGIN
  SELECT * INTO v_session FROM sessions s WHERE s.token_sha256 = p_token_sha256;
  IF NOT FOUND THEN
    RETURN QUERY SELECT 'unknown'::text, NULL::uuid, NULL::bigint, NULL::text, NULL::bigint[], NULL::timestamptz;
  ELSIF v_session.expires_at <= p_now THEN
    RETURN QUERY SELECT 'expired'::text, NULL::uuid, NULL::bigint, NULL::text, NULL::bigint[], NULL::timestamptz;
  ELSE
    RETURN QUERY SELECT 'valid'::text, v_session.id, v_session.viewer_id, v_session.viewer_login,
                        boardready_private.session_visible_repositories(v_session.repository_ids), v_session.expires_at;
  END IF;
END $$;

CREATE OR REPLACE FUNCTION boardready.session_delete(p_token_sha256 bytea)
RETURNS TABLE (outcome text)
LANGUAGE sql ROWS 1 SECURITY DEFINER SET search_path = boardready, pg_temp AS $$
  WITH gone AS (DELETE FROM sessions s WHERE s.token_sha256 = p_token_sha256 RETURNING 1)
  SELECT CASE WHEN EXISTS (SELECT 1 FROM gone) THEN 'deleted' ELSE 'not_found' END
$$;

-- For operators: sessions without their cookie hashes.
CREATE OR REPLACE VIEW ops.sessions AS
SELECT s.id, s.viewer_id, s.viewer_login, cardinality(s.installation_ids) AS installations,
       cardinality(s.repository_ids) AS repositories, s.created_at, s.expires_at, s.expires_at <= now() AS expired
  FROM boardready.sessions s;

-- session_create with the viewer's rights per repository as the code host
-- reported them at sign-in: admin (admin or maintain) and write (push)
-- repositories, each also among p_repository_ids (which all read).
CREATE OR REPLACE FUNCTION boardready.session_create_v2(
  p_token_sha256 bytea, p_viewer_id bigint, p_viewer_login text, p_installation_ids bigint[],
  p_repository_ids bigint[], p_admin_repository_ids bigint[], p_write_repository_ids bigint[], p_ttl_hours integer,
  p_now timestamptz DEFAULT now())
RETURNS TABLE (outcome text, session_id uuid, expires_at timestamptz)
LANGUAGE plpgsql ROWS 1 SECURITY DEFINER SET search_path = boardready, pg_temp AS $$
DECLARE
  v_row record;
BEGIN
  SELECT * INTO v_row FROM session_create(p_token_sha256, p_viewer_id, p_viewer_login, p_installation_ids,
                                          p_repository_ids, p_ttl_hours, p_now);
  UPDATE sessions s
     SET admin_repository_ids = ARRAY(SELECT unnest(coalesce(p_admin_repository_ids, '{}'))
                                      INTERSECT SELECT unnest(s.repository_ids)),
         write_repository_ids = ARRAY(SELECT unnest(coalesce(p_write_repository_ids, '{}'))
                                      INTERSECT SELECT unnest(s.repository_ids)),
         permissions_checked_at = p_now
   WHERE s.id = v_row.session_id;
  RETURN QUERY SELECT v_row.outcome, v_row.session_id, v_row.expires_at;
END $$;

-- One round trip per session request. A valid session is never refused
-- because of other clients' failures: it is looked up first. Only an unknown
-- cookie meets the client's failed-authentication limiter (limited) and, when
-- not limited, counts as a failure. The rights are those visible now; a
-- session of the previous release (no rights recorded) may only read.
CREATE OR REPLACE FUNCTION boardready.session_authenticate_v2(
  p_token_sha256 bytea, p_client_key text, p_limit integer, p_now timestamptz DEFAULT now())
RETURNS TABLE (outcome text, retry_after_seconds integer, session_id uuid, viewer_id bigint, viewer_login text,
               repository_ids bigint[], admin_repository_ids bigint[], write_repository_ids bigint[],
               permissions_checked_at timestamptz, expires_at timestamptz)
LANGUAGE plpgsql ROWS 1 SECURITY DEFINER SET search_path = boardready, pg_temp AS $$
DECLARE
  v_session sessions%ROWTYPE;
  v_visible bigint[];
  v_limit   record;
BEGIN
  SELECT * INTO v_session FROM sessions s WHERE s.token_sha256 = p_token_sha256;
  IF FOUND AND v_session.expires_at <= p_now THEN
    RETURN QUERY SELECT 'expired'::text, NULL::integer, NULL::uuid, NULL::bigint, NULL::text, NULL::bigint[],
                        NULL::bigint[], NULL::bigint[], NULL::timestamptz, NULL::timestamptz;
    RETURN;
  END IF;
  IF NOT FOUND THEN
    SELECT * INTO v_limit FROM auth_throttle_check('bearer', p_client_key, p_limit, p_now);
    IF NOT v_limit.limited THEN
      PERFORM auth_throttle_record_failure('bearer', p_client_key, p_now);
    END IF;
    RETURN QUERY SELECT CASE WHEN v_limit.limited THEN 'limited' ELSE 'unknown' END,
                        CASE WHEN v_limit.limited THEN v_limit.retry_after_seconds END, NULL::uuid, NULL::bigint,
                        NULL::text, NULL::bigint[], NULL::bigint[], NULL::bigint[], NULL::timestamptz,
                        NULL::timestamptz;
    RETURN;
  END IF;
  v_visible := boardready_private.session_visible_repositories(v_session.repository_ids);
  RETURN QUERY SELECT 'valid'::text, NULL::integer, v_session.id, v_session.viewer_id, v_session.viewer_login,
                      v_visible,
                      ARRAY(SELECT unnest(coalesce(v_session.admin_repository_ids, '{}'))
                            INTERSECT SELECT unnest(v_visible)),
                      ARRAY(SELECT unnest(coalesce(v_session.write_repository_ids, '{}'))
                            INTERSECT SELECT unnest(v_visible)),
                      v_session.permissions_checked_at, v_session.expires_at;
END $$;

-- The code host re-read one repository's permission for a session's viewer
-- (p_role: admin, write, read or none). The session's rights there are
-- replaced; with no access left anywhere the session is ended (outcome
-- ended), else updated.
CREATE OR REPLACE FUNCTION boardready.session_permission_replace(
  p_session_id uuid, p_repository_id bigint, p_role text, p_now timestamptz DEFAULT now())
RETURNS TABLE (outcome text)
LANGUAGE plpgsql ROWS 1 SECURITY DEFINER SET search_path = boardready, pg_temp AS $$
DECLARE
  v_session sessions%ROWTYPE;
BEGIN
  IF p_role NOT IN ('admin', 'write', 'read', 'none') THEN
    RAISE EXCEPTION 'session_invalid_role' USING ERRCODE = '22023';
  END IF;
  UPDATE sessions s
     SET repository_ids = CASE WHEN p_role = 'none' THEN array_remove(s.repository_ids, p_repository_id)
                               ELSE s.repository_ids END,
         admin_repository_ids = array_remove(coalesce(s.admin_repository_ids, '{}'), p_repository_id)
                                || CASE WHEN p_role = 'admin' THEN ARRAY[p_repository_id] ELSE '{}'::bigint[] END,
         write_repository_ids = array_remove(coalesce(s.write_repository_ids, '{}'), p_repository_id)
                                || CASE WHEN p_role = 'write' THEN ARRAY[p_repository_id] ELSE '{}'::bigint[] END,
         permissions_checked_at = p_now
   WHERE s.id = p_session_id
  RETURNING * INTO v_session;
  IF NOT FOUND THEN
    RETURN QUERY SELECT 'not_found'::text;
  ELSIF cardinality(boardready_private.session_visible_repositories(v_session.repository_ids)) = 0 THEN
    DELETE FROM sessions s WHERE s.id = p_session_id;
    INSERT INTO audit_events (event_type, actor, item_type, item_id, occurred_at, details)
    VALUES ('control_plane.session_ended', 'host-user:' || v_session.viewer_id, 'session', p_session_id::text,
            p_now, jsonb_build_object('reason', 'access_lost', 'repositoryId', p_repository_id));
    RETURN QUERY SELECT 'ended'::text;
  ELSE
    RETURN QUERY SELECT 'updated'::text;
  END IF;
END $$;

-- The code host says a person lost access (organization member_removed,
-- member removed, an installation's repositories removed, the installation
-- deleted or suspended): end that person's sessions that reached the scope
-- and revoke the tokens they minted there, each with an audit event.
-- p_person_id NULL: everyone's (the installation or repositories are gone).
-- The scope is p_repository_ids when given, else every repository of the
-- installation p_installation_id or of the account p_account_id's
-- installations. Idempotent: a redelivery finds nothing left to do.
CREATE OR REPLACE FUNCTION boardready.access_removed(
  p_person_id bigint, p_account_id bigint, p_installation_id bigint, p_repository_ids bigint[], p_reason text,
  p_now timestamptz DEFAULT now())
RETURNS TABLE (sessions_ended integer, tokens_revoked integer)
LANGUAGE plpgsql ROWS 1 SECURITY DEFINER SET search_path = boardready, pg_temp AS $$
DECLARE
  v_installations bigint[];
  v_scope         bigint[];
  v_sessions      integer := 0;
  v_tokens        integer := 0;
  v_gone          record;
BEGIN
  IF p_reason !~ '^[a-z_.]{1,64}$' THEN
    RAISE EXCEPTION 'access_invalid_reason' USING ERRCODE = '22023';
  END IF;
  v_installations := ARRAY(SELECT i.id FROM installations i
                            WHERE i.id = p_installation_id OR i.account_id = p_account_id);
  IF p_installation_id IS NOT NULL AND NOT p_installation_id = ANY (v_installations) THEN
    v_installations := v_installations || p_installation_id;
  END IF;
  v_scope := coalesce(p_repository_ids,
                      ARRAY(SELECT r.id FROM repositories r WHERE r.installation_id = ANY (v_installations)));
  FOR v_gone IN
    DELETE FROM sessions s
     WHERE (p_person_id IS NULL OR s.viewer_id = p_person_id)
       AND (s.repository_ids && v_scope OR (p_repository_ids IS NULL AND s.installation_ids && v_installations))
    RETURNING s.id, s.viewer_id
  LOOP
    v_sessions := v_sessions + 1;
    INSERT INTO audit_events (event_type, installation_id, actor, item_type, item_id, occurred_at, details)
    VALUES ('control_plane.session_ended', p_installation_id, 'system', 'session', v_gone.id::text, p_now,
            jsonb_build_object('reason', p_reason, 'personId', v_gone.viewer_id));
  END LOOP;
  FOR v_gone IN
    UPDATE api_tokens t SET revoked_at = p_now, revoked_reason = 'access_removed'
     WHERE t.revoked_at IS NULL AND t.person_id IS NOT NULL
       AND (p_person_id IS NULL OR t.person_id = p_person_id) AND t.repository_id = ANY (v_scope)
    RETURNING t.id, t.person_id, t.repository_id
  LOOP
    v_tokens := v_tokens + 1;
    INSERT INTO audit_events (event_type, installation_id, actor, item_type, item_id, occurred_at, details)
    SELECT 'control_plane.token_revoked', r.installation_id, 'system', 'api_token', v_gone.id::text, p_now,
           jsonb_build_object('reason', p_reason, 'personId', v_gone.person_id, 'repositoryId', v_gone.repository_id)
      FROM repositories r WHERE r.id = v_gone.repository_id;
  END LOOP;
  RETURN QUERY SELECT v_sessions, v_tokens;
END $$;

-- Whether an installation is suspended, as the code host says when asked
-- (app/web/membership.py reads it on each suspend or unsuspend delivery, so
-- the order deliveries arrive in does not matter). A suspended installation's
-- repositories are out of reach for every credential
-- (session_visible_repositories, repository_access_denial) until it is
-- unsuspended. A deleted installation stays deleted.
CREATE OR REPLACE FUNCTION boardready.installation_suspension_set(
  p_installation_id bigint, p_suspended boolean, p_now timestamptz DEFAULT now())
RETURNS TABLE (outcome text)
LANGUAGE sql ROWS 1 SECURITY DEFINER SET search_path = boardready, pg_temp AS $$
  WITH changed AS (
    UPDATE installations i SET status = CASE WHEN p_suspended THEN 'suspended' ELSE 'active' END, updated_at = p_now
     WHERE i.id = p_installation_id AND i.status IN ('active', 'suspended')
       AND i.status <> CASE WHEN p_suspended THEN 'suspended' ELSE 'active' END
    RETURNING 1)
  SELECT CASE WHEN EXISTS (SELECT FROM changed) THEN 'changed' ELSE 'unchanged' END
$$;

-- The repositories within a scope (p_repository_ids, else every repository of
-- the installation p_installation_id or of the account p_account_id's
-- installations) that a person's sessions or live tokens reach: the ones whose
-- permission app/web/membership.py re-reads from the code host when a
-- membership delivery says the person's rights may have changed.
CREATE OR REPLACE FUNCTION boardready.person_reach(
  p_person_id bigint, p_account_id bigint, p_installation_id bigint, p_repository_ids bigint[])
RETURNS TABLE (repository_id bigint, installation_id bigint, full_name text)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = boardready, pg_temp AS $$
  SELECT r.id, r.installation_id, r.full_name
    FROM repositories r JOIN installations i ON i.id = r.installation_id
   WHERE (r.id = ANY (p_repository_ids)
          OR (p_repository_ids IS NULL AND (i.id = p_installation_id OR i.account_id = p_account_id)))
     AND (EXISTS (SELECT FROM sessions s WHERE s.viewer_id = p_person_id AND r.id = ANY (s.repository_ids))
          OR EXISTS (SELECT FROM api_tokens t WHERE t.person_id = p_person_id AND t.repository_id = r.id
                       AND t.revoked_at IS NULL))
   ORDER BY r.id
$$;

-- The code host re-read a person's permission on one repository (p_role:
-- admin, write, read or none) after a membership delivery: every session of
-- theirs gets it (session_permission_replace, each with its own outcome; a
-- session left with nothing is ended). Their tokens are cut to it at each
-- change (app/web/authority.py) and revoked with access_removed on none.
CREATE OR REPLACE FUNCTION boardready.person_permission_replace(
  p_person_id bigint, p_repository_id bigint, p_role text, p_now timestamptz DEFAULT now())
RETURNS TABLE (sessions_updated integer, sessions_ended integer)
LANGUAGE plpgsql ROWS 1 SECURITY DEFINER SET search_path = boardready, pg_temp AS $$
DECLARE
  v_updated integer := 0;
  v_ended   integer := 0;
  v_session uuid;
  v_outcome text;
BEGIN
  FOR v_session IN
    SELECT s.id FROM sessions s WHERE s.viewer_id = p_person_id AND p_repository_id = ANY (s.repository_ids)
     ORDER BY s.id FOR UPDATE
  LOOP
    SELECT r.outcome INTO v_outcome FROM session_permission_replace(v_session, p_repository_id, p_role, p_now) r;
    IF v_outcome = 'ended' THEN
      v_ended := v_ended + 1;
    ELSIF v_outcome = 'updated' THEN
      v_updated := v_updated + 1;
    END IF;
  END LOOP;
  RETURN QUERY SELECT v_updated, v_ended;
END $$;

-- A repository's permissions changed on the code host for people the delivery
-- does not name (a team's access to it edited, added or removed): every session
-- reaching it has its rights read again before its next change, whatever
-- SERVICE_PERMISSION_TTL_SECONDS says (tokens minted by people are read again
-- before every change anyway).
CREATE OR REPLACE FUNCTION boardready.sessions_permissions_stale(p_repository_ids bigint[])
RETURNS TABLE (sessions_marked integer)
LANGUAGE sql ROWS 1 SECURITY DEFINER SET search_path = boardready, pg_temp AS $$
  WITH marked AS (
    UPDATE sessions s SET permissions_checked_at = NULL
     WHERE s.repository_ids && p_repository_ids AND s.permissions_checked_at IS NOT NULL
    RETURNING 1)
  SELECT count(*)::integer FROM marked
$$;

-- Legal holds, placed and released by an operator (app/web/legal_holds.py).
-- An active hold keeps everything of its account: retention skips it and an
-- erasure that comes due is blocked (retention.sql, erasure.sql).
--
-- Each change is one call, keyed by the operator's Idempotency-Key like a
-- replay (replay.sql): the same key for the same request answers the same
-- hold and audit event, the same key for another request is refused, and a
-- refusal records nothing. The audit events (control_plane.legal_hold_placed,
-- control_plane.legal_hold_released) carry ids only: the reason is operator
-- text and stays on the hold.

-- What an Idempotency-Key was used for, by its digest: same key, same request.
CREATE OR REPLACE FUNCTION boardready_private.legal_hold_request_digest(p_operation text, p_account_id bigint, p_detail jsonb)
RETURNS bytea LANGUAGE sql IMMUTABLE AS $$
  SELECT sha256(convert_to(jsonb_build_array(p_operation, p_account_id, p_detail)::text, 'UTF8'))
$$;

-- The key's earlier use, if any, once concurrent requests with it took turns.
CREATE OR REPLACE FUNCTION boardready_private.legal_hold_previous_request(p_idempotency_key text)
RETURNS boardready.legal_hold_requests LANGUAGE plpgsql AS $$
DECLARE
  v_previous boardready.legal_hold_requests;
BEGIN
  -- Requests with one key take turns, so a concurrent repeat waits for the
  -- first and then reads its row (the next statement takes a new snapshot).
  PERFORM pg_advisory_xact_lock(hashtextextended('boardready.legal_hold_request:' || p_idempotency_key, 0));
  SELECT * INTO v_previous FROM boardready.legal_hold_requests r WHERE r.idempotency_key = p_idempotency_key;
  RETURN v_previous;
END $$;

CREATE OR REPLACE FUNCTION boardready_private.legal_hold_check_request(p_idempotency_key text, p_actor text)
RETURNS void LANGUAGE sql IMMUTABLE AS $$
  SELECT boardready_private.refuse_if(p_idempotency_key !~ '^[\x21-\x7e]{1,200}$'
                              OR p_actor !~ '^operator:[A-Za-z0-9._:-]{1,200}$', 'legal_hold_invalid_request')
$$;

-- POST /api/v1/operator/accounts/{accountId}/legal-holds. Outcomes: placed,
-- already_applied (same key, same request: the same hold and audit event),
-- idempotency_key_reused, account_not_found.
CREATE OR REPLACE FUNCTION boardready.legal_hold_place(
  p_account_id      bigint,
  p_reason          text,
  p_reference       text,
  p_idempotency_key text,
  p_actor           text,
  p_now             timestamptz DEFAULT now())
RETURNS TABLE (outcome text, hold_id bigint, audit_event_id uuid, placed_at timestamptz)
LANGUAGE plpgsql ROWS 1 SECURITY DEFINER SET search_path = boardready, pg_temp AS $$
DECLARE
  v_digest   bytea := boardready_private.legal_hold_request_digest('place', p_account_id,
                                                jsonb_build_object('reason', p_reason, 'reference', p_reference));
  v_previous legal_hold_requests;
  v_hold     bigint;
  v_audit    uuid;
BEGIN
  PERFORM boardready_private.legal_hold_check_request(p_idempotency_key, p_actor);
  IF p_reason IS NULL OR length(p_reason) NOT BETWEEN 1 AND 1000
     OR (p_reference IS NOT NULL AND length(p_reference) NOT BETWEEN 1 AND 200) THEN
    RAISE EXCEPTION 'legal_hold_invalid_request' USING ERRCODE = '22023';
  END IF;

  v_previous := boardready_private.legal_hold_previous_request(p_idempotency_key);
  IF v_previous.idempotency_key IS NOT NULL THEN
    IF (v_previous.operation, v_previous.account_id, v_previous.request_sha256) = ('place', p_account_id, v_digest) THEN
      RETURN QUERY SELECT 'already_applied'::text, v_previous.hold_id, v_previous.audit_event_id,
                          (SELECT h.created_at FROM legal_holds h WHERE h.id = v_previous.hold_id);
    ELSE
      RETURN QUERY SELECT 'idempotency_key_reused'::text, NULL::bigint, NULL::uuid, NULL::timestamptz;
    END IF;
    RETURN;
  END IF;
  IF NOT EXISTS (SELECT 1 FROM accounts a WHERE a.id = p_account_id) THEN
    RETURN QUERY SELECT 'account_not_found'::text, NULL::bigint, NULL::uuid, NULL::timestamptz;
    RETURN;
  END IF;

  -- Wait for the retention batch and the erasure step in flight, so that
  -- once this commits, nothing the hold covers is deleted (they take these
  -- keys shared and per account, then decide what to delete).
  PERFORM pg_advisory_xact_lock(hashtextextended('boardready.legal_holds', 0));
  PERFORM pg_advisory_xact_lock(boardready_private.account_lock_key(p_account_id));

  INSERT INTO legal_holds (account_id, active, reason, reference, placed_by, created_at)
  VALUES (p_account_id, true, p_reason, p_reference, p_actor, p_now)
  RETURNING id INTO v_hold;
  -- The open erasure request says it is held; the erasure step records the
  -- block itself when the request comes due.
  UPDATE erasure_requests e SET blocked_by_legal_hold = true
   WHERE e.account_id = p_account_id AND e.status IN ('pending', 'erasing', 'blocked_legal_hold');
  INSERT INTO audit_events (event_type, installation_id, actor, operation_id, item_type, item_id, occurred_at, details)
  VALUES ('control_plane.legal_hold_placed', NULL, p_actor, 'legal_hold:' || v_hold, 'legal_hold', v_hold::text, p_now,
          jsonb_build_object('accountId', p_account_id, 'holdId', v_hold,
                             'activeHolds', (SELECT count(*) FROM legal_holds h
                                              WHERE h.account_id = p_account_id AND h.active)))
  RETURNING id INTO v_audit;
  INSERT INTO legal_hold_requests (idempotency_key, operation, account_id, hold_id, request_sha256, audit_event_id,
                                   created_at)
  VALUES (p_idempotency_key, 'place', p_account_id, v_hold, v_digest, v_audit, p_now);
  RETURN QUERY SELECT 'placed'::text, v_hold, v_audit, p_now;
END $$;

-- DELETE /api/v1/operator/accounts/{accountId}/legal-holds/{holdId}.
-- Outcomes: released, already_applied, idempotency_key_reused, not_found (no
-- such hold on this account), already_released (nothing changes, nothing is
-- recorded). When the last active hold goes, an erasure request it blocked is
-- due again (pending, or erasing if it had begun) and the sweep is woken.
CREATE OR REPLACE FUNCTION boardready.legal_hold_release(
  p_account_id      bigint,
  p_hold_id         bigint,
  p_idempotency_key text,
  p_actor           text,
  p_now             timestamptz DEFAULT now())
RETURNS TABLE (outcome text, hold_id bigint, audit_event_id uuid, released_at timestamptz,
               erasure_request_id bigint, erasure_resumed boolean)
LANGUAGE plpgsql ROWS 1 SECURITY DEFINER SET search_path = boardready, pg_temp AS $$
DECLARE
  v_digest   bytea := boardready_private.legal_hold_request_digest('release', p_account_id, to_jsonb(p_hold_id));
  v_previous legal_hold_requests;
  v_hold     legal_holds%ROWTYPE;
  v_request  erasure_requests%ROWTYPE;
  v_resumed  boolean := false;
  v_audit    uuid;
BEGIN
  PERFORM boardready_private.legal_hold_check_request(p_idempotency_key, p_actor);
  v_previous := boardready_private.legal_hold_previous_request(p_idempotency_key);
  IF v_previous.idempotency_key IS NOT NULL THEN
    IF (v_previous.operation, v_previous.account_id, v_previous.request_sha256) = ('release', p_account_id, v_digest)
    THEN
      RETURN QUERY SELECT 'already_applied'::text, v_previous.hold_id, v_previous.audit_event_id, h.released_at,
                          NULL::bigint, NULL::boolean
                     FROM legal_holds h WHERE h.id = v_previous.hold_id;
    ELSE
      RETURN QUERY SELECT 'idempotency_key_reused'::text, NULL::bigint, NULL::uuid, NULL::timestamptz,
                          NULL::bigint, NULL::boolean;
    END IF;
    RETURN;
  END IF;

  -- The erasure step of this account takes turns with the release.
  PERFORM pg_advisory_xact_lock(boardready_private.account_lock_key(p_account_id));
  SELECT * INTO v_hold FROM legal_holds h WHERE h.id = p_hold_id AND h.account_id = p_account_id FOR UPDATE;
  IF NOT FOUND THEN
    RETURN QUERY SELECT 'not_found'::text, NULL::bigint, NULL::uuid, NULL::timestamptz, NULL::bigint, NULL::boolean;
    RETURN;
  END IF;
  IF NOT v_hold.active THEN
    RETURN QUERY SELECT 'already_released'::text, v_hold.id, NULL::uuid, v_hold.released_at, NULL::bigint,
                        NULL::boolean;
    RETURN;
  END IF;

  UPDATE legal_holds SET active = false, released_at = p_now, released_by = p_actor WHERE id = v_hold.id;
  SELECT * INTO v_request FROM erasure_requests e
   WHERE e.account_id = p_account_id AND e.status IN ('pending', 'erasing', 'blocked_legal_hold') FOR UPDATE;
  IF v_request.id IS NOT NULL
     AND NOT EXISTS (SELECT 1 FROM legal_holds h WHERE h.account_id = p_account_id AND h.active) THEN
    v_resumed := v_request.status = 'blocked_legal_hold';
    UPDATE erasure_requests e
       SET status = CASE WHEN NOT v_resumed THEN e.status WHEN e.started_at IS NULL THEN 'pending' ELSE 'erasing' END,
           blocked_by_legal_hold = false
     WHERE e.id = v_request.id;
  END IF;
  INSERT INTO audit_events (event_type, installation_id, actor, operation_id, item_type, item_id, occurred_at, details)
  VALUES ('control_plane.legal_hold_released', NULL, p_actor, 'legal_hold:' || v_hold.id || ':release', 'legal_hold',
          v_hold.id::text, p_now,
          jsonb_build_object('accountId', p_account_id, 'holdId', v_hold.id, 'erasureRequestId', v_request.id,
                             'erasureResumed', v_resumed, 'activeHolds', (SELECT count(*) FROM legal_holds h
                                              WHERE h.account_id = p_account_id AND h.active)))
  RETURNING id INTO v_audit;
  INSERT INTO legal_hold_requests (idempotency_key, operation, account_id, hold_id, request_sha256, audit_event_id,
                                   created_at)
  VALUES (p_idempotency_key, 'release', p_account_id, v_hold.id, v_digest, v_audit, p_now);
  IF v_resumed THEN
    -- The request was due when it was blocked: wake the sweep. An operator
    -- action is rare, so the NOTIFY's cost at commit does not matter here.
    PERFORM pg_notify('retention_sweep', '');
  END IF;
  RETURN QUERY SELECT 'released'::text, v_hold.id, v_audit, p_now, v_request.id, v_resumed;
END $$;

-- For operators: every hold with who placed and released it. The reason is
-- the operator's own text (never tenant data).
CREATE OR REPLACE VIEW ops.legal_holds AS
SELECT h.id, h.account_id, a.login AS account, h.active, h.reason, h.reference, h.placed_by,
       h.created_at AS placed_at, h.released_by, h.released_at,
       (SELECT e.id FROM boardready.erasure_requests e
         WHERE e.account_id = h.account_id AND e.status IN ('pending', 'blocked_legal_hold', 'erasing'))
         AS open_erasure_request_id
  FROM boardready.legal_holds h JOIN boardready.accounts a ON a.id = h.account_id;

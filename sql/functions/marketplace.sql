-- Marketplace: apply a verified marketplace_purchase delivery to the account's
-- entitlement. Storing the delivery and every effect on the account (state,
-- token revocation, erasure request) is ONE data-modifying statement, so a
-- crash can never keep a delivery without its effect or the reverse.
--
-- Ordering is by the event's effective_date against the stored one:
--   purchased, not older           -> active (tier free). A purchase with the
--                                     same timestamp as a stored cancellation
--                                     cannot reopen it (cancellation_kept).
--   cancelled, newer or equal      -> canceled; the account's repository API
--                                     tokens are revoked and an erasure request
--                                     is queued (due effective_date + 30 days),
--                                     marked blocked when a legal hold is active;
--                                     a repeated cancellation moves the pending
--                                     request's deadline to the latest one.
--   older than the stored event    -> unchanged (stale), kept as evidence.
--   any other action               -> recorded, no entitlement (recorded).
-- A purchase strictly newer than a cancellation re-activates the account and
-- withdraws the open erasure request (status 'withdrawn', kept). Tokens
-- revoked by the cancellation stay revoked: revocation is permanent.

-- Whether a repository may be used through repository-scoped surfaces (API
-- tokens now, sessions and dashboards later). NULL means yes; otherwise the
-- stable reason it fails closed.
CREATE OR REPLACE FUNCTION boardready_private.repository_access_denial(p_repository_id bigint)
RETURNS text LANGUAGE sql STABLE SECURITY DEFINER SET search_path = boardready, pg_temp AS $$
  SELECT CASE
    WHEN r.id IS NULL THEN 'repository_not_found'
    WHEN m.state = 'canceled' THEN 'account_canceled'
    -- A suspended installation is out of reach for every credential until unsuspended.
    WHEN r.removed_at IS NOT NULL OR i.status IN ('deleted', 'suspended') THEN 'repository_removed'
  END
  FROM (SELECT p_repository_id AS id) want
  LEFT JOIN repositories r ON r.id = want.id
  LEFT JOIN installations i ON i.id = r.installation_id
  LEFT JOIN marketplace_accounts m ON m.account_id = i.account_id
$$;

-- Whether new lifecycle jobs for an installation are blocked (its account canceled).
CREATE OR REPLACE FUNCTION boardready_private.installation_account_canceled(p_installation_id bigint, p_account_id bigint)
RETURNS boolean LANGUAGE sql STABLE SECURITY DEFINER SET search_path = boardready, pg_temp AS $$
  SELECT EXISTS (
    SELECT 1 FROM marketplace_accounts m
     WHERE m.state = 'canceled'
       AND (m.account_id = p_account_id
            OR m.account_id = (SELECT i.account_id FROM installations i WHERE i.id = p_installation_id)))
$$;

CREATE OR REPLACE FUNCTION boardready.marketplace_apply_event(
  p_delivery_id     text,
  p_action          text,
  p_account_id      bigint,
  p_account_login   text,
  p_account_type    text,          -- 'Organization' or 'User'
  p_effective_date  timestamptz,
  p_payload_sha256  text,
  p_payload_bytes   integer,
  p_now             timestamptz DEFAULT now())
RETURNS TABLE (outcome text, account_state text, tokens_revoked integer, erasure_request_id bigint)
LANGUAGE plpgsql ROWS 1 SECURITY DEFINER SET search_path = boardready, pg_temp AS $$
BEGIN
  IF p_delivery_id !~ '^[A-Za-z0-9._:-]{1,200}$' OR p_action !~ '^[a-z_]{1,64}$'
     OR p_account_id IS NULL OR p_account_id <= 0 OR p_account_type NOT IN ('Organization', 'User')
     OR p_effective_date IS NULL OR p_account_login IS NULL THEN
    RAISE EXCEPTION 'marketplace_invalid_event' USING ERRCODE = '22023';
  END IF;

  -- Deliveries for one account take turns. This is not a write: it makes the
  -- statement below take its snapshot after any concurrent delivery for the
  -- same account has committed (READ COMMITTED takes one per statement), so
  -- the decision, the withdrawal of an erasure request queued a moment ago,
  -- and the revocations all see the latest state.
  PERFORM pg_advisory_xact_lock(hashtextextended('boardready.marketplace_account:' || p_account_id, 0));

  RETURN QUERY
  WITH stored AS (
    SELECT m.state, m.effective_date FROM marketplace_accounts m WHERE m.account_id = p_account_id
  ),
  decision AS (
    SELECT CASE
             WHEN p_action = 'purchased' THEN
               CASE WHEN s.state IS NULL OR p_effective_date > s.effective_date THEN 'applied'
                    WHEN p_effective_date = s.effective_date AND s.state = 'active' THEN 'applied'
                    WHEN p_effective_date = s.effective_date THEN 'cancellation_kept'
                    ELSE 'stale' END
             WHEN p_action = 'cancelled' THEN
               CASE WHEN s.state IS NULL OR p_effective_date >= s.effective_date THEN 'applied'
                    ELSE 'stale' END
             ELSE 'recorded'
           END AS outcome,
           CASE p_action WHEN 'purchased' THEN 'active' WHEN 'cancelled' THEN 'canceled' END AS next_state
      FROM (SELECT 1) one LEFT JOIN stored s ON true
  ),
  delivery AS (
    INSERT INTO marketplace_deliveries AS md (delivery_id, idempotency_key, action, account_id, effective_date,
                                              outcome, payload_sha256, payload_bytes, received_at)
    SELECT p_delivery_id, 'host-marketplace:' || p_delivery_id, p_action, p_account_id, p_effective_date,
           d.outcome, p_payload_sha256, p_payload_bytes, p_now
      FROM decision d
    ON CONFLICT (idempotency_key) DO NOTHING
    RETURNING md.id, md.outcome
  ),
  applied AS (
    SELECT d.next_state FROM decision d JOIN delivery ON delivery.outcome = 'applied'
  ),
  account AS (
    INSERT INTO accounts AS a (id, login, type, created_at, updated_at)
    SELECT p_account_id, p_account_login, p_account_type, p_now, p_now FROM applied
    ON CONFLICT (id) DO UPDATE SET login = EXCLUDED.login, type = EXCLUDED.type, updated_at = p_now
      WHERE (a.login, a.type) IS DISTINCT FROM (EXCLUDED.login, EXCLUDED.type)
    RETURNING a.id
  ),
  entitlement AS (
    INSERT INTO marketplace_accounts AS m (account_id, state, tier, effective_date, last_delivery_id,
                                           activated_at, canceled_at, created_at, updated_at)
    SELECT p_account_id, ap.next_state, 'free', p_effective_date, p_delivery_id,
           CASE WHEN ap.next_state = 'active' THEN p_now END,
           CASE WHEN ap.next_state = 'canceled' THEN p_now END, p_now, p_now
      FROM applied ap
    ON CONFLICT (account_id) DO UPDATE
       SET state = EXCLUDED.state, effective_date = EXCLUDED.effective_date,
           last_delivery_id = EXCLUDED.last_delivery_id,
           activated_at = coalesce(EXCLUDED.activated_at, m.activated_at),
           canceled_at = coalesce(EXCLUDED.canceled_at, m.canceled_at), updated_at = p_now
    RETURNING m.state
  ),
  revoked AS (
    UPDATE api_tokens t SET revoked_at = p_now, revoked_reason = 'account_canceled'
      FROM repositories r JOIN installations i ON i.id = r.installation_id, applied ap
     WHERE ap.next_state = 'canceled' AND t.repository_id = r.id AND i.account_id = p_account_id
       AND t.revoked_at IS NULL
    RETURNING t.id
  ),
  erasure AS (
    INSERT INTO erasure_requests (account_id, account_type, status, effective_date, due_at,
                                  blocked_by_legal_hold, requested_by_delivery, created_at)
    SELECT p_account_id, lower(p_account_type), 'pending', p_effective_date, p_effective_date + interval '30 days',
           EXISTS (SELECT 1 FROM legal_holds h WHERE h.account_id = p_account_id AND h.active),
           p_delivery_id, p_now
      FROM applied ap WHERE ap.next_state = 'canceled'
    -- One open request per account (pending, blocked by a legal hold, or being
    -- erased: erasure.sql). A repeated cancellation (newer or equal) moves its
    -- deadline to 30 days after the latest one, which is what any delivery
    -- order ends with (an older cancellation is stale).
    ON CONFLICT (account_id) WHERE status IN ('pending', 'blocked_legal_hold', 'erasing') DO UPDATE
       SET effective_date = EXCLUDED.effective_date, due_at = EXCLUDED.due_at,
           blocked_by_legal_hold = EXCLUDED.blocked_by_legal_hold,
           requested_by_delivery = EXCLUDED.requested_by_delivery
    RETURNING id
  ),
  withdrawn AS (
    UPDATE erasure_requests e SET status = 'withdrawn', withdrawn_at = p_now
      FROM applied ap
     WHERE ap.next_state = 'active' AND e.account_id = p_account_id
       AND e.status IN ('pending', 'blocked_legal_hold', 'erasing')
    RETURNING e.id
  )
  SELECT coalesce((SELECT delivery.outcome FROM delivery), 'duplicate'),
         coalesce((SELECT en.state FROM entitlement en), (SELECT s.state FROM stored s)),
         (SELECT count(*)::integer FROM revoked),
         coalesce((SELECT er.id FROM erasure er),
                  (SELECT e.id FROM erasure_requests e
                    WHERE e.account_id = p_account_id AND e.status IN ('pending', 'blocked_legal_hold', 'erasing')
                      AND EXISTS (SELECT 1 FROM applied ap WHERE ap.next_state = 'canceled')));
  -- A cancellation whose deadline has already passed is due now: wake the
  -- erasure sweep (workers/retention.py) instead of leaving it to the interval.
  IF p_action = 'cancelled' AND EXISTS (SELECT 1 FROM erasure_requests e WHERE e.account_id = p_account_id
                                           AND e.status = 'pending' AND e.due_at <= p_now) THEN
    PERFORM pg_notify('retention_sweep', '');
  END IF;
END $$;

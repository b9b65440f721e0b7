-- Component supply tracking (migration 0012): the BOM a run result carried,
-- the watched board (Community plan: one per installation account), part
-- lifecycle observations and their distributor classification, the
-- component provider's call budget and circuit breaker per installation, and
-- the supply checks that add `supply.*` findings to pull request runs.
--
-- Every replica sees one budget and one breaker: both are rows here, changed
-- only under a row lock by the functions below.

-- Parts are keyed by normalized manufacturer + MPN: case, spaces and
-- punctuation of the manufacturer do not count, nor spaces in the MPN.
CREATE OR REPLACE FUNCTION boardready_private.supply_part_key(p_manufacturer text, p_mpn text)
RETURNS text LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE WHEN nullif(btrim(coalesce(p_mpn, '')), '') IS NULL THEN NULL
              ELSE lower(regexp_replace(coalesce(p_manufacturer, ''), '[^[:alnum:]]', '', 'g')) || ':'
                   || upper(regexp_replace(p_mpn, '\s', '', 'g')) END
$$;

-- Store a run result's `bom` section (validated at the edge against the contract).
CREATE OR REPLACE FUNCTION boardready_private.run_bom_store(p_run_result_id bigint, p_bom jsonb)
RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
  v_count integer;
BEGIN
  IF p_bom IS NULL OR jsonb_typeof(p_bom) <> 'array' THEN
    RETURN 0;
  END IF;
  INSERT INTO boardready.run_bom_lines (run_result_id, ordinal, project, refs, quantity, value, footprint,
                                        manufacturer, mpn, dnp, part_key, path, line)
  SELECT p_run_result_id, b.ordinal, b.v ->> 'project',
         ARRAY(SELECT jsonb_array_elements_text(b.v -> 'references')), (b.v ->> 'quantity')::integer,
         b.v ->> 'value', b.v ->> 'footprint', b.v ->> 'manufacturer', b.v ->> 'mpn',
         coalesce((b.v ->> 'dnp')::boolean, false),
         boardready_private.supply_part_key(b.v ->> 'manufacturer', b.v ->> 'mpn'), b.v ->> 'path', (b.v ->> 'line')::integer
    FROM jsonb_array_elements(p_bom) WITH ORDINALITY AS b (v, ordinal);
  GET DIAGNOSTICS v_count = ROW_COUNT;
  RETURN v_count;
END $$;

-- ---------------------------------------------------------------------------
-- Classification (the spec's Component supply data), from the provider's
-- sellers of the matched part: [{isAuthorized, offers: [{inventoryLevel,
-- prices: [{quantity, price, currency}]}]}].
--   authorized-distributor  any seller is authorized
--   marketplace             sellers exist and every one says it is not authorized
--   unknown                 no seller data, or a seller without an authorization signal
CREATE OR REPLACE FUNCTION boardready_private.supply_distributor_classification(p_sellers jsonb)
RETURNS text LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE
    WHEN p_sellers IS NULL OR jsonb_typeof(p_sellers) <> 'array' OR jsonb_array_length(p_sellers) = 0 THEN 'unknown'
    WHEN EXISTS (SELECT 1 FROM jsonb_array_elements(p_sellers) s WHERE s -> 'isAuthorized' = 'true'::jsonb)
      THEN 'authorized-distributor'
    WHEN NOT EXISTS (SELECT 1 FROM jsonb_array_elements(p_sellers) s
                      WHERE jsonb_typeof(s) <> 'object' OR jsonb_typeof(s -> 'isAuthorized') IS DISTINCT FROM 'boolean')
      THEN 'marketplace'
    ELSE 'unknown'
  END
$$;

-- Price breaks [{quantity, price, currency}] of one offer: an authorized
-- seller's when the part has one with prices, else any seller's; the offer
-- with the most price points (ties: the provider's order).
CREATE OR REPLACE FUNCTION boardready_private.supply_price_breaks(p_sellers jsonb)
RETURNS jsonb LANGUAGE sql IMMUTABLE AS $$
  WITH offers AS (
    SELECT s.ordinality AS seller_order, o.ordinality AS offer_order,
           coalesce(s.value -> 'isAuthorized' = 'true'::jsonb, false) AS authorized, o.value -> 'prices' AS prices
      FROM jsonb_array_elements(CASE WHEN jsonb_typeof(p_sellers) = 'array' THEN p_sellers ELSE '[]' END)
           WITH ORDINALITY s
     CROSS JOIN LATERAL jsonb_array_elements(CASE WHEN jsonb_typeof(s.value -> 'offers') = 'array'
                                                  THEN s.value -> 'offers' ELSE '[]' END) WITH ORDINALITY o
     WHERE jsonb_typeof(o.value -> 'prices') = 'array' AND jsonb_array_length(o.value -> 'prices') > 0
  ), chosen AS (
    SELECT prices FROM offers
     ORDER BY authorized DESC, jsonb_array_length(prices) DESC, seller_order, offer_order LIMIT 1
  )
  SELECT coalesce((SELECT jsonb_agg(jsonb_build_object('quantity', (p ->> 'quantity')::bigint,
                                                       'price', (p ->> 'price')::numeric,
                                                       'currency', p ->> 'currency')
                                    ORDER BY p ->> 'currency', (p ->> 'quantity')::bigint)
                     FROM chosen, jsonb_array_elements(chosen.prices) p
                    WHERE jsonb_typeof(p -> 'quantity') = 'number' AND jsonb_typeof(p -> 'price') = 'number'
                      AND p ->> 'currency' ~ '^[A-Z]{3}$'), '[]'::jsonb)
$$;

-- The provider's homogenized lifecycle value ("Production (Last Updated: ...)",
-- "NRND", "EOL", "Obsolete", "New"), normalized.
CREATE OR REPLACE FUNCTION boardready_private.supply_lifecycle_status(p_display text)
RETURNS text LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE lower(split_part(btrim(coalesce(p_display, '')), ' ', 1))
    WHEN 'production' THEN 'production' WHEN 'new' THEN 'new' WHEN 'nrnd' THEN 'nrnd'
    WHEN 'eol' THEN 'eol' WHEN 'obsolete' THEN 'obsolete' ELSE 'unknown' END
$$;

-- A JSON array, or an empty one for anything else (JSON null included).
CREATE OR REPLACE FUNCTION boardready_private.supply_array(p_value jsonb)
RETURNS jsonb LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE WHEN jsonb_typeof(p_value) = 'array' THEN p_value ELSE '[]'::jsonb END
$$;

-- One observation per part of one fetch. p_parts: [{partKey, manufacturer,
-- mpn, matched, providerPartId, lifecycle, sellers}] as the client parsed them.
CREATE OR REPLACE FUNCTION boardready.supply_observations_record(
  p_installation_id bigint, p_parts jsonb, p_now timestamptz DEFAULT now())
RETURNS integer LANGUAGE plpgsql SECURITY DEFINER SET search_path = boardready, pg_temp AS $$
DECLARE
  v_count integer;
BEGIN
  INSERT INTO part_lifecycle_observations (part_key, manufacturer, mpn, matched, provider_part_id, lifecycle_status,
                                           distributor_classification, price_breaks, stock, authorized_stock,
                                           installation_id, fetched_at)
  SELECT p ->> 'partKey', p ->> 'manufacturer', p ->> 'mpn', coalesce((p ->> 'matched')::boolean, false),
         p ->> 'providerPartId', boardready_private.supply_lifecycle_status(p ->> 'lifecycle'),
         boardready_private.supply_distributor_classification(p -> 'sellers'), boardready_private.supply_price_breaks(p -> 'sellers'),
         (SELECT sum((o ->> 'inventoryLevel')::bigint) FROM jsonb_array_elements(boardready_private.supply_array(p -> 'sellers')) s,
                 jsonb_array_elements(boardready_private.supply_array(s -> 'offers')) o
           WHERE jsonb_typeof(o -> 'inventoryLevel') = 'number'),
         (SELECT coalesce(sum((o ->> 'inventoryLevel')::bigint), 0)
            FROM jsonb_array_elements(boardready_private.supply_array(p -> 'sellers')) s,
                 jsonb_array_elements(boardready_private.supply_array(s -> 'offers')) o
           WHERE s -> 'isAuthorized' = 'true'::jsonb AND jsonb_typeof(o -> 'inventoryLevel') = 'number'),
         p_installation_id, p_now
    FROM jsonb_array_elements(p_parts) p
   WHERE p ->> 'partKey' IS NOT NULL AND p ->> 'mpn' IS NOT NULL;
  GET DIAGNOSTICS v_count = ROW_COUNT;
  RETURN v_count;
END $$;

-- ---------------------------------------------------------------------------
-- The provider budget and breaker. A caller asks before every provider call
-- and reports its outcome after; both are one transaction on the breaker row.
--   allowed          closed: call (counted against the minute's budget)
--   trial            half-open: this caller makes the one trial call (token)
--   rate_limited     the minute's budget is spent: wait retry_after_ms
--   breaker_open     open and cooling down: wait retry_after_ms, or give up
--   trial_in_flight  half-open and another caller holds the trial: wait
CREATE OR REPLACE FUNCTION boardready_private.component_provider_window(p_now timestamptz)
RETURNS timestamptz LANGUAGE sql IMMUTABLE AS $$
  SELECT date_bin(interval '1 minute', p_now, timestamptz '2000-01-01 00:00:00+00')
$$;

CREATE OR REPLACE FUNCTION boardready_private.component_provider_transition(
  p_installation_id bigint, p_from text, p_to text, p_reason text, p_failures integer, p_now timestamptz)
RETURNS void LANGUAGE sql AS $$
  INSERT INTO boardready.component_provider_breaker_transitions
    (installation_id, from_state, to_state, reason, failures, occurred_at)
  VALUES (p_installation_id, p_from, p_to, p_reason, p_failures, p_now)
$$;

CREATE OR REPLACE FUNCTION boardready.component_provider_acquire(
  p_installation_id bigint, p_limit_per_minute integer, p_cooldown_ms integer,
  p_trial_lease_ms integer DEFAULT 60000, p_now timestamptz DEFAULT now())
RETURNS TABLE (outcome text, trial_token uuid, retry_after_ms integer, breaker_state text)
LANGUAGE plpgsql ROWS 1 SECURITY DEFINER SET search_path = boardready, pg_temp AS $$
DECLARE
  v_breaker component_provider_breakers%ROWTYPE;
  v_calls   integer;
  v_token   uuid;
BEGIN
  INSERT INTO component_provider_breakers (installation_id, state, updated_at)
  VALUES (p_installation_id, 'closed', p_now) ON CONFLICT (installation_id) DO NOTHING;
  SELECT * INTO v_breaker FROM component_provider_breakers WHERE installation_id = p_installation_id FOR UPDATE;

  IF v_breaker.state = 'open' AND v_breaker.opened_at + make_interval(secs => p_cooldown_ms / 1000.0) <= p_now THEN
    UPDATE component_provider_breakers SET state = 'half-open', trial_token = NULL, trial_until = NULL,
           updated_at = p_now WHERE installation_id = p_installation_id;
    PERFORM boardready_private.component_provider_transition(p_installation_id, 'open', 'half-open', 'cooldown_elapsed',
                                          v_breaker.consecutive_failures, p_now);
    v_breaker.state := 'half-open';
    v_breaker.trial_token := NULL;
  END IF;
  IF v_breaker.state = 'open' THEN
    RETURN QUERY SELECT 'breaker_open'::text, NULL::uuid,
      greatest(1, ceil(extract(epoch FROM v_breaker.opened_at + make_interval(secs => p_cooldown_ms / 1000.0)
                                          - p_now) * 1000))::integer, 'open'::text;
    RETURN;
  END IF;
  IF v_breaker.state = 'half-open' AND v_breaker.trial_token IS NOT NULL AND v_breaker.trial_until > p_now THEN
    RETURN QUERY SELECT 'trial_in_flight'::text, NULL::uuid,
      greatest(1, least(1000, ceil(extract(epoch FROM v_breaker.trial_until - p_now) * 1000)))::integer,
      'half-open'::text;
    RETURN;
  END IF;

  SELECT c.calls INTO v_calls FROM component_provider_calls c
   WHERE c.installation_id = p_installation_id AND c.window_start = boardready_private.component_provider_window(p_now);
  IF coalesce(v_calls, 0) >= p_limit_per_minute THEN
    RETURN QUERY SELECT 'rate_limited'::text, NULL::uuid,
      greatest(1, ceil(extract(epoch FROM boardready_private.component_provider_window(p_now) + interval '1 minute' - p_now) * 1000))::integer,
      v_breaker.state;
    RETURN;
  END IF;
  -- Ended windows are never read again; each call sweeps a few.
  DELETE FROM component_provider_calls c
   WHERE c.ctid IN (SELECT x.ctid FROM component_provider_calls x
                     WHERE x.window_start < boardready_private.component_provider_window(p_now) - interval '5 minutes' LIMIT 100);
  INSERT INTO component_provider_calls AS c (installation_id, window_start, calls)
  VALUES (p_installation_id, boardready_private.component_provider_window(p_now), 1)
  ON CONFLICT (installation_id, window_start) DO UPDATE SET calls = c.calls + 1;

  IF v_breaker.state = 'half-open' THEN
    v_token := gen_random_uuid();
    UPDATE component_provider_breakers
       SET trial_token = v_token, trial_until = p_now + make_interval(secs => p_trial_lease_ms / 1000.0),
           updated_at = p_now
     WHERE installation_id = p_installation_id;
    RETURN QUERY SELECT 'trial'::text, v_token, 0, 'half-open'::text;
    RETURN;
  END IF;
  RETURN QUERY SELECT 'allowed'::text, NULL::uuid, 0, 'closed'::text;
END $$;

-- The outcome of a call acquire allowed. In half-open only the trial's
-- outcome counts; late outcomes of calls made before the breaker opened
-- change nothing while it is open.
CREATE OR REPLACE FUNCTION boardready.component_provider_record(
  p_installation_id bigint, p_success boolean, p_trial_token uuid, p_threshold integer,
  p_now timestamptz DEFAULT now())
RETURNS TABLE (breaker_state text, transitioned boolean)
LANGUAGE plpgsql ROWS 1 SECURITY DEFINER SET search_path = boardready, pg_temp AS $$
DECLARE
  v_breaker component_provider_breakers%ROWTYPE;
BEGIN
  SELECT * INTO v_breaker FROM component_provider_breakers WHERE installation_id = p_installation_id FOR UPDATE;
  IF NOT FOUND THEN
    RETURN QUERY SELECT 'closed'::text, false;
    RETURN;
  END IF;
  IF v_breaker.state = 'half-open' THEN
    IF p_trial_token IS NULL OR v_breaker.trial_token IS DISTINCT FROM p_trial_token THEN
      RETURN QUERY SELECT v_breaker.state, false;
      RETURN;
    END IF;
    IF p_success THEN
      UPDATE component_provider_breakers SET state = 'closed', consecutive_failures = 0, opened_at = NULL,
             trial_token = NULL, trial_until = NULL, updated_at = p_now WHERE installation_id = p_installation_id;
      PERFORM boardready_private.component_provider_transition(p_installation_id, 'half-open', 'closed', 'trial_succeeded', 0, p_now);
      RETURN QUERY SELECT 'closed'::text, true;
    ELSE
      UPDATE component_provider_breakers SET state = 'open', consecutive_failures = consecutive_failures + 1,
             opened_at = p_now, trial_token = NULL, trial_until = NULL, updated_at = p_now
       WHERE installation_id = p_installation_id;
      PERFORM boardready_private.component_provider_transition(p_installation_id, 'half-open', 'open', 'trial_failed',
                                            v_breaker.consecutive_failures + 1, p_now);
      RETURN QUERY SELECT 'open'::text, true;
    END IF;
    RETURN;
  END IF;
  IF v_breaker.state = 'open' THEN
    RETURN QUERY SELECT 'open'::text, false;
    RETURN;
  END IF;
  IF p_success THEN
    UPDATE component_provider_breakers SET consecutive_failures = 0, updated_at = p_now
     WHERE installation_id = p_installation_id AND consecutive_failures <> 0;
    RETURN QUERY SELECT 'closed'::text, false;
  ELSIF v_breaker.consecutive_failures + 1 >= p_threshold THEN
    UPDATE component_provider_breakers SET state = 'open', consecutive_failures = consecutive_failures + 1,
           opened_at = p_now, updated_at = p_now WHERE installation_id = p_installation_id;
    PERFORM boardready_private.component_provider_transition(p_installation_id, 'closed', 'open', 'failure_threshold',
                                          v_breaker.consecutive_failures + 1, p_now);
    RETURN QUERY SELECT 'open'::text, true;
  ELSE
    UPDATE component_provider_breakers SET consecutive_failures = consecutive_failures + 1, updated_at = p_now
     WHERE installation_id = p_installation_id;
    RETURN QUERY SELECT 'closed'::text, false;
  END IF;
END $$;

-- ---------------------------------------------------------------------------
-- The watched board.

-- A canceled account's boards are unwatched (the account's surfaces fail closed).
CREATE OR REPLACE FUNCTION boardready_private.watched_boards_unwatch_canceled(p_now timestamptz)
RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
  v_count integer;
BEGIN
  UPDATE boardready.watched_boards b SET unwatched_at = p_now, unwatch_reason = 'account_canceled'
    FROM boardready.installations i JOIN boardready.marketplace_accounts m ON m.account_id = i.account_id
   WHERE b.unwatched_at IS NULL AND i.id = b.installation_id AND m.state = 'canceled';
  GET DIAGNOSTICS v_count = ROW_COUNT;
  RETURN v_count;
END $$;

-- Outcomes: watched, unchanged (the same path again), repository_not_found,
-- account_canceled, plan_limit_watched_boards (another repository of the
-- installation's account has the board). Watching another path of the same
-- repository moves the board (watched).
CREATE OR REPLACE FUNCTION boardready.watched_board_watch(
  p_repository_id bigint, p_path text, p_actor text, p_now timestamptz DEFAULT now())
RETURNS TABLE (outcome text, board_id bigint, path text, created_at timestamptz)
LANGUAGE plpgsql ROWS 1 SECURITY DEFINER SET search_path = boardready, pg_temp AS $$
DECLARE
  v_repo     repositories%ROWTYPE;
  v_account  bigint;
  v_existing watched_boards%ROWTYPE;
  v_id       bigint;
BEGIN
  SELECT * INTO v_repo FROM repositories r WHERE r.id = p_repository_id AND r.removed_at IS NULL;
  IF NOT FOUND THEN
    RETURN QUERY SELECT 'repository_not_found'::text, NULL::bigint, NULL::text, NULL::timestamptz;
    RETURN;
  END IF;
  -- One decision per account at a time: concurrent watches of two repositories queue here.
  SELECT i.account_id INTO v_account FROM installations i WHERE i.id = v_repo.installation_id FOR UPDATE;
  IF v_account IS NOT NULL THEN
    PERFORM 1 FROM accounts a WHERE a.id = v_account FOR UPDATE;
    IF EXISTS (SELECT 1 FROM marketplace_accounts m WHERE m.account_id = v_account AND m.state = 'canceled') THEN
      PERFORM boardready_private.watched_boards_unwatch_canceled(p_now);
      RETURN QUERY SELECT 'account_canceled'::text, NULL::bigint, NULL::text, NULL::timestamptz;
      RETURN;
    END IF;
  END IF;
  IF EXISTS (SELECT 1 FROM watched_boards b JOIN installations i ON i.id = b.installation_id
              WHERE b.unwatched_at IS NULL AND b.repository_id <> p_repository_id
                AND (i.id = v_repo.installation_id OR (v_account IS NOT NULL AND i.account_id = v_account))) THEN
    RETURN QUERY SELECT 'plan_limit_watched_boards'::text, NULL::bigint, NULL::text, NULL::timestamptz;
    RETURN;
  END IF;
  SELECT * INTO v_existing FROM watched_boards b WHERE b.repository_id = p_repository_id AND b.unwatched_at IS NULL;
  IF FOUND AND v_existing.path = p_path THEN
    RETURN QUERY SELECT 'unchanged'::text, v_existing.id, v_existing.path, v_existing.created_at;
    RETURN;
  END IF;
  IF FOUND THEN
    UPDATE watched_boards SET unwatched_at = p_now, unwatch_reason = 'deleted' WHERE id = v_existing.id;
  END IF;
  INSERT INTO watched_boards (installation_id, repository_id, path, created_by, created_at, refresh_after)
  VALUES (v_repo.installation_id, p_repository_id, p_path, p_actor, p_now, p_now)
  RETURNING id INTO v_id;
  INSERT INTO audit_events (event_type, installation_id, actor, operation_id, item_type, item_id, occurred_at, details)
  VALUES ('supply.board_watched', v_repo.installation_id, p_actor, 'watch:' || v_id, 'repository',
          p_repository_id::text, p_now, jsonb_build_object('boardId', v_id));
  PERFORM pg_notify('boardready_supply', '');
  RETURN QUERY SELECT 'watched'::text, v_id, p_path, p_now;
END $$;

CREATE OR REPLACE FUNCTION boardready.watched_board_unwatch(
  p_repository_id bigint, p_actor text, p_now timestamptz DEFAULT now())
RETURNS TABLE (outcome text, board_id bigint)
LANGUAGE plpgsql ROWS 1 SECURITY DEFINER SET search_path = boardready, pg_temp AS $$
DECLARE
  v_board watched_boards%ROWTYPE;
BEGIN
  UPDATE watched_boards b SET unwatched_at = p_now, unwatch_reason = 'deleted'
   WHERE b.repository_id = p_repository_id AND b.unwatched_at IS NULL
  RETURNING * INTO v_board;
  IF NOT FOUND THEN
    RETURN QUERY SELECT 'not_watched'::text, NULL::bigint;
    RETURN;
  END IF;
  INSERT INTO audit_events (event_type, installation_id, actor, operation_id, item_type, item_id, occurred_at, details)
  VALUES ('supply.board_unwatched', v_board.installation_id, p_actor, 'unwatch:' || v_board.id, 'repository',
          p_repository_id::text, p_now, jsonb_build_object('boardId', v_board.id));
  RETURN QUERY SELECT 'unwatched'::text, v_board.id;
END $$;

-- The run result whose BOM is the board's: the latest default-branch run
-- (a result without a release run, triggered by push, schedule or release)
-- that carried lines of the board's project, else the latest pull request
-- run's until one exists. p_before excludes newer results (a pull request
-- run compares with what came before it).
CREATE OR REPLACE FUNCTION boardready_private.watched_board_bom_run(p_board_id bigint, p_exclude bigint DEFAULT NULL)
RETURNS bigint LANGUAGE sql STABLE AS $$
  SELECT r.id FROM boardready.watched_boards b
    JOIN boardready.run_results r ON r.repository_id = b.repository_id AND r.superseded_at IS NULL
   WHERE b.id = p_board_id AND r.id IS DISTINCT FROM p_exclude
     AND EXISTS (SELECT 1 FROM boardready.run_bom_lines l
                  WHERE l.run_result_id = r.id AND (l.project IS NULL OR l.project = b.path))
   ORDER BY (r.release_run_id IS NULL AND r.trigger_kind IN ('push', 'schedule', 'release')) DESC, r.id DESC
   LIMIT 1
$$;

CREATE OR REPLACE FUNCTION boardready.watched_board_get(p_repository_id bigint, p_now timestamptz DEFAULT now())
RETURNS TABLE (outcome text, board_id bigint, path text, created_at timestamptz, created_by text,
               refreshed_at timestamptz, bom_run_result_id bigint)
LANGUAGE plpgsql ROWS 1 SECURITY DEFINER SET search_path = boardready, pg_temp AS $$
BEGIN
  PERFORM boardready_private.watched_boards_unwatch_canceled(p_now);
  RETURN QUERY
  SELECT 'found'::text, b.id, b.path, b.created_at, b.created_by, b.refreshed_at, boardready_private.watched_board_bom_run(b.id)
    FROM watched_boards b WHERE b.repository_id = p_repository_id AND b.unwatched_at IS NULL;
  IF NOT FOUND THEN
    RETURN QUERY SELECT 'not_watched'::text, NULL::bigint, NULL::text, NULL::timestamptz, NULL::text,
                        NULL::timestamptz, NULL::bigint;
  END IF;
END $$;

-- A page of the board's BOM lines (GET .../supply): those of p_bom_run_id, the
-- run watched_board_get named, in the checker's order after p_after_ordinal,
-- each with its part's latest observation. A keyset page on the lines' primary
-- key; no offset. (Dropped first: it grew the ordinal and the paging.)
CREATE OR REPLACE FUNCTION boardready.watched_board_supply(
  p_board_id bigint, p_bom_run_id bigint, p_after_ordinal integer, p_limit integer)
RETURNS TABLE (ordinal integer, refs text[], quantity integer, value text, footprint text, manufacturer text,
               mpn text, dnp boolean, part_key text, observed boolean, matched boolean, provider_part_id text,
               lifecycle_status text, distributor_classification text, price_breaks jsonb, stock bigint,
               authorized_stock bigint, fetched_at timestamptz)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = boardready, pg_temp AS $$
  SELECT l.ordinal, l.refs, l.quantity, l.value, l.footprint, l.manufacturer, l.mpn, l.dnp, l.part_key,
         o.id IS NOT NULL, o.matched, o.provider_part_id, o.lifecycle_status, o.distributor_classification,
         o.price_breaks, o.stock, o.authorized_stock, o.fetched_at
    FROM watched_boards b
    JOIN run_results r ON r.id = p_bom_run_id AND r.repository_id = b.repository_id
    JOIN run_bom_lines l ON l.run_result_id = r.id AND l.ordinal > coalesce(p_after_ordinal, 0)
                        AND (l.project IS NULL OR l.project = b.path)
    LEFT JOIN LATERAL (SELECT * FROM part_lifecycle_observations x WHERE x.part_key = l.part_key
                        ORDER BY x.fetched_at DESC, x.id DESC LIMIT 1) o ON true
   WHERE b.id = p_board_id
   ORDER BY l.ordinal
   LIMIT p_limit
$$;

-- ---------------------------------------------------------------------------
-- Supply checks of pull request runs.

-- Called by release_result_accept: a pull request run of a watched board's
-- repository whose result carried the board's BOM gets a supply check, and
-- its check run completion and comment wait for it (at most p_hold_seconds:
-- an outage of the provider or of the worker never blocks the decision).
CREATE OR REPLACE FUNCTION boardready_private.supply_check_open(
  p_run_result_id bigint, p_now timestamptz, p_hold_seconds integer DEFAULT 120)
RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE
  v_result boardready.run_results%ROWTYPE;
  v_board  boardready.watched_boards%ROWTYPE;
BEGIN
  SELECT * INTO v_result FROM boardready.run_results WHERE id = p_run_result_id;
  IF v_result.release_run_id IS NULL THEN
    RETURN false;
  END IF;
  PERFORM boardready_private.watched_boards_unwatch_canceled(p_now);
  SELECT * INTO v_board FROM boardready.watched_boards b
   WHERE b.repository_id = v_result.repository_id AND b.unwatched_at IS NULL;
  IF NOT FOUND OR NOT EXISTS (SELECT 1 FROM boardready.run_bom_lines l
                               WHERE l.run_result_id = p_run_result_id AND l.part_key IS NOT NULL
                                 AND (l.project IS NULL OR l.project = v_board.path)) THEN
    RETURN false;
  END IF;
  INSERT INTO boardready.supply_checks (run_result_id, release_run_id, installation_id, watched_board_id, status,
                                        run_after, hold_until, created_at)
  VALUES (p_run_result_id, v_result.release_run_id, v_board.installation_id, v_board.id, 'pending', p_now,
          p_now + make_interval(secs => p_hold_seconds), p_now)
  ON CONFLICT (run_result_id) DO NOTHING;
  INSERT INTO boardready.work_items (kind, subject_id, installation_id, status, run_after, created_at, updated_at)
  VALUES ('supply_check', p_run_result_id, v_board.installation_id, 'accepted', p_now, p_now, p_now)
  ON CONFLICT (kind, subject_id) WHERE status IN ('accepted', 'leased') AND idempotency_key IS NULL DO NOTHING;
  UPDATE boardready.work_items SET run_after = p_now + make_interval(secs => p_hold_seconds), updated_at = p_now
   WHERE run_result_id = p_run_result_id AND status = 'accepted' AND kind IN ('check_run_complete', 'pr_comment');
  PERFORM pg_notify('boardready_supply', '');
  RETURN true;
END $$;

-- Supply work is work_items (0020): a pull request's supply check
-- (supply_check, opened by supply_check_open) and a watched board's refresh
-- (board_refresh, enqueued by the board_refresh schedule). queue.sql.j2's rules
-- lease it (work_claim), renew it, fail it with backoff into dead letters
-- (work_fail) and replay it (item type `supply`).

-- The watched boards due for their refresh become work items; a board whose
-- last refresh item was dead-lettered since it became due waits for the
-- operator's replay instead of failing again. Returns the items made.
CREATE OR REPLACE FUNCTION boardready.supply_boards_enqueue(p_now timestamptz DEFAULT now())
RETURNS integer
LANGUAGE plpgsql SECURITY DEFINER SET search_path = boardready, pg_temp AS $$
DECLARE
  v_made integer;
BEGIN
  PERFORM boardready_private.watched_boards_unwatch_canceled(p_now);
  INSERT INTO work_items (kind, subject_id, installation_id, status, run_after, created_at, updated_at)
  SELECT 'board_refresh', b.id, b.installation_id, 'accepted', b.refresh_after, p_now, p_now
    FROM watched_boards b
   WHERE b.unwatched_at IS NULL AND b.refresh_after <= p_now
     AND NOT EXISTS (SELECT 1 FROM work_items w WHERE w.kind = 'board_refresh' AND w.subject_id = b.id
                        AND w.status = 'dead_letter' AND w.failed_at >= b.refresh_after)
  ON CONFLICT (kind, subject_id) WHERE status IN ('accepted', 'leased') AND idempotency_key IS NULL DO NOTHING;
  GET DIAGNOSTICS v_made = ROW_COUNT;
  RETURN v_made;
END $$;

-- The parts one supply work item fetches: [{partKey, manufacturer, mpn}]
-- without an observation fresher than p_max_age_hours.
CREATE OR REPLACE FUNCTION boardready_private.supply_work_parts(
  p_kind text, p_subject_id bigint, p_max_age_hours integer, p_now timestamptz)
RETURNS jsonb LANGUAGE sql STABLE AS $$
  SELECT CASE p_kind
    WHEN 'supply_check' THEN boardready_private.supply_parts_to_fetch(p_subject_id, NULL, p_max_age_hours, p_now)
    ELSE (SELECT boardready_private.supply_parts_to_fetch(boardready_private.watched_board_bom_run(b.id), b.path, p_max_age_hours,
                                                  p_now)
            FROM boardready.watched_boards b WHERE b.id = p_subject_id)
  END
$$;

-- Claim supply work (checks first: a pull request waits for them) with what
-- each item fetches.
CREATE OR REPLACE FUNCTION boardready.supply_work_claim_v2(
  p_worker text, p_limit integer, p_lease_seconds integer, p_max_attempts integer, p_max_age_hours integer,
  p_now timestamptz DEFAULT now())
RETURNS TABLE (item_id bigint, lease_token uuid, kind text, subject_id bigint, installation_id bigint,
               attempts integer, parts jsonb)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = boardready, pg_temp AS $$
DECLARE
  v_claimed queue_claimed[] := boardready_private.work_lease_due(ARRAY['supply_check'], p_worker, p_limit, p_lease_seconds,
                                              p_max_attempts, p_now);
BEGIN
  IF cardinality(v_claimed) < p_limit THEN
    v_claimed := v_claimed || boardready_private.work_lease_due(ARRAY['board_refresh'], p_worker, p_limit - cardinality(v_claimed),
                                             p_lease_seconds, p_max_attempts, p_now);
  END IF;
  -- A statement of its own, so its snapshot sees every row the claim took.
  RETURN QUERY
  SELECT w.id, c.lease_token, w.kind, w.subject_id, w.installation_id, c.attempts,
         coalesce(boardready_private.supply_work_parts(w.kind, w.subject_id, p_max_age_hours, p_now), '[]'::jsonb)
    FROM unnest(v_claimed) WITH ORDINALITY AS c (id, lease_token, attempts, ordinal)
    JOIN work_items w ON w.id = c.id
   ORDER BY c.ordinal;
END $$;

-- A leased supply item's work is done, in one transaction with its lease
-- checked: a check's findings are applied (p_unavailable_reason: parts whose
-- data could not be had), a board's refresh recorded (p_refreshed false: it
-- could not be, and comes back at p_next_after). Outcomes: completed,
-- unavailable, refreshed, not_refreshed, not_pending, lease_lost.
CREATE OR REPLACE FUNCTION boardready.supply_work_complete(
  p_item_id bigint, p_lease_token uuid, p_unavailable_reason text DEFAULT NULL, p_refreshed boolean DEFAULT true,
  p_next_after timestamptz DEFAULT NULL, p_now timestamptz DEFAULT now())
RETURNS TABLE (outcome text, findings_added integer)
LANGUAGE plpgsql ROWS 1 SECURITY DEFINER SET search_path = boardready, pg_temp AS $$
DECLARE
  v_item work_items%ROWTYPE;
  v_outcome text;
  v_added integer := 0;
BEGIN
  IF boardready_private.work_lock_leased(p_item_id, p_lease_token) IS NULL THEN
    RETURN QUERY SELECT 'lease_lost'::text, 0;
    RETURN;
  END IF;
  SELECT * INTO v_item FROM work_items WHERE id = p_item_id;
  IF v_item.kind = 'supply_check' THEN
    SELECT a.outcome, a.findings_added INTO v_outcome, v_added
      FROM boardready_private.supply_check_findings(v_item.subject_id, p_unavailable_reason, p_now) a;
  ELSE
    PERFORM boardready_private.watched_board_refreshed(v_item.subject_id, p_refreshed, p_next_after, p_now);
    v_outcome := CASE WHEN p_refreshed THEN 'refreshed' ELSE 'not_refreshed' END;
  END IF;
  -- supply_check_findings and watched_board_refreshed complete the subject's open
  -- item; one they left leased is completed here (work_complete: nothing, once
  -- it is completed).
  PERFORM work_complete(p_item_id, p_lease_token, v_outcome, p_now);
  RETURN QUERY SELECT v_outcome, v_added;
END $$;

CREATE OR REPLACE FUNCTION boardready_private.supply_parts_to_fetch(
  p_run_result_id bigint, p_project text, p_max_age_hours integer, p_now timestamptz)
RETURNS jsonb LANGUAGE sql STABLE AS $$
  SELECT coalesce(jsonb_agg(jsonb_build_object('partKey', p.part_key, 'manufacturer', p.manufacturer, 'mpn', p.mpn)
                            ORDER BY p.part_key), '[]'::jsonb)
    FROM (SELECT DISTINCT ON (l.part_key) l.part_key, l.manufacturer, l.mpn
            FROM boardready.run_bom_lines l
           WHERE l.run_result_id = p_run_result_id AND l.part_key IS NOT NULL
             AND (p_project IS NULL OR l.project IS NULL OR l.project = p_project)
             AND NOT EXISTS (SELECT 1 FROM boardready.part_lifecycle_observations o
                              WHERE o.part_key = l.part_key
                                AND o.fetched_at > p_now - make_interval(hours => p_max_age_hours))
           ORDER BY l.part_key, l.ordinal) p
$$;

-- A board's parts were refreshed (or could not be: p_next_after sooner); its
-- open refresh item is done.
CREATE OR REPLACE FUNCTION boardready_private.watched_board_refreshed(
  p_board_id bigint, p_refreshed boolean, p_next_after timestamptz, p_now timestamptz)
RETURNS void LANGUAGE sql AS $$
  UPDATE boardready.watched_boards SET refresh_after = p_next_after,
         refreshed_at = CASE WHEN p_refreshed THEN p_now ELSE refreshed_at END
   WHERE id = p_board_id;
  SELECT boardready_private.work_complete_open('board_refresh', p_board_id,
                                               CASE WHEN p_refreshed THEN 'refreshed' ELSE 'not_refreshed' END, p_now);
$$;

CREATE OR REPLACE FUNCTION boardready_private.supply_fingerprint(p_rule text, p_part_key text)
RETURNS text LANGUAGE sql IMMUTABLE AS $$
  SELECT encode(sha256(convert_to(p_rule || '|' || p_part_key, 'UTF8')), 'hex')
$$;

-- The supply findings of a pull request run, in one transaction: parts its
-- BOM adds or changes (part keys absent from the board's BOM before it) that
-- are EOL/obsolete (high), NRND or without authorized stock (medium), or
-- unknown to the provider (medium) become findings introduced by the pull
-- request, at the BOM line's schematic location; parts at risk that were
-- already there are one info finding of context; parts without any
-- observation (the provider was down, the breaker open: p_unavailable_reason)
-- make one info finding saying so. The release decision is refreshed, and the
-- check run completion it held goes out now, showing it. Returns the findings
-- added.
CREATE OR REPLACE FUNCTION boardready_private.supply_check_findings(
  p_run_result_id bigint, p_unavailable_reason text, p_now timestamptz)
RETURNS TABLE (outcome text, findings_added integer)
LANGUAGE plpgsql SET search_path = boardready, pg_temp AS $$
DECLARE
  v_check  supply_checks%ROWTYPE;
  v_board  watched_boards%ROWTYPE;
  v_base   bigint;
  v_next   integer;
  v_added  integer := 0;
  v_count  integer;
  v_context text;
  v_missing text;
  v_decision text;
BEGIN
  SELECT * INTO v_check FROM supply_checks WHERE run_result_id = p_run_result_id FOR UPDATE;
  IF NOT FOUND OR v_check.status <> 'pending' THEN
    RETURN QUERY SELECT 'not_pending'::text, 0;
    RETURN;
  END IF;
  SELECT * INTO v_board FROM watched_boards WHERE id = v_check.watched_board_id;
  v_base := boardready_private.watched_board_bom_run(v_board.id, p_run_result_id);
  -- Only results before this one are the default branch's BOM "before" the pull request.
  IF v_base > p_run_result_id THEN
    SELECT r.id INTO v_base FROM run_results r
     WHERE r.repository_id = v_board.repository_id AND r.id < p_run_result_id AND r.superseded_at IS NULL
       AND EXISTS (SELECT 1 FROM run_bom_lines l WHERE l.run_result_id = r.id
                    AND (l.project IS NULL OR l.project = v_board.path))
     ORDER BY (r.release_run_id IS NULL AND r.trigger_kind IN ('push', 'schedule', 'release')) DESC, r.id DESC
     LIMIT 1;
  END IF;
  SELECT coalesce(max(f.ordinal), 0) INTO v_next FROM run_findings f WHERE f.run_result_id = p_run_result_id;

  CREATE TEMP TABLE IF NOT EXISTS supply_judged (
    part_key text, refs text[], mpn text, manufacturer text, path text, line integer, introduced boolean,
    observed boolean, matched boolean, lifecycle text, authorized_stock bigint, rule text, severity text
  ) ON COMMIT DROP;
  DELETE FROM supply_judged;
  INSERT INTO supply_judged
  SELECT l.part_key, l.refs, l.mpn, l.manufacturer, l.path, l.line,
         NOT EXISTS (SELECT 1 FROM run_bom_lines b WHERE b.run_result_id = v_base AND b.part_key = l.part_key
                        AND (b.project IS NULL OR b.project = v_board.path)),
         o.id IS NOT NULL, o.matched, o.lifecycle_status, o.authorized_stock,
         CASE WHEN o.id IS NULL THEN NULL
              WHEN NOT o.matched THEN 'supply.unknown-part'
              WHEN o.lifecycle_status IN ('eol', 'obsolete') THEN 'supply.obsolete'
              WHEN o.lifecycle_status = 'nrnd' THEN 'supply.nrnd'
              WHEN coalesce(o.authorized_stock, 0) = 0 THEN 'supply.no-authorized-stock' END,
         CASE WHEN o.lifecycle_status IN ('eol', 'obsolete') AND o.matched THEN 'high' ELSE 'medium' END
    FROM (SELECT DISTINCT ON (x.part_key) x.* FROM run_bom_lines x
           WHERE x.run_result_id = p_run_result_id AND x.part_key IS NOT NULL AND NOT x.dnp
             AND (x.project IS NULL OR x.project = v_board.path)
           ORDER BY x.part_key, x.ordinal) l
    LEFT JOIN LATERAL (SELECT * FROM part_lifecycle_observations p WHERE p.part_key = l.part_key
                        ORDER BY p.fetched_at DESC, p.id DESC LIMIT 1) o ON true;

  INSERT INTO run_findings (run_result_id, ordinal, rule_id, severity, message, fingerprint, title, path,
                            start_line, end_line)
  SELECT p_run_result_id, v_next + row_number() OVER (ORDER BY j.severity = 'high' DESC, j.part_key)::integer,
         j.rule, j.severity,
         left(array_to_string(j.refs[1:20], ', ') || ' (' || coalesce(j.manufacturer || ' ', '') || j.mpn || ') '
           || CASE j.rule
                WHEN 'supply.obsolete' THEN 'is ' || upper(j.lifecycle) || ' at the manufacturer'
                WHEN 'supply.nrnd' THEN 'is not recommended for new designs (NRND)'
                WHEN 'supply.no-authorized-stock' THEN 'has no stock at any authorized distributor'
                ELSE 'is unknown to the component provider' END
           || ': introduced by this pull request', 4000),
         boardready_private.supply_fingerprint(j.rule, j.part_key), 'Introduced by this pull request', j.path, j.line, j.line
    FROM supply_judged j WHERE j.introduced AND j.rule IS NOT NULL;
  GET DIAGNOSTICS v_added = ROW_COUNT;
  v_next := v_next + v_added;

  SELECT string_agg(array_to_string(j.refs[1:5], ', ') || ' ' || j.mpn || ' (' ||
                    CASE j.rule WHEN 'supply.obsolete' THEN upper(j.lifecycle) WHEN 'supply.nrnd' THEN 'NRND'
                                WHEN 'supply.no-authorized-stock' THEN 'no authorized stock' ELSE 'unknown part' END
                    || ')', '; ' ORDER BY j.part_key), count(*)
    INTO v_context, v_count
    FROM supply_judged j WHERE NOT j.introduced AND j.rule IS NOT NULL;
  IF v_count > 0 THEN
    v_next := v_next + 1;
    INSERT INTO run_findings (run_result_id, ordinal, rule_id, severity, message, fingerprint, title)
    VALUES (p_run_result_id, v_next, 'supply.context', 'info',
            left(v_count || ' part(s) at supply risk were already on the default branch (not introduced by '
                 || 'this pull request): ' || v_context, 4000),
            boardready_private.supply_fingerprint('supply.context', v_board.id::text || ':' || md5(v_context)),
            'Already on the default branch');
    v_added := v_added + 1;
  END IF;

  SELECT count(*) INTO v_count FROM supply_judged j WHERE NOT j.observed;
  IF v_count > 0 THEN
    v_next := v_next + 1;
    INSERT INTO run_findings (run_result_id, ordinal, rule_id, severity, message, fingerprint, title)
    VALUES (p_run_result_id, v_next, 'supply.unavailable', 'info',
            'Component supply data was unavailable for ' || v_count || ' part(s)'
              || coalesce(' (' || p_unavailable_reason || ')', '')
              || '; the release decision does not wait for it',
            boardready_private.supply_fingerprint('supply.unavailable', p_run_result_id::text), 'Supply data unavailable');
    v_added := v_added + 1;
  END IF;

  UPDATE run_results SET findings_count = findings_count + v_added WHERE id = p_run_result_id;
  UPDATE supply_checks SET status = CASE WHEN v_count > 0 THEN 'unavailable' ELSE 'completed' END,
         completed_at = p_now
   WHERE run_result_id = p_run_result_id;
  PERFORM boardready_private.work_complete_open('supply_check', p_run_result_id,
                                                CASE WHEN v_count > 0 THEN 'unavailable' ELSE 'completed' END, p_now);
  SELECT d.decision INTO v_decision FROM boardready_private.release_decision_refresh(v_check.release_run_id, p_now) d;
  -- Release what waited for this check. The completion shows the release
  -- decision the findings make, not the result's own conclusion first
  -- (results.sql); one a worker claimed when the hold ran out showed the
  -- result's own, and the decision update its completion queues follows.
  PERFORM boardready_private.run_result_completion_await(p_run_result_id, v_decision);
  UPDATE outbox_items SET run_after = least(run_after, p_now), updated_at = p_now
   WHERE run_result_id = p_run_result_id AND status = 'accepted' AND kind IN ('check_run_complete', 'pr_comment');
  RETURN QUERY SELECT CASE WHEN v_count > 0 THEN 'unavailable' ELSE 'completed' END, v_added;
END $$;

-- For operators (bin/psql): the breakers, their transitions, the watched boards.
CREATE OR REPLACE VIEW ops.component_provider_breakers AS
SELECT b.installation_id, b.state, b.consecutive_failures, b.opened_at, b.trial_token IS NOT NULL AS trial_in_flight,
       b.trial_until, b.updated_at,
       (SELECT c.calls FROM boardready.component_provider_calls c
         WHERE c.installation_id = b.installation_id
           AND c.window_start = boardready_private.component_provider_window(now())) AS calls_this_minute
  FROM boardready.component_provider_breakers b;

CREATE OR REPLACE VIEW ops.component_provider_breaker_transitions AS
SELECT t.id, t.installation_id, t.from_state, t.to_state, t.reason, t.failures, t.occurred_at
  FROM boardready.component_provider_breaker_transitions t;

CREATE OR REPLACE VIEW ops.watched_boards AS
SELECT b.id, b.installation_id, b.repository_id, b.created_at, b.refreshed_at, b.refresh_after, b.unwatched_at,
       b.unwatch_reason,
       (SELECT count(*) FROM boardready.supply_checks c WHERE c.watched_board_id = b.id AND c.status = 'pending')
         AS pending_supply_checks
  FROM boardready.watched_boards b;

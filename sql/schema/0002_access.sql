-- Accounts and access: marketplace account state and its deliveries, erasure
-- requests and legal holds, repository API tokens, the failed-authentication
-- limiter, audit events and replay idempotency keys.
-- depends: 0001_spine

-- The marketplace entitlement of one code host account. Only the latest
-- applied purchased/cancelled event counts (ordered by its effective_date).
CREATE TABLE boardready.marketplace_accounts (
  account_id        bigint PRIMARY KEY REFERENCES boardready.accounts (id),
  state             text NOT NULL CHECK (state IN ('active', 'canceled')),
  tier              text NOT NULL DEFAULT 'free' CHECK (tier = 'free'),  -- Community is the only published plan
  effective_date    timestamptz NOT NULL,         -- of the latest applied event
  last_delivery_id  text NOT NULL,                -- the delivery that applied it
  activated_at      timestamptz,                  -- when the latest purchase was applied
  canceled_at       timestamptz,                  -- when the latest cancellation was applied
  created_at        timestamptz NOT NULL,
  updated_at        timestamptz NOT NULL
);

-- Every marketplace delivery ever accepted, with what it did. Like the webhook
-- inbox, the raw payload is not kept: its digest and size are the evidence.
CREATE TABLE boardready.marketplace_deliveries (
  id               bigserial PRIMARY KEY,
  delivery_id      text NOT NULL,
  idempotency_key  text NOT NULL UNIQUE,          -- host-marketplace:<delivery_id>
  action           text NOT NULL,
  account_id       bigint NOT NULL,
  effective_date   timestamptz NOT NULL,
  -- applied | stale (older than the stored state) | cancellation_kept (a purchase
  -- with the cancellation's timestamp) | recorded (no entitlement change)
  outcome          text NOT NULL CHECK (outcome IN ('applied', 'stale', 'cancellation_kept', 'recorded')),
  payload_sha256   text NOT NULL,
  payload_bytes    integer NOT NULL,
  received_at      timestamptz NOT NULL
);
CREATE INDEX marketplace_deliveries_account ON boardready.marketplace_deliveries (account_id, received_at);

-- An active legal hold blocks deletion of the account's data.
CREATE TABLE boardready.legal_holds (
  id          bigserial PRIMARY KEY,
  account_id  bigint NOT NULL REFERENCES boardready.accounts (id),
  active      boolean NOT NULL DEFAULT true,
  reason      text NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now(),
  released_at timestamptz
);
CREATE INDEX legal_holds_active ON boardready.legal_holds (account_id) WHERE active;

-- Queued by a cancellation; carried out by the erasure worker (capability 9).
-- A purchase strictly newer than the cancellation withdraws a pending request
-- (kept, status 'withdrawn', as evidence).
CREATE TABLE boardready.erasure_requests (
  id                     bigserial PRIMARY KEY,
  account_id             bigint NOT NULL REFERENCES boardready.accounts (id),
  account_type           text NOT NULL CHECK (account_type IN ('organization', 'user')),
  status                 text NOT NULL CHECK (status IN ('pending', 'withdrawn', 'completed')),
  effective_date         timestamptz NOT NULL,    -- of the cancellation
  due_at                 timestamptz NOT NULL,    -- effective_date + 30 days
  blocked_by_legal_hold  boolean NOT NULL,
  requested_by_delivery  text NOT NULL,
  created_at             timestamptz NOT NULL,
  withdrawn_at           timestamptz,
  completed_at           timestamptz,
  CHECK (due_at = effective_date + interval '30 days')
);
-- At most one pending request per account: a repeated cancellation keeps it.
CREATE UNIQUE INDEX erasure_requests_one_pending ON boardready.erasure_requests (account_id) WHERE status = 'pending';
CREATE INDEX erasure_requests_due ON boardready.erasure_requests (due_at) WHERE status = 'pending';

-- Repository-scoped API tokens. Only the SHA-256 of the value is stored.
CREATE TABLE boardready.api_tokens (
  id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  repository_id   bigint NOT NULL REFERENCES boardready.repositories (id),
  name            text NOT NULL CHECK (length(name) BETWEEN 1 AND 100),
  token_sha256    bytea NOT NULL UNIQUE CHECK (length(token_sha256) = 32),
  token_prefix    text NOT NULL CHECK (token_prefix ~ '^svc_live_[A-Za-z0-9_-]{3}$'),
  scopes          text[] NOT NULL CHECK (cardinality(scopes) >= 1
                    AND scopes <@ ARRAY['runs:write', 'reviews:read', 'reviews:write', 'admin']),
  expires_at      timestamptz,                    -- NULL: never expires
  created_by      text NOT NULL,
  created_at      timestamptz NOT NULL,
  revoked_at      timestamptz,
  revoked_reason  text CHECK (revoked_reason IN ('api', 'operator_cli', 'account_canceled')),
  last_used_at    timestamptz,                    -- written at most once a minute per token
  CHECK ((revoked_at IS NULL) = (revoked_reason IS NULL))
);
CREATE INDEX api_tokens_repository ON boardready.api_tokens (repository_id, created_at);

-- Failed authentications per limiter and client in fixed one-minute windows,
-- shared by every replica.
CREATE TABLE boardready.auth_failures (
  limiter       text NOT NULL CHECK (limiter IN ('bearer', 'operator')),
  client_key    text NOT NULL CHECK (length(client_key) BETWEEN 1 AND 100),
  window_start  timestamptz NOT NULL,
  failures      integer NOT NULL,
  PRIMARY KEY (limiter, client_key, window_start)
);
CREATE INDEX auth_failures_window ON boardready.auth_failures (window_start);

-- Control-plane audit trail. details never holds tenant payload.
CREATE TABLE boardready.audit_events (
  id               uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  event_type       text NOT NULL,
  installation_id  bigint,
  actor            text NOT NULL,
  operation_id     text,
  item_type        text,
  item_id          text,
  occurred_at      timestamptz NOT NULL,
  details          jsonb NOT NULL DEFAULT '{}'
);
CREATE INDEX audit_events_installation ON boardready.audit_events (installation_id, occurred_at);

-- An operator replay request by its Idempotency-Key: the same key returns the
-- same audit event; the same key for another request is refused.
CREATE TABLE boardready.replay_requests (
  idempotency_key  text PRIMARY KEY,
  installation_id  bigint NOT NULL,
  item_type        text NOT NULL,
  item_id          bigint NOT NULL,
  audit_event_id   uuid NOT NULL REFERENCES boardready.audit_events (id),
  created_at       timestamptz NOT NULL
);

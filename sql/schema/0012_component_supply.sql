-- Component supply tracking: the BOM each run result carried, the one watched
-- board per installation account, part-lifecycle observations from the
-- component provider, the provider's per-installation call budget and circuit
-- breaker (shared by every replica), and the supply checks of pull request runs.
-- depends: 0010_reconciliation

-- The run result's optional `bom` section, one row per line (bounded by the
-- checker's 100000-row guard and the contract's maxItems).
CREATE TABLE boardready.run_bom_lines (
  run_result_id  bigint NOT NULL REFERENCES boardready.run_results (id) ON DELETE CASCADE,
  ordinal        integer NOT NULL,
  project        text,
  refs           text[] NOT NULL,
  quantity       integer NOT NULL,
  value          text,
  footprint      text,
  manufacturer   text,
  mpn            text,
  dnp            boolean NOT NULL DEFAULT false,
  part_key       text,                      -- normalized manufacturer + MPN; NULL without an MPN
  path           text,
  line           integer,
  PRIMARY KEY (run_result_id, ordinal)
);
CREATE INDEX run_bom_lines_part ON boardready.run_bom_lines (part_key) WHERE part_key IS NOT NULL;

-- The Community plan's one watched board per installation account. Unwatching
-- (DELETE, or the account's cancellation) keeps the row as history.
CREATE TABLE boardready.watched_boards (
  id               bigserial PRIMARY KEY,
  installation_id  bigint NOT NULL REFERENCES boardready.installations (id),
  repository_id    bigint NOT NULL REFERENCES boardready.repositories (id),
  path             text NOT NULL,           -- the .kicad_pro in the repository's default branch
  created_by       text NOT NULL,
  created_at       timestamptz NOT NULL,
  refresh_after    timestamptz NOT NULL,    -- when the supply worker refreshes its parts next
  refresh_leased_until timestamptz,
  refreshed_at     timestamptz,
  unwatched_at     timestamptz,
  unwatch_reason   text CHECK (unwatch_reason IN ('deleted', 'account_canceled'))
);
CREATE UNIQUE INDEX watched_boards_one_per_repository ON boardready.watched_boards (repository_id)
  WHERE unwatched_at IS NULL;
CREATE INDEX watched_boards_installation ON boardready.watched_boards (installation_id) WHERE unwatched_at IS NULL;

-- One row per part per fetch. Parts are global (the provider's catalogue is
-- the same for everyone); the fetch is charged to an installation's budget.
CREATE TABLE boardready.part_lifecycle_observations (
  id                          bigserial PRIMARY KEY,
  part_key                    text NOT NULL,
  manufacturer                text,
  mpn                         text NOT NULL,
  matched                     boolean NOT NULL,      -- the provider knows the part
  provider_part_id            text,
  lifecycle_status            text NOT NULL,         -- production, new, nrnd, eol, obsolete, unknown
  distributor_classification  text NOT NULL CHECK (distributor_classification IN
                                ('authorized-distributor', 'marketplace', 'unknown')),
  price_breaks                jsonb NOT NULL DEFAULT '[]'::jsonb,   -- [{quantity, price, currency}]
  stock                       bigint,               -- every seller's inventory
  authorized_stock            bigint,               -- authorized sellers' inventory
  installation_id             bigint NOT NULL,
  fetched_at                  timestamptz NOT NULL
);
CREATE INDEX part_lifecycle_observations_latest ON boardready.part_lifecycle_observations (part_key, fetched_at DESC);

-- Provider calls per installation per one-minute window.
CREATE TABLE boardready.component_provider_calls (
  installation_id  bigint NOT NULL,
  window_start     timestamptz NOT NULL,
  calls            integer NOT NULL,
  PRIMARY KEY (installation_id, window_start)
);

-- The component-provider circuit breaker, one per installation.
CREATE TABLE boardready.component_provider_breakers (
  installation_id       bigint PRIMARY KEY,
  state                 text NOT NULL CHECK (state IN ('closed', 'open', 'half-open')),
  consecutive_failures  integer NOT NULL DEFAULT 0,
  opened_at             timestamptz,
  trial_token           uuid,                 -- the one trial call of half-open
  trial_until           timestamptz,          -- a trial caller that died frees the trial then
  updated_at            timestamptz NOT NULL
);

CREATE TABLE boardready.component_provider_breaker_transitions (
  id               bigserial PRIMARY KEY,
  installation_id  bigint NOT NULL,
  from_state       text NOT NULL,
  to_state         text NOT NULL,
  reason           text NOT NULL,
  failures         integer NOT NULL,
  occurred_at      timestamptz NOT NULL
);
CREATE INDEX component_provider_breaker_transitions_installation
  ON boardready.component_provider_breaker_transitions (installation_id, occurred_at DESC);

-- The supply check of one pull request run result on a watched board's
-- repository: the worker fetches what its BOM adds, then findings are added.
CREATE TABLE boardready.supply_checks (
  run_result_id    bigint PRIMARY KEY REFERENCES boardready.run_results (id) ON DELETE CASCADE,
  release_run_id   bigint NOT NULL REFERENCES boardready.release_runs (id),
  installation_id  bigint NOT NULL,
  watched_board_id bigint NOT NULL REFERENCES boardready.watched_boards (id),
  status           text NOT NULL CHECK (status IN ('pending', 'completed', 'unavailable')),
  run_after        timestamptz NOT NULL,
  leased_until     timestamptz,
  attempts         integer NOT NULL DEFAULT 0,
  hold_until       timestamptz NOT NULL,      -- the check run completion waits for it until then
  created_at       timestamptz NOT NULL,
  completed_at     timestamptz
);
CREATE INDEX supply_checks_due ON boardready.supply_checks (run_after) WHERE status = 'pending';

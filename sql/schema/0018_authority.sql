-- Who may decide (issue 25): a session's rights per repository as the code
-- host reported them, the person behind a token minted from a session, and
-- per-subject rate counters for sign-in and decisions. Everything here is an
-- added column or table: the previous release's functions keep working.
-- depends: 0017_inbox_awaiting_job

-- Both tables at once, before anything else (0032 says why).
LOCK TABLE boardready.sessions, boardready.api_tokens IN ACCESS EXCLUSIVE MODE;

-- The repositories where the code host gave the viewer admin or maintain
-- (admin and review scopes) and push (review scopes); repository_ids keeps
-- every repository the viewer reaches (reviews:read). NULL: a session made by
-- the previous release, which recorded no permissions: it may only read.
-- permissions_checked_at: when the code host was last asked.
ALTER TABLE boardready.sessions
  ADD COLUMN admin_repository_ids bigint[],
  ADD COLUMN write_repository_ids bigint[],
  ADD COLUMN permissions_checked_at timestamptz;
CREATE INDEX sessions_viewer ON boardready.sessions (viewer_id);

-- The person a token acts as (the viewer whose session minted it, or whose
-- token minted it). NULL: an operator's token, or one minted before this
-- change: it acts as itself.
ALTER TABLE boardready.api_tokens ADD COLUMN person_id bigint;
CREATE INDEX api_tokens_person ON boardready.api_tokens (person_id) WHERE person_id IS NOT NULL;
ALTER TABLE boardready.api_tokens DROP CONSTRAINT api_tokens_revoked_reason_check;
ALTER TABLE boardready.api_tokens ADD CONSTRAINT api_tokens_revoked_reason_check
  CHECK (revoked_reason IN ('api', 'operator_cli', 'account_canceled', 'access_removed'));

-- Hits per limiter and subject in fixed one-minute windows, shared by every
-- replica: sign-in starts and callbacks per client address, decisions per
-- person and repository.
CREATE TABLE boardready.rate_counters (
  limiter       text NOT NULL CHECK (limiter IN ('sign_in', 'decisions')),
  subject       text NOT NULL CHECK (length(subject) BETWEEN 1 AND 200),
  window_start  timestamptz NOT NULL,
  hits          integer NOT NULL,
  PRIMARY KEY (limiter, subject, window_start)
);
CREATE INDEX rate_counters_window ON boardready.rate_counters (window_start);

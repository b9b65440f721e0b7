DROP TABLE boardready.rate_counters;
UPDATE boardready.api_tokens SET revoked_reason = 'api' WHERE revoked_reason = 'access_removed';
ALTER TABLE boardready.api_tokens DROP CONSTRAINT api_tokens_revoked_reason_check;
ALTER TABLE boardready.api_tokens ADD CONSTRAINT api_tokens_revoked_reason_check
  CHECK (revoked_reason IN ('api', 'operator_cli', 'account_canceled'));
DROP INDEX boardready.api_tokens_person;
ALTER TABLE boardready.api_tokens DROP COLUMN person_id CASCADE;
DROP INDEX boardready.sessions_viewer;
ALTER TABLE boardready.sessions DROP COLUMN admin_repository_ids CASCADE, DROP COLUMN write_repository_ids CASCADE,
  DROP COLUMN permissions_checked_at CASCADE;

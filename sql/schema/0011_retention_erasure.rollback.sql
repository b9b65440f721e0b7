-- Views and functions over these columns are re-created by the next migrate.
DROP VIEW IF EXISTS ops.retention_sweeps;
DROP VIEW IF EXISTS ops.retention_backlog;
DROP VIEW IF EXISTS ops.legal_holds;
DROP VIEW IF EXISTS ops.erasure_requests;
DROP FUNCTION IF EXISTS boardready.legal_hold_place(bigint, text, text, text, text, timestamptz);
DROP FUNCTION IF EXISTS boardready.legal_hold_release(bigint, bigint, text, text, timestamptz);
DROP FUNCTION IF EXISTS boardready.legal_hold_previous_request(text);

REVOKE SELECT ON boardready.accounts, boardready.legal_holds FROM boardready_api;
DROP INDEX boardready.run_results_attempt;
DROP INDEX boardready.outbox_items_attempt;
DROP INDEX boardready.outbox_items_run_result;
DROP INDEX boardready.release_runs_current_attempt;
DROP INDEX boardready.release_runs_superseded_by;
DROP INDEX boardready.run_results_ingested_received;
DROP TABLE boardready.retention_sweeps;
DROP TABLE boardready.legal_hold_requests;

DROP INDEX boardready.legal_holds_account;
ALTER TABLE boardready.legal_holds
  DROP CONSTRAINT legal_holds_released,
  DROP CONSTRAINT legal_holds_reason_length,
  DROP COLUMN released_by,
  DROP COLUMN placed_by,
  DROP COLUMN reference;

-- The earlier vocabulary knows only pending, withdrawn and completed: a request
-- blocked or under way is pending again (its deadline has passed, so the
-- earlier code leaves it queued, as it left every request).
UPDATE boardready.erasure_requests SET status = 'pending' WHERE status IN ('blocked_legal_hold', 'erasing');
DROP INDEX boardready.erasure_requests_due;
CREATE INDEX erasure_requests_due ON boardready.erasure_requests (due_at) WHERE status = 'pending';
DROP INDEX boardready.erasure_requests_one_open;
CREATE UNIQUE INDEX erasure_requests_one_pending ON boardready.erasure_requests (account_id) WHERE status = 'pending';
ALTER TABLE boardready.erasure_requests
  DROP COLUMN audit_event_id,
  DROP COLUMN deleted,
  DROP COLUMN batches,
  DROP COLUMN started_at,
  DROP COLUMN blocked_at,
  DROP COLUMN blocked_hold_id;
ALTER TABLE boardready.erasure_requests DROP CONSTRAINT erasure_requests_status_check;
ALTER TABLE boardready.erasure_requests ADD CONSTRAINT erasure_requests_status_check
  CHECK (status IN ('pending', 'withdrawn', 'completed'));

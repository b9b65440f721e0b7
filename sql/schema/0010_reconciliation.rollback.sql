-- Views over these tables, and functions whose signature names their row
-- types, are re-created by the next migrate.
DROP VIEW IF EXISTS ops.reconciliation;
DROP VIEW IF EXISTS ops.reconciliation_items;
DROP FUNCTION IF EXISTS boardready.reconciliation_workflow_observe(boardready.reconciliation_items, text, text,
                                                                   bigint, integer, timestamptz);
DROP FUNCTION IF EXISTS boardready.reconciliation_check_run_observe(boardready.reconciliation_items, text, integer,
                                                                    timestamptz);
DROP FUNCTION IF EXISTS boardready.reconciliation_lifecycle_repair(boardready.reconciliation_items, timestamptz);
DROP FUNCTION IF EXISTS boardready.intake_accept_delivery(text, text, text, text, bigint, jsonb, text, integer,
                                                          integer, timestamptz);
ALTER TABLE boardready.webhook_inbox DROP COLUMN acceptance_ms;
DROP TABLE boardready.reconciler_heartbeats;
DROP TABLE boardready.reconciliation_items;

-- Views over these tables are re-created by the next migrate.
DROP VIEW IF EXISTS ops.reconciliation;
DROP VIEW IF EXISTS ops.reconciliation_items;
DROP FUNCTION IF EXISTS boardready.intake_accept_delivery(text, text, text, text, bigint, jsonb, text, integer,
                                                          integer, timestamptz);
ALTER TABLE boardready.webhook_inbox DROP COLUMN acceptance_ms;
DROP TABLE boardready.reconciler_heartbeats;
DROP TABLE boardready.reconciliation_items;

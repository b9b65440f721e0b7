-- CASCADE: the ops views over these tables are re-created by the next migrate.
DROP TABLE boardready.replay_requests CASCADE;
DROP TABLE boardready.audit_events CASCADE;
DROP TABLE boardready.auth_failures CASCADE;
DROP TABLE boardready.api_tokens CASCADE;
DROP TABLE boardready.erasure_requests CASCADE;
DROP TABLE boardready.legal_holds CASCADE;
DROP TABLE boardready.marketplace_deliveries CASCADE;
DROP TABLE boardready.marketplace_accounts CASCADE;

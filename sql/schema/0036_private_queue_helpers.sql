-- The helpers of queue, outbox, reconciliation, supply and replay are
-- defined in boardready_private by sql/functions; the previous release's
-- copies stay in boardready until the contract migration 0037 drops them
-- (0035 says why they do not move).
-- depends: 0035_private_helpers

REVOKE ALL ON ALL FUNCTIONS IN SCHEMA boardready_private FROM PUBLIC, boardready_api;

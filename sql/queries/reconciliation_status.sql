-- Each reconciler's backlog, poll and success times (reconciliation.sql), for GET /api/v1/operator/reconciliation.
SELECT * FROM boardready.reconciliation_status()

-- bin/load: what was in flight when a fault ended (the marks of
-- load_marks.sql) and is not done yet, and any lease past its expiry. All
-- zero is convergence: every job of those deliveries completed, every one of
-- those release runs terminal with its check run published and its outbox
-- calls made, no item waiting for a dead worker's lease to run out.
SELECT
  (SELECT count(*) FROM boardready.lifecycle_jobs j
    WHERE j.inbox_id <= %(inbox_mark)s AND j.status IN ('accepted', 'leased'))
    + (SELECT count(*) FROM boardready.webhook_inbox i WHERE i.id <= %(inbox_mark)s AND i.awaiting_job) AS jobs,
  (SELECT count(*) FROM boardready.outbox_items o
    WHERE o.release_run_id <= %(run_mark)s AND o.status IN ('accepted', 'leased')) AS outbox_items,
  (SELECT count(*) FROM boardready.release_runs rr
    WHERE rr.id <= %(run_mark)s
      AND (rr.status IN ('queued', 'dispatched')
           OR (rr.status <> 'superseded' AND rr.check_run_id IS NOT NULL AND rr.check_run_published_at IS NULL)))
    AS release_runs,
  (SELECT count(*) FROM boardready.lifecycle_jobs WHERE status = 'leased' AND leased_until < now())
    + (SELECT count(*) FROM boardready.outbox_items WHERE status = 'leased' AND leased_until < now())
    + (SELECT count(*) FROM boardready.reconciliation_items WHERE status = 'leased' AND leased_until < now())
    AS expired_leases

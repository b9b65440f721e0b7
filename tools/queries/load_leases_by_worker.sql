-- bin/load: the leases each worker process holds now (leased_by is
-- "<queue>@<host>:<pid>"), so that a profile kills a worker while it holds some.
SELECT leased_by, count(*) AS leases
  FROM (SELECT leased_by FROM boardready.lifecycle_jobs WHERE status = 'leased'
        UNION ALL SELECT leased_by FROM boardready.outbox_items WHERE status = 'leased'
        UNION ALL SELECT leased_by FROM boardready.reconciliation_items WHERE status = 'leased') l
 GROUP BY leased_by

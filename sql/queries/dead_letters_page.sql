-- One page of an installation's dead letters, newest failure first (the
-- operator API). Filtered by the installation before anything else: another
-- tenant's items never appear. %(limit)s is the page size plus one, so the
-- caller learns whether an older page exists. Below %(before)s, or, with the
-- tie-breaker (%(before_type)s, %(before_id)s: nextBeforeId), also the rest of
-- the items that failed at that very instant, in the listing's order.
SELECT d.item_type, d.item_id, d.repository, d.reason_code, d.error_class, d.attempts, d.failed_at, d.replay_safe
  FROM ops.dead_letters d
 WHERE d.installation_id = %(installation_id)s
   AND (d.failed_at < coalesce(%(before)s::timestamptz, 'infinity'::timestamptz)
        OR (%(before_id)s::bigint IS NOT NULL AND d.failed_at = %(before)s::timestamptz
            AND (d.item_type > %(before_type)s::text
                 OR (d.item_type = %(before_type)s::text AND d.item_id < %(before_id)s::bigint))))
 ORDER BY d.failed_at DESC, d.item_type, d.item_id DESC
 LIMIT least(greatest(%(limit)s::integer, 1), 101)

-- One page of an account's legal holds, newest first (the operator API). One
-- row with a NULL hold when the account has none; no row when the service does
-- not know the account. %(limit)s is the page size plus one, so the caller
-- learns whether an older page exists; %(before)s is the last hold id seen.
SELECT a.id AS account_id, h.id AS hold_id, h.active, h.reason, h.reference, h.placed_by, h.created_at AS placed_at,
       h.released_by, h.released_at
  FROM boardready.accounts a
  LEFT JOIN LATERAL (
    SELECT * FROM boardready.legal_holds x
     WHERE x.account_id = a.id AND x.id < coalesce(%(before)s::bigint, 9223372036854775807)
     ORDER BY x.id DESC
     LIMIT least(greatest(%(limit)s::integer, 1), 101)) h ON true
 WHERE a.id = %(account_id)s
 ORDER BY h.id DESC

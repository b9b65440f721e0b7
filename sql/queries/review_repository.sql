-- The repository of a review among the caller's repositories (before a
-- decision, to check the caller's scope there; no row: 404).
SELECT rv.repository_id FROM boardready.reviews rv
 WHERE rv.id = %(review_id)s AND rv.repository_id = ANY (%(repository_ids)s::bigint[])

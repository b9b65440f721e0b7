-- The /runs page's repository filter: the names of the caller's repositories.
SELECT r.id, r.full_name FROM boardready.repositories r
 WHERE r.id = ANY (%(repository_ids)s::bigint[])
 ORDER BY r.full_name, r.id

-- Whether a release run exists among the caller's repositories (an empty
-- findings page of a run the caller cannot see is a 404, not an empty list).
SELECT rr.id FROM boardready.release_runs rr
 WHERE rr.id = %(release_run_id)s AND rr.repository_id = ANY (%(repository_ids)s::bigint[])

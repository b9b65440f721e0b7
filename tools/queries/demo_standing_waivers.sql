-- The standing waivers of one repository, by its name (bin/demo retires
-- those an earlier demo left, so that a rerun decides as the first run did).
SELECT w.id, w.repository_id, w.fingerprint, w.reason, w.created_by
  FROM boardready.waivers w
  JOIN boardready.repositories r ON r.id = w.repository_id
 WHERE r.full_name = %(full_name)s AND w.deleted_at IS NULL
 ORDER BY w.id

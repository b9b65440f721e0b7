DROP SCHEMA ops CASCADE;
DROP SCHEMA boardready CASCADE;
-- The role is cluster-wide and other databases may use it: drop only what it
-- holds here, and the role itself when nothing else refers to it.
DROP OWNED BY boardready_api;
DO $$
BEGIN
  DROP ROLE boardready_api;
EXCEPTION WHEN dependent_objects_still_exist OR insufficient_privilege OR object_in_use THEN
  NULL;
END $$;

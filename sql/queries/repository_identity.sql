-- A repository's installation and full name (to ask the code host about a
-- person's permission on it).
SELECT r.installation_id, r.full_name FROM boardready.repositories r WHERE r.id = %(repository_id)s

ALTER TABLE boardready.release_runs DROP COLUMN last_publication_error CASCADE;

-- GET /artifacts/{id}: a report's bytes, read only after its capability link
-- was verified (app/web/pages/artifacts.py); the link is the authority.
SELECT a.id, a.media_type, a.content FROM boardready.report_artifacts a WHERE a.id = %(artifact_id)s

-- The aggregate SLI snapshot (slo.sql) that GET /api/v1/operator/metrics exposes.
SELECT * FROM boardready.slo_snapshot(p_deadline_seconds => %(deadline_seconds)s)

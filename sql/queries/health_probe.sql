-- Readiness: the database answers a call of the API role within its budget (health.sql).
SELECT * FROM boardready.health_probe()

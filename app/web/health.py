"""GET /api/health/live and /api/health/ready, exactly the spec's shapes.

Readiness asks the database through the pool within
SERVICE_READINESS_DB_TIMEOUT_MS: waiting for a connection and running the
probe share that budget, so the endpoint never hangs much longer than it.
"""
from __future__ import annotations

import time

import falcon
import psycopg
from psycopg_pool import PoolTimeout

from app import SERVICE_NAME, database, sql_api


class Live:
    def on_get(self, req, resp):
        resp.media = {"ok": True, "service": SERVICE_NAME, "check": "liveness"}


class Ready:
    def __init__(self, config, pool):
        self.config = config
        self.pool = pool

    def _not_ready(self, resp, reason: str, missing: list[str] | None = None):
        resp.status = falcon.HTTP_503
        body = {"ok": False, "service": SERVICE_NAME, "check": "readiness", "reason": reason}
        if missing:
            body["missing"] = missing
        resp.media = body

    def _probe_database(self) -> str | None:
        """None when the database answered in time, else the failure reason."""
        budget = self.config.readiness_db_timeout_ms / 1000
        deadline = time.monotonic() + budget
        try:
            with database.connection(self.pool, budget) as conn:
                remaining_ms = max(1, int((deadline - time.monotonic()) * 1000))
                with conn.transaction():
                    conn.execute(f"SET LOCAL statement_timeout = {remaining_ms}")
                    sql_api.health_probe(conn)
        except psycopg.errors.QueryCanceled:
            return "database-timeout"
        except PoolTimeout:
            return "database-unavailable"
        except psycopg.Error:
            return "database-unavailable"
        return None

    def on_get(self, req, resp):
        missing = list(dict.fromkeys(self.config.missing))
        if missing:
            return self._not_ready(resp, "missing-configuration", missing)
        reason = self._probe_database()
        if reason:
            return self._not_ready(resp, reason)
        effective = {"artifactCapabilityTtlSeconds": self.config.artifact_capability_ttl_seconds}
        if self.config.self_hosted_runner_minimum_version:
            effective["selfHostedRunnerMinimumVersion"] = self.config.self_hosted_runner_minimum_version
        resp.media = {
            "ok": True, "service": SERVICE_NAME, "check": "readiness",
            "checks": {"configuration": "pass", "database": "pass"},
            "effectiveConfiguration": effective,
        }

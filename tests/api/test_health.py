"""GET /api/health/live and /api/health/ready, validated against contracts/openapi.json."""
from __future__ import annotations

import threading

import psycopg
from falcon import testing

from app import database
from app.web.wsgi import create_app
from contracts import openapi_response_validator
from tests.helpers.service import make_config


def assert_documented(path: str, result) -> None:
    openapi_response_validator(path, "get", result.status_code).validate(result.json)


def test_live(client):
    result = client.simulate_get("/api/health/live")
    assert result.status_code == 200
    assert result.json == {"ok": True, "service": "boardready", "check": "liveness"}
    assert_documented("/api/health/live", result)


def test_ready_with_defaults(client):
    result = client.simulate_get("/api/health/ready")
    assert result.status_code == 200, result.json
    assert result.json == {
        "ok": True, "service": "boardready", "check": "readiness",
        "checks": {"configuration": "pass", "database": "pass"},
        "effectiveConfiguration": {"artifactCapabilityTtlSeconds": 900},
    }
    assert_documented("/api/health/ready", result)


def test_ready_reports_effective_configuration(pool):
    config = make_config(SERVICE_ARTIFACT_CAPABILITY_TTL_SECONDS="60",
                         SERVICE_SELF_HOSTED_RUNNER_MINIMUM_VERSION="2.317.0")
    result = testing.TestClient(create_app(config, pool)).simulate_get("/api/health/ready")
    assert result.status_code == 200
    assert result.json["effectiveConfiguration"] == {
        "artifactCapabilityTtlSeconds": 60, "selfHostedRunnerMinimumVersion": "2.317.0"}
    assert_documented("/api/health/ready", result)


def test_missing_configuration_names_absent_and_invalid_variables(pool):
    config = make_config(HOST_WEBHOOK_SECRET=None, HOST_MARKETPLACE_WEBHOOK_SECRET="",
                         SERVICE_ARTIFACT_CAPABILITY_TTL_SECONDS="0")
    result = testing.TestClient(create_app(config, pool)).simulate_get("/api/health/ready")
    assert result.status_code == 503
    assert result.json["reason"] == "missing-configuration"
    assert set(result.json["missing"]) == {
        "HOST_WEBHOOK_SECRET", "HOST_MARKETPLACE_WEBHOOK_SECRET", "SERVICE_ARTIFACT_CAPABILITY_TTL_SECONDS"}
    assert_documented("/api/health/ready", result)
    # Liveness does not depend on configuration.
    assert testing.TestClient(create_app(config, pool)).simulate_get("/api/health/live").status_code == 200


def test_an_invalid_operator_actor_id_is_reported_by_readiness(pool):
    """Set but invalid (a space, too long), the operator's audit name would be
    lost: readiness names the variable (never its value)."""
    for bad in ("has a space", "x" * 201):
        config = make_config(SERVICE_OPERATOR_ACTOR_ID=bad)
        result = testing.TestClient(create_app(config, pool)).simulate_get("/api/health/ready")
        assert result.status_code == 503
        assert (result.json["reason"], result.json["missing"]) == ("missing-configuration",
                                                                  ["SERVICE_OPERATOR_ACTOR_ID"])
        assert bad not in result.text
        assert_documented("/api/health/ready", result)


def test_ttl_must_be_an_integer(pool):
    for bad in ("abc", "-5", "1.5"):
        config = make_config(SERVICE_ARTIFACT_CAPABILITY_TTL_SECONDS=bad)
        result = testing.TestClient(create_app(config, pool)).simulate_get("/api/health/ready")
        assert result.json["missing"] == ["SERVICE_ARTIFACT_CAPABILITY_TTL_SECONDS"]


def test_database_unavailable(config):
    # Nothing listens on port 1: the pool cannot connect.
    dead = database.create_pool("postgresql://postgres@127.0.0.1:1/boardready", max_size=2, name="dead")
    try:
        result = testing.TestClient(create_app(config, dead)).simulate_get("/api/health/ready")
    finally:
        dead.close(timeout=1)
    assert result.status_code == 503
    assert result.json == {"ok": False, "service": "boardready", "check": "readiness",
                           "reason": "database-unavailable"}
    assert_documented("/api/health/ready", result)


def test_database_timeout_when_the_probe_is_blocked(db_url, pool, config):
    # Another session holds an exclusive lock on the table the probe reads:
    # the probe's statement_timeout fires and readiness says so.
    locked, release = threading.Event(), threading.Event()

    def hold_lock():
        with psycopg.connect(db_url) as conn:
            conn.execute("LOCK TABLE boardready.lifecycle_jobs IN ACCESS EXCLUSIVE MODE")
            locked.set()
            release.wait(30)

    holder = threading.Thread(target=hold_lock)
    holder.start()
    try:
        assert locked.wait(10)
        result = testing.TestClient(create_app(config, pool)).simulate_get("/api/health/ready")
    finally:
        release.set()
        holder.join()
    assert result.status_code == 503
    assert result.json["reason"] == "database-timeout"
    assert_documented("/api/health/ready", result)
    # And recovers once the lock is gone.
    assert testing.TestClient(create_app(config, pool)).simulate_get("/api/health/ready").status_code == 200

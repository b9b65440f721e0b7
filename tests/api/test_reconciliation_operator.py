"""What operators see of reconciliation and the SLO policy: GET /metrics and
GET /api/v1/operator/reconciliation behind the operator token, readiness at
/health/ready too, invalid reconciliation settings making readiness 503, and
the ops views."""
from __future__ import annotations

import pytest
from falcon import testing
from prometheus_client.parser import text_string_to_metric_families

from app.web.wsgi import create_app
from contracts import openapi_response_validator
from tests.helpers.access import OPERATOR_ENV, OPERATOR_TOKEN, bearer
from tests.helpers.service import make_config
from tests.helpers.reconciliation import OBSERVATION, later, lifecycle_loop
from tests.helpers.drivers import run_once

AUTH = bearer(OPERATOR_TOKEN)


@pytest.fixture
def ops(pool):
    return testing.TestClient(create_app(make_config(**OPERATOR_ENV), pool))


def samples(text: str) -> dict:
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(text) for s in family.samples}


def drift(owner):
    """One inbox row whose job is gone, for installation 957387 (persisted)."""
    owner.execute("INSERT INTO installations (id, status) VALUES (957387, 'active')")
    owner.execute("INSERT INTO webhook_inbox (provider, delivery_id, idempotency_key, event, action, installation_id, "
                  "actions, payload_sha256, payload_bytes, state, received_at, updated_at, acceptance_ms) "
                  "VALUES ('host', 'd1', 'host:d1', 'installation', 'created', 957387, '{}', 'x', 2, 'accepted', "
                  "now(), now(), 12)")


def test_metrics_need_the_operator_token(ops, client):
    assert ops.simulate_get("/metrics").status_code == 401
    assert ops.simulate_get("/metrics", headers=bearer("op-token-" + "y" * 40)).status_code == 401
    disabled = client.simulate_get("/metrics", headers=AUTH)   # no operator token configured
    assert (disabled.status_code, disabled.json["code"]) == (503, "unavailable")


def test_metrics_expose_the_snapshot(ops, owner, pool):
    drift(owner)
    lifecycle_loop(make_config(), pool).detect(later(OBSERVATION + 1))
    result = ops.simulate_get("/metrics", headers=AUTH)
    assert result.status_code == 200
    assert result.headers["content-type"].startswith("text/plain; version=")
    values = samples(result.text)
    assert values[("boardready_reconciliation_backlog", (("kind", "lifecycle_inbox"),))] == 1
    assert values[("boardready_reconciliation_backlog", (("kind", "release_run"),))] == 0
    assert values[("boardready_queue_items", (("queue", "lifecycle"), ("status", "accepted")))] == 0
    assert values[("boardready_webhook_acceptance_p95_seconds", ())] == pytest.approx(0.012)
    assert values[("boardready_stale_attempts", ())] == 0
    assert values[("boardready_reconciliation_configuration_valid", ())] == 1
    assert ("boardready_reconciler_last_poll_timestamp_seconds", (("reconciler", "lifecycle"),)) in values
    assert "957387" not in result.text and "host:d1" not in result.text


def test_operator_reconciliation_reports_the_fleet(ops, owner, pool):
    unauthenticated = ops.simulate_get("/api/v1/operator/reconciliation")
    assert unauthenticated.status_code == 401
    empty = ops.simulate_get("/api/v1/operator/reconciliation", headers=AUTH)
    assert empty.status_code == 200
    openapi_response_validator("/api/v1/operator/reconciliation", "get", 200).validate(empty.json)
    assert empty.json["lastLifecycleReconciliationPollAt"] is None
    assert empty.json["reconciliationConfigurationValid"] is True

    drift(owner)
    at = later(OBSERVATION + 1)
    run_once(lifecycle_loop(make_config(), pool), at)   # another replica's worker did the work
    body = ops.simulate_get("/api/v1/operator/reconciliation", headers=AUTH).json
    openapi_response_validator("/api/v1/operator/reconciliation", "get", 200).validate(body)
    stamp = at.isoformat().replace("+00:00", "Z")
    assert body["lastLifecycleReconciliationPollAt"] == body["lastSuccessfulLifecycleReconciliationAt"] == stamp
    assert body["lastWorkflowReconciliationPollAt"] is None and body["lastCheckRunReconciliationPollAt"] is None
    lifecycle = next(r for r in body["reconcilers"] if r["reconciler"] == "lifecycle")
    assert (lifecycle["kind"], lifecycle["openItems"], lifecycle["completedItems"]) == ("lifecycle_inbox", 0, 1)
    assert body["settings"] == {"concurrency": 2, "pollMs": 5000, "detectIntervalMs": 30000,
                                "observationSeconds": 300, "deadlineSeconds": 1800, "nextCheckSeconds": 60}


def test_readiness_also_at_health_ready(client):
    for path in ("/api/health/ready", "/health/ready"):
        result = client.simulate_get(path)
        assert result.status_code == 200, result.json
        openapi_response_validator("/health/ready", "get", 200).validate(result.json)
        assert set(result.json) == {"ok", "service", "check", "checks", "effectiveConfiguration"}


@pytest.mark.parametrize("name, value", [
    ("SERVICE_RECONCILIATION_POLL_MS", "99"), ("SERVICE_RECONCILIATION_DETECT_INTERVAL_MS", "soon"),
    ("SERVICE_RECONCILIATION_CONCURRENCY", "0"), ("SERVICE_RECONCILIATION_OBSERVATION_SECONDS", "0"),
    ("SERVICE_RECONCILIATION_NEXT_CHECK_SECONDS", "-5"), ("SERVICE_RECONCILIATION_DEADLINE_SECONDS", "1.5"),
])
def test_invalid_reconciliation_settings_are_not_ready(pool, name, value):
    app = testing.TestClient(create_app(make_config(**{name: value, **OPERATOR_ENV}), pool))
    for path in ("/api/health/ready", "/health/ready"):
        result = app.simulate_get(path)
        assert (result.status_code, result.json["reason"], result.json["missing"]) == \
            (503, "missing-configuration", [name])
        openapi_response_validator("/health/ready", "get", 503).validate(result.json)
    body = app.simulate_get("/api/v1/operator/reconciliation", headers=AUTH).json
    assert body["reconciliationConfigurationValid"] is False


def test_a_deadline_shorter_than_the_observation_window_is_not_ready(pool):
    config = make_config(SERVICE_RECONCILIATION_OBSERVATION_SECONDS="60", SERVICE_RECONCILIATION_DEADLINE_SECONDS="30")
    result = testing.TestClient(create_app(config, pool)).simulate_get("/health/ready")
    assert result.json["missing"] == ["SERVICE_RECONCILIATION_DEADLINE_SECONDS"]


def test_small_values_are_valid(client, pool):
    config = make_config(SERVICE_RECONCILIATION_POLL_MS="100", SERVICE_RECONCILIATION_DETECT_INTERVAL_MS="100",
                         SERVICE_RECONCILIATION_OBSERVATION_SECONDS="1", SERVICE_RECONCILIATION_DEADLINE_SECONDS="1",
                         SERVICE_RECONCILIATION_NEXT_CHECK_SECONDS="1", SERVICE_RECONCILIATION_CONCURRENCY="1")
    assert config.reconciliation.valid and config.missing == ()
    assert testing.TestClient(create_app(config, pool)).simulate_get("/health/ready").status_code == 200


def test_ops_views_for_the_api_role(pool, owner):
    drift(owner)
    run_once(lifecycle_loop(make_config(), pool), later(OBSERVATION + 1))
    with pool.connection() as conn:
        rows = conn.execute("SELECT * FROM ops.reconciliation").fetchall()
        assert [r["reconciler"] for r in rows] == ["workflow", "check_run", "lifecycle"]
        assert rows[2]["completed_items"] == 1 and rows[2]["last_success_at"] is not None
        [item] = conn.execute("SELECT * FROM ops.reconciliation_items").fetchall()
        assert (item["kind"], item["reason_code"], item["outcome"]) == \
            ("lifecycle_inbox", "lifecycle_job_missing", "job_recreated")

"""SERVICE_COMPONENT_*: read in app/config.py (Config.supply), and readiness names an
invalid value (503 missing-configuration) like any other setting's."""
from __future__ import annotations

import pytest
from falcon import testing

from app.config import load_supply
from app.web.wsgi import create_app
from contracts import openapi_response_validator
from tests.helpers.service import make_config


def ready(pool, **env):
    response = testing.TestClient(create_app(make_config(**env), pool)).simulate_get("/api/health/ready")
    openapi_response_validator("/api/health/ready", "get", response.status_code).validate(response.json)
    return response


def test_defaults_are_the_specs_limits_and_supply_is_off_without_a_client():
    settings = load_supply({})
    assert (settings.rate_limit_per_minute, settings.breaker_threshold, settings.breaker_cooldown_ms,
            settings.observation_max_age_hours) == (30, 5, 300_000, 24)
    assert not settings.enabled and settings.missing == ()


def test_ready_with_a_valid_provider_configuration(pool):
    response = ready(pool, SERVICE_COMPONENT_PROVIDER_URL="http://127.0.0.1:9/provider/graphql",
                     SERVICE_COMPONENT_PROVIDER_CLIENT_ID="client-1", SERVICE_COMPONENT_PROVIDER_CLIENT_SECRET="s" * 32,
                     SERVICE_COMPONENT_INTELLIGENCE_RATE_LIMIT_PER_MINUTE="60")
    assert response.status_code == 200, response.json


@pytest.mark.parametrize("env, named", [
    ({"SERVICE_COMPONENT_INTELLIGENCE_RATE_LIMIT_PER_MINUTE": "0"},
     "SERVICE_COMPONENT_INTELLIGENCE_RATE_LIMIT_PER_MINUTE"),
    ({"SERVICE_COMPONENT_INTELLIGENCE_RATE_LIMIT_PER_MINUTE": "thirty"},
     "SERVICE_COMPONENT_INTELLIGENCE_RATE_LIMIT_PER_MINUTE"),
    ({"SERVICE_COMPONENT_INTELLIGENCE_CIRCUIT_BREAKER_THRESHOLD": "-5"},
     "SERVICE_COMPONENT_INTELLIGENCE_CIRCUIT_BREAKER_THRESHOLD"),
    ({"SERVICE_COMPONENT_INTELLIGENCE_CIRCUIT_BREAKER_COOLDOWN_MS": "5m"},
     "SERVICE_COMPONENT_INTELLIGENCE_CIRCUIT_BREAKER_COOLDOWN_MS"),
    ({"SERVICE_COMPONENT_OBSERVATION_MAX_AGE_HOURS": "0"}, "SERVICE_COMPONENT_OBSERVATION_MAX_AGE_HOURS"),
    ({"SERVICE_COMPONENT_PROVIDER_TIMEOUT_MS": "10s"}, "SERVICE_COMPONENT_PROVIDER_TIMEOUT_MS"),
    ({"SERVICE_COMPONENT_PROVIDER_TIMEOUT_MS": "99"}, "SERVICE_COMPONENT_PROVIDER_TIMEOUT_MS"),
    ({"SERVICE_COMPONENT_PROVIDER_TIMEOUT_MS": "120001"}, "SERVICE_COMPONENT_PROVIDER_TIMEOUT_MS"),
    ({"SERVICE_SUPPLY_POLL_MS": "-1"}, "SERVICE_SUPPLY_POLL_MS"),
    ({"SERVICE_SUPPLY_POLL_MS": "9"}, "SERVICE_SUPPLY_POLL_MS"),
    ({"SERVICE_SUPPLY_POLL_MS": "600001"}, "SERVICE_SUPPLY_POLL_MS"),
    ({"SERVICE_COMPONENT_PROVIDER_URL": "ftp://nexar"}, "SERVICE_COMPONENT_PROVIDER_URL"),
    ({"SERVICE_COMPONENT_PROVIDER_TOKEN_URL": "not a url"}, "SERVICE_COMPONENT_PROVIDER_TOKEN_URL"),
    ({"SERVICE_COMPONENT_PROVIDER_CLIENT_ID": "client-1"}, "SERVICE_COMPONENT_PROVIDER_CLIENT_SECRET"),
    ({"SERVICE_COMPONENT_PROVIDER_CLIENT_SECRET": "s" * 32}, "SERVICE_COMPONENT_PROVIDER_CLIENT_ID"),
])
def test_an_invalid_supply_setting_makes_the_service_not_ready_naming_it(pool, env, named):
    response = ready(pool, **env)
    assert response.status_code == 503 and response.json["reason"] == "missing-configuration"
    assert response.json["missing"] == [named]
    assert "s" * 32 not in response.text     # a secret is never echoed

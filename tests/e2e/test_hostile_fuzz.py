"""schemathesis against the served service: every operation of the document
the service serves (GET /api/openapi.json), a bounded number of generated
requests each, with the bearer and operator credentials made here and the
failure limits raised for the run. No answer may be a 5xx, and every answer
must be one the document describes (status, content type, schema)."""
from __future__ import annotations

import uuid

import emulator
import psycopg
import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis import checks

from app import config as config_module
from app import database, migrations
from app.serve import Service
from tests.helpers.access import OPERATOR_ENV, OPERATOR_TOKEN, create_token, seed_repository
from tests.helpers.service import MARKETPLACE_SECRET, WEBHOOK_SECRET, free_port

EXAMPLES_PER_OPERATION = 30
REPO = 1296269
CHECKS = [checks.not_a_server_error, checks.status_code_conformance, checks.content_type_conformance,
          checks.response_schema_conformance]


@pytest.fixture(scope="module")
def host():
    with emulator.start() as handle:
        yield handle


@pytest.fixture(scope="module")
def fuzzed_service(pg_server, template_db, host):
    # The code host, its OAuth pages and its OIDC issuer are the emulator, so
    # that sign-in and the callbacks meet a real (refusing) host, not a 503.
    bind = f"127.0.0.1:{free_port()}"
    app = host.register_app(callback_urls=[f"http://{bind}/auth/callback"])
    name = f"boardready_fuzz_{uuid.uuid4().hex[:8]}"
    janitor = pg_server.janitor(name, template_dbname=template_db)
    janitor.init()
    url = pg_server.url(name)
    env = {"HOST_WEBHOOK_SECRET": WEBHOOK_SECRET, "HOST_MARKETPLACE_WEBHOOK_SECRET": MARKETPLACE_SECRET,
           "HOST_APP_ID": str(app["id"]), "HOST_APP_PRIVATE_KEY": app["private_key_pem"],
           "HOST_API_URL": host.url, "HOST_WEB_URL": host.url, "HOST_OAUTH_CLIENT_ID": app["client_id"],
           "HOST_OAUTH_CLIENT_SECRET": app["client_secret"], "SERVICE_PUBLIC_URL": f"http://{bind}",
           "SERVICE_OIDC_AUDIENCE": "boardready-test", "SERVICE_OIDC_ISSUER": host.oidc_issuer, "SERVICE_BIND": bind,
           "SERVICE_WEB_CONCURRENCY": "1", "SERVICE_WEB_THREADS": "4",
           "SERVICE_AUTH_RATE_LIMIT_PER_MINUTE": "100000", "SERVICE_OPERATOR_RATE_LIMIT_PER_MINUTE": "100000",
           # Report uploads on, so that the fuzz reaches the upload's checks rather than its 503.
           "SERVICE_ARTIFACT_SIGNING_KEY": "fuzz-artifact-signing-key-0123456789abcdef",
           **OPERATOR_ENV}
    migrations.migrate(url)
    with psycopg.connect(url, autocommit=True) as conn:
        seed_repository(conn, account_id=18404719, installation_id=501, repository_id=REPO, login="username")
    pool = database.create_pool(url, max_size=2, name="fuzz-setup", open_wait_seconds=10)
    admin, _ = create_token(pool, REPO, scopes=["admin", "runs:write", "reviews:read", "reviews:write"])
    pool.close()
    service = Service(config_module.load(env), url, with_workers=False, extra_env=env).start()
    yield service, {"bearerToken": admin, "operatorToken": OPERATOR_TOKEN}
    service.stop()
    janitor.drop()


@pytest.fixture(scope="module")
def served_schema(fuzzed_service):
    service, _ = fuzzed_service
    schema = schemathesis.openapi.from_url(f"{service.base_url}/api/openapi.json")
    schema.config.update(base_url=service.base_url)
    return schema


schema = schemathesis.pytest.from_fixture("served_schema")


def credentials_for(case, tokens: dict) -> dict:
    """The Authorization header of the operation's security scheme (none for the webhooks and health)."""
    for requirement in case.operation.definition.raw.get("security", []):
        for scheme in requirement:
            if scheme in tokens:
                return {"Authorization": f"Bearer {tokens[scheme]}"}
    return {}


@schema.parametrize()
@settings(max_examples=EXAMPLES_PER_OPERATION, deadline=None, database=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
def test_no_5xx_and_every_answer_documented(case, fuzzed_service):
    _, tokens = fuzzed_service
    headers = credentials_for(case, tokens)  # replaces any generated Authorization header
    case.call_and_validate(headers=headers, checks=CHECKS, timeout=30)

"""Arranging accounts, installations, repositories and tokens for the access tests."""
from __future__ import annotations

import datetime as dt
import json
import uuid

from app import api_tokens, sql_api
from tests.helpers.paths import webhook_fixture, webhook_fixture_json
from tests.helpers.service import MARKETPLACE_SECRET, make_lifecycle_jobs, post_webhook, webhook_headers

MARKETPLACE_PATH = "/api/host/marketplace/webhook"
OPERATOR_TOKEN = "op-token-" + "x" * 40
OPERATOR_ACTOR = "ops.alice:oncall"


def marketplace_body(name: str, *, effective_date: str | None = None, account_id: int | None = None,
                     action: str | None = None) -> bytes:
    """A real marketplace_purchase payload, optionally moved to another date, account or action."""
    payload = webhook_fixture_json(name)
    if effective_date is not None:
        payload["effective_date"] = effective_date
    if account_id is not None:
        payload["marketplace_purchase"]["account"]["id"] = account_id
    if action is not None:
        payload["action"] = action
    return json.dumps(payload).encode()


def post_marketplace(client, body: bytes, delivery_id: str | None = None, event: str = "marketplace_purchase",
                     secret: str = MARKETPLACE_SECRET):
    return client.simulate_post(MARKETPLACE_PATH, body=body, headers=webhook_headers(
        body, event, delivery_id or str(uuid.uuid4()), secret=secret))


def seed_repository(owner, *, account_id: int, installation_id: int, repository_id: int,
                    full_name: str | None = None, login: str = "acme", account_type: str = "Organization",
                    removed: bool = False) -> int:
    owner.execute("INSERT INTO boardready.accounts (id, login, type) VALUES (%s, %s, %s) ON CONFLICT DO NOTHING",
                  (account_id, login, account_type))
    owner.execute("INSERT INTO boardready.installations (id, account_id) VALUES (%s, %s) ON CONFLICT DO NOTHING",
                  (installation_id, account_id))
    owner.execute("INSERT INTO boardready.repositories (id, installation_id, full_name, removed_at) "
                  "VALUES (%s, %s, %s, CASE WHEN %s THEN now() END)",
                  (repository_id, installation_id, full_name or f"{login}/repo-{repository_id}", removed))
    return repository_id


def create_token(pool, repository_id: int, scopes=api_tokens.DEFAULT_SCOPES, duration_days: int | None = None,
                 name: str = "ci", now=None) -> tuple[str, str]:
    """(value, token id) of a new token, made through the SQL function the API uses."""
    new = api_tokens.generate()
    with pool.connection() as conn:
        row = sql_api.token_create(conn, repository_id=repository_id, name=name, scopes=list(scopes),
                                   duration_days=duration_days, token_sha256=new.sha256, token_prefix=new.prefix,
                                   created_by="test", now=sql_api.DEFAULT if now is None else now)
    assert row["outcome"] == "created", row
    return new.value, str(row["token_id"])


def bearer(value: str, **extra) -> dict:
    return {"Authorization": f"Bearer {value}", **extra}


class Clock:
    """A settable clock for the auth paths (they pass it to SQL as p_now)."""

    def __init__(self, start):
        self.value = start

    def __call__(self):
        return self.value

    def advance(self, **delta):
        import datetime as dt
        self.value = self.value + dt.timedelta(**delta)


def install_clock(monkeypatch, start) -> Clock:
    """Replace the auth paths' clock with a settable one starting at `start`."""
    from app.web import auth_throttle

    clock = Clock(start)
    monkeypatch.setattr(auth_throttle, "now", clock)
    return clock


OPERATOR_ENV = {"SERVICE_OPERATOR_API_TOKEN": OPERATOR_TOKEN, "SERVICE_OPERATOR_ACTOR_ID": OPERATOR_ACTOR}


def dead_letter(client, owner, installation_id: int, delivery_id: str, failed_at: dt.datetime,
                repository_id: int = 1296269, reason="host_unavailable") -> int:
    """A real pull_request delivery whose job then failed for good."""
    payload = json.loads(webhook_fixture("pull_request.opened.12.json"))
    payload["installation"]["id"] = installation_id
    payload["repository"]["id"] = repository_id
    assert post_webhook(client, json.dumps(payload).encode(), "pull_request", delivery_id=delivery_id).status_code == 202
    make_lifecycle_jobs(owner)
    return owner.execute(
        "UPDATE lifecycle_jobs SET status = 'dead_letter', attempts = 3, reason_code = %s, error_class = 'HostError',"
        " failed_at = %s WHERE idempotency_key = %s RETURNING id",
        (reason, failed_at, f"host:{delivery_id}")).fetchone()["id"]

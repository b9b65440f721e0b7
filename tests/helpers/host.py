"""The code host emulator wired to a service under test: an app, an
installation with one repository, and pull requests whose webhooks are
delivered to the service's Falcon app in process."""
from __future__ import annotations

import json
import uuid
from dataclasses import dataclass

from app.host import client as host_client
from app.host.client import HostClient
from emulator import openapi_check
from tests.helpers.service import make_config, post_webhook
from workers.lifecycle import LifecycleQueue
from app.host.outbox import OutboxQueue
from workers.queue_worker import QueueWorker
from tests.helpers.drivers import run_until_idle

REPOSITORY = "acme-hw/blinky-board"


@dataclass
class HostKit:
    host: object          # the emulator handle
    app: dict
    installation: dict
    repository: dict
    config: object

    def host_client(self) -> HostClient:
        return host_client.from_config(self.config)

    def pull_request_payload(self, pr: dict, action: str) -> dict:
        return {
            "action": action, "number": pr["number"],
            "installation": {"id": self.installation["id"]},
            "repository": {"id": self.repository["id"], "name": REPOSITORY.split("/")[1], "full_name": REPOSITORY,
                           "private": True, "default_branch": self.repository.get("default_branch", "main")},
            "pull_request": {"number": pr["number"], "state": "open", "draft": pr.get("draft", False),
                             "head": {"sha": pr["head"]["sha"], "ref": pr["head"]["ref"]},
                             "base": {"ref": pr["base"]["ref"]}},
        }

    def deliver_pull_request(self, client, pr: dict, action: str = "opened"):
        body = json.dumps(self.pull_request_payload(pr, action)).encode()
        result = post_webhook(client, body, "pull_request", delivery_id=str(uuid.uuid4()))
        assert result.status_code == 202, result.json
        return result

    def service_requests(self, operation_id: str | None = None) -> list[dict]:
        return self.host.requests(operation_id=operation_id)


def make_hostkit(host, public_url: str | None = None, **config_overrides) -> HostKit:
    """With `public_url` (where the service will be served) the app's OAuth callback is
    registered there and sign-in with the code host is configured."""
    app = host.register_app(callback_urls=[public_url + "/auth/callback"] if public_url else None)
    installation = host.create_installation("acme-hw", account_type="Organization")
    repository = host.create_repository(REPOSITORY, installation_id=installation["id"])
    settings = {"HOST_APP_ID": str(app["id"]), "HOST_APP_PRIVATE_KEY": app["private_key_pem"], "HOST_API_URL": host.url}
    if public_url:
        settings.update(HOST_WEB_URL=host.url, HOST_OAUTH_CLIENT_ID=app["client_id"],
                        HOST_OAUTH_CLIENT_SECRET=app["client_secret"], SERVICE_PUBLIC_URL=public_url)
    config = make_config(**{**settings, **config_overrides})
    return HostKit(host, app, installation, repository, config)


def run_lifecycle(kit: HostKit, pool, db_url) -> int:
    return run_until_idle(QueueWorker(LifecycleQueue(kit.config), pool, db_url, concurrency=2, poll_ms=50))


def run_outbox(kit: HostKit, pool, db_url, client: HostClient | None = None) -> int:
    host_client = client or kit.host_client()
    try:
        return run_until_idle(QueueWorker(OutboxQueue(kit.config, host_client), pool, db_url, concurrency=1,
                                          poll_ms=50))
    finally:
        if client is None:
            host_client.close()


def assert_requests_match_the_rest_description(kit: HostKit) -> int:
    """Every request the service sent, and every answer it got, against the host's REST description."""
    checked = 0
    for entry in kit.host.requests():
        # The OIDC issuer and the OAuth pages are not part of the REST API.
        if entry.get("operation_id") is None or entry["path"].startswith(("/oidc/", "/login/")):
            continue
        openapi_check.validate_request(entry["method"], entry["path"], entry.get("body"))
        checked += 1
    return checked

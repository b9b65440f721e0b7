"""Webhook deliveries: payloads built from the emulator's state in the real shapes,
signed and POSTed the way the real host does it.

Headers: ``X-GitHub-Event``, ``X-GitHub-Delivery`` (a UUID; a redelivery reuses
it), ``X-GitHub-Hook-ID``, ``X-GitHub-Hook-Installation-Target-Type/-ID``,
``X-Hub-Signature-256: sha256=<hex HMAC-SHA256(raw body, secret)>`` (and the legacy
SHA-1 ``X-Hub-Signature``), ``User-Agent: GitHub-Hookshot/emulator``. The interface
spec names the neutral headers ``X-Host-Event``/``X-Host-Delivery``; the sender adds
them with the same values so a receiver written against either name works.
"""
from __future__ import annotations

import hashlib
import hmac
import json
import threading
import uuid
from dataclasses import dataclass, field

import httpx

from emulator import shapes
from emulator.state import Account, App, Installation, PullRequest, Repository, iso, utcnow

COMMUNITY_PLAN = {
    "id": 1001,
    "name": "Community",
    "description": "Free release-readiness checks for KiCad repositories.",
    "monthly_price_in_cents": 0,
    "yearly_price_in_cents": 0,
    "price_model": "FREE",
    "has_free_trial": False,
    "unit_name": None,
    "bullets": [
        "Automated pull-request checks and readiness scoring",
        "ERC/DRC rule enforcement and fabrication linting",
        "One watched board for supply tracking",
        "Interactive report artifact",
        "30-day retention of run summaries",
    ],
}


def signature_256(raw: bytes, secret: str) -> str:
    return "sha256=" + hmac.new(secret.encode(), raw, hashlib.sha256).hexdigest()


def default_sender(account: Account) -> Account:
    # Events are sent by a person: the account itself when it is a user, else an org admin.
    if account.type == "User":
        return account
    return Account(f"{account.login}-admin", 1_000_000 + account.id % 1_000_000, "User")


# ---- payloads ---------------------------------------------------------------------------------

def installation_payload(base: str, action: str, inst: Installation, app: App, repos: list[Repository], sender: Account) -> dict:
    return {
        "action": action,
        "installation": shapes.installation(base, inst, app),
        "repositories": [shapes.webhook_repository(base, r) for r in repos],
        "requester": None,
        "sender": shapes.simple_user(base, sender),
    }


def organization_member_removed_payload(base: str, inst: Installation, member: Account, sender: Account) -> dict:
    """``organization`` ``member_removed``, as an app installed on the organization receives it
    (the shape of tests/fixtures/webhooks/organization.member_removed.ghes-35.json plus the installation)."""
    org = inst.account
    api = f"{base}/orgs/{org.login}"
    return {
        "action": "member_removed",
        "membership": {"url": f"{api}/memberships/{member.login}", "state": "inactive", "role": "unaffiliated",
                       "organization_url": api, "user": shapes.simple_user(base, member)},
        "organization": {"login": org.login, "id": org.id, "node_id": shapes.node_id("Organization", org.id),
                         "url": api, "repos_url": f"{api}/repos", "events_url": f"{api}/events",
                         "hooks_url": f"{api}/hooks", "issues_url": f"{api}/issues",
                         "members_url": f"{api}/members{{/member}}",
                         "public_members_url": f"{api}/public_members{{/member}}",
                         "avatar_url": f"{base}/avatars/u/{org.id}?v=4", "description": None},
        "installation": {"id": inst.id, "node_id": shapes.node_id("Installation", inst.id)},
        "sender": shapes.simple_user(base, sender),
    }


def member_removed_payload(base: str, inst: Installation, repo: Repository, member: Account, sender: Account) -> dict:
    """``member`` ``removed``: a collaborator removed from a repository (the shape of
    tests/fixtures/webhooks/member.added.0.json, action removed, plus the installation)."""
    return {
        "action": "removed",
        "member": shapes.simple_user(base, member),
        "repository": shapes.webhook_repository(base, repo),
        "installation": {"id": inst.id, "node_id": shapes.node_id("Installation", inst.id)},
        "sender": shapes.simple_user(base, sender),
    }


def installation_repositories_payload(
    base: str, action: str, inst: Installation, app: App, added: list[Repository], removed: list[Repository], sender: Account
) -> dict:
    return {
        "action": action,
        "installation": shapes.installation(base, inst, app),
        "repository_selection": inst.repository_selection,
        "repositories_added": [shapes.webhook_repository(base, r) for r in added],
        "repositories_removed": [shapes.webhook_repository(base, r) for r in removed],
        "requester": None,
        "sender": shapes.simple_user(base, sender),
    }


def pull_request_payload(
    base: str, action: str, repo: Repository, pull: PullRequest, sender: Account, before: str | None = None
) -> dict:
    payload = {
        "action": action,
        "number": pull.number,
        "pull_request": shapes.pull_request(base, repo, pull),
    }
    if action == "synchronize":
        payload["before"] = before
        payload["after"] = pull.head_sha
    full_repo = shapes.repository(base, repo)
    full_repo.pop("permissions", None)
    payload.update(
        {
            "repository": full_repo,
            "installation": {"id": repo.installation_id, "node_id": shapes.node_id("Installation", repo.installation_id or 0)},
            "sender": shapes.simple_user(base, sender),
        }
    )
    return payload


def ping_payload(base: str, app: App, hook_id: int, url: str, events: list) -> dict:
    now = iso(utcnow())
    return {
        "zen": "Design for failure.",
        "hook_id": hook_id,
        "hook": {
            "type": "App",
            "id": hook_id,
            "name": "web",
            "active": True,
            "events": events,
            "config": {"content_type": "json", "insecure_ssl": "0", "url": url},
            "updated_at": now,
            "created_at": now,
            "app_id": app.id,
            "deliveries_url": f"{base}/app/hook/deliveries",
        },
        "sender": shapes.simple_user(base, app.owner),
    }


def marketplace_purchase_payload(
    base: str,
    action: str,
    account: Account,
    plan: dict | None = None,
    effective_date: str | None = None,
    previous_plan: dict | None = None,
    sender: Account | None = None,
) -> dict:
    def purchase(which_plan: dict) -> dict:
        return {
            "account": {
                "type": account.type,
                "id": account.id,
                "node_id": shapes.node_id(account.type, account.id),
                "login": account.login,
                "organization_billing_email": f"billing@{account.login.lower()}.example" if account.type == "Organization" else None,
            },
            "billing_cycle": "monthly",
            "unit_count": 1,
            "on_free_trial": False,
            "free_trial_ends_on": None,
            "next_billing_date": None,
            "plan": dict(which_plan),
        }

    sender_shape = shapes.simple_user(base, sender or default_sender(account))
    sender_shape["email"] = None
    payload = {
        "action": action,
        "effective_date": effective_date or utcnow().strftime("%Y-%m-%dT%H:%M:%S+00:00"),
        "sender": sender_shape,
        "marketplace_purchase": purchase(plan or COMMUNITY_PLAN),
    }
    if action in ("changed", "pending_change") or previous_plan is not None:
        payload["previous_marketplace_purchase"] = purchase(previous_plan or COMMUNITY_PLAN)
    return payload


# ---- delivery ---------------------------------------------------------------------------------

@dataclass
class Target:
    url: str | None = None
    secret: str | None = None


@dataclass
class Delivery:
    id: str
    event: str
    action: str | None
    target: str
    raw: bytes = field(repr=False)
    status: int | None = None
    error: str | None = None
    response_body: str | None = None
    attempts: int = 0

    def to_dict(self) -> dict:
        return {
            "delivery_id": self.id,
            "event": self.event,
            "action": self.action,
            "target": self.target,
            "status": self.status,
            "error": self.error,
            "response_body": self.response_body,
            "attempts": self.attempts,
            "payload": json.loads(self.raw),
        }


class WebhookSender:
    """Delivers synchronously, so a caller knows the receiver's answer on return."""

    def __init__(self, timeout_seconds: float = 10.0):
        self.targets = {"app": Target(), "marketplace": Target()}
        self.timeout_seconds = timeout_seconds
        self.hook_ids = {"app": 400_000_001, "marketplace": 400_000_002}
        self._lock = threading.Lock()
        self._deliveries: dict[str, Delivery] = {}

    def configure(self, target: str, url: str | None = None, secret: str | None = None) -> None:
        with self._lock:
            if url is not None:
                self.targets[target].url = url
            if secret is not None:
                self.targets[target].secret = secret

    def is_configured(self, target: str) -> bool:
        return bool(self.targets[target].url)

    def send(self, event: str, payload: dict, target: str = "app", installation_id: int | None = None) -> dict:
        raw = json.dumps(payload, separators=(",", ":")).encode()
        delivery = Delivery(id=str(uuid.uuid4()), event=event, action=payload.get("action"), target=target, raw=raw)
        with self._lock:
            self._deliveries[delivery.id] = delivery
        self._post(delivery, installation_id)
        return delivery.to_dict()

    def redeliver(self, delivery_id: str) -> dict:
        """Send a past delivery again: same body, same X-GitHub-Delivery, as the host's 'Redeliver'."""
        with self._lock:
            delivery = self._deliveries[delivery_id]
        self._post(delivery, None)
        return delivery.to_dict()

    def deliveries(self) -> list[dict]:
        with self._lock:
            return [d.to_dict() for d in self._deliveries.values()]

    def clear(self) -> None:
        with self._lock:
            self._deliveries.clear()

    def _post(self, delivery: Delivery, installation_id: int | None) -> None:
        target = self.targets[delivery.target]
        delivery.attempts += 1
        if not target.url:
            delivery.status, delivery.error = None, f"no {delivery.target} webhook URL is configured"
            return
        headers = {
            "Content-Type": "application/json",
            "Accept": "*/*",
            "User-Agent": "GitHub-Hookshot/emulator",
            "X-GitHub-Event": delivery.event,
            "X-GitHub-Delivery": delivery.id,
            "X-GitHub-Hook-ID": str(self.hook_ids[delivery.target]),
            "X-GitHub-Hook-Installation-Target-Type": "integration",
            "X-GitHub-Hook-Installation-Target-ID": str(installation_id or 0),
            "X-Host-Event": delivery.event,
            "X-Host-Delivery": delivery.id,
        }
        if target.secret:
            headers["X-Hub-Signature-256"] = signature_256(delivery.raw, target.secret)
            headers["X-Hub-Signature"] = "sha1=" + hmac.new(target.secret.encode(), delivery.raw, hashlib.sha1).hexdigest()
        try:
            response = httpx.post(target.url, content=delivery.raw, headers=headers, timeout=self.timeout_seconds)
            delivery.status, delivery.error = response.status_code, None
            delivery.response_body = response.text[:2000]
        except httpx.HTTPError as exc:
            delivery.status, delivery.error = None, f"{type(exc).__name__}: {exc}"

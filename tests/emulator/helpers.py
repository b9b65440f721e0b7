"""What the emulator tests share that is not a fixture: a client that checks
every answer against the code host's REST description, and an installed app."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import httpx

import emulator

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures"
DESCRIPTION = FIXTURES / "code-host" / "rest-openapi-subset.json"


class HostClient:
    def __init__(self, base_url: str, description, token: str | None = None):
        self.http = httpx.Client(base_url=base_url, timeout=10)
        self.description = description
        self.token = token

    def request(self, method: str, path: str, token: str | None = None, auth_scheme: str = "token",
                validate: bool = True, **kwargs) -> httpx.Response:
        headers = kwargs.pop("headers", {})
        token = token if token is not None else self.token
        if token:
            headers.setdefault("Authorization", f"{auth_scheme} {token}")
        headers.setdefault("Accept", "application/vnd.github+json")
        response = self.http.request(method, path, headers=headers, **kwargs)
        if validate:
            self.check(method, path, response)
        return response

    def check(self, method: str, path: str, response: httpx.Response) -> None:
        """Validate against the description when it documents this status."""
        op, _ = self.description.find(method, path)
        if str(response.status_code) in op.spec.get("responses", {}):
            body = response.json() if response.content else None
            self.description.validate_response(method, path, response.status_code, body)

    def get(self, path, **kw):
        return self.request("GET", path, **kw)

    def post(self, path, **kw):
        return self.request("POST", path, **kw)

    def patch(self, path, **kw):
        return self.request("PATCH", path, **kw)

    def delete(self, path, **kw):
        return self.request("DELETE", path, **kw)


@dataclass
class Installed:
    """An app installed on one organization with one repository, and a live token."""

    emu: emulator.Emulator
    app: dict
    installation: dict
    repo: dict
    token: str
    client: HostClient

    @property
    def full_name(self) -> str:
        return self.repo["full_name"]


def exchange_token(host: HostClient, emu, installation_id: int, **body) -> httpx.Response:
    return host.post(f"/app/installations/{installation_id}/access_tokens", token=emu.app_jwt(),
                     auth_scheme="Bearer", json=body or None)

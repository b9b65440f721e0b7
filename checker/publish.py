"""Sending a run result to the service: --publish (API token) and --runner (OIDC).

The only network calls the checker makes. Both canonicalise with RFC 8785 so
the digest the service recomputes matches byte for byte.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

import httpx
import rfc8785

TIMEOUT_SECONDS = 30.0
_SHA = re.compile(r"^[0-9a-f]{40}$")


class PublishError(Exception):
    """The service (or the token endpoint) refused; ``code`` is the service's stable code."""

    def __init__(self, code: str, message: str):
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


class RunnerEnvironmentError(Exception):
    """A variable or input the runner mode needs is missing or malformed (exit 2)."""


def digest(result: dict) -> str:
    return "sha256:" + hashlib.sha256(rfc8785.dumps(result)).hexdigest()


def _refusal(response: httpx.Response) -> PublishError:
    try:
        body = response.json()
        code = str(body.get("code") or f"http_{response.status_code}")
        message = str(body.get("message") or response.reason_phrase)
    except (ValueError, AttributeError):
        code, message = f"http_{response.status_code}", response.text[:200]
    return PublishError(code, message)


def publish(result: dict, service_url: str, api_token: str, client: httpx.Client | None = None) -> dict:
    """POST {SERVICE_URL}/api/v1/runs with the API token."""
    with client or httpx.Client(timeout=TIMEOUT_SECONDS) as http:
        response = http.post(service_url.rstrip("/") + "/api/v1/runs", json=result,
                             headers={"Authorization": f"Bearer {api_token}"})
    if not response.is_success:
        raise _refusal(response)
    return response.json() if response.content else {}


@dataclass
class RunnerContext:
    """What a real workflow runner provides, and nothing else."""

    attempt_id: str
    head_sha: str
    pull_request: str
    workspace: Path
    repository: str
    run_id: str
    run_attempt: str
    token_url: str
    token_request_token: str
    service_url: str
    audience: str

    @classmethod
    def from_environment(cls, env: dict[str, str] | None = None) -> RunnerContext:
        env = dict(os.environ if env is None else env)
        needed = ["GITHUB_EVENT_PATH", "GITHUB_WORKSPACE", "GITHUB_REPOSITORY", "GITHUB_RUN_ID",
                  "GITHUB_RUN_ATTEMPT", "ACTIONS_ID_TOKEN_REQUEST_URL", "ACTIONS_ID_TOKEN_REQUEST_TOKEN",
                  "SERVICE_URL", "SERVICE_OIDC_AUDIENCE"]
        missing = [name for name in needed if not env.get(name)]
        if missing:
            raise RunnerEnvironmentError(f"runner mode needs {', '.join(missing)} (is id-token: write granted?)")
        try:
            event = json.loads(Path(env["GITHUB_EVENT_PATH"]).read_text(encoding="utf-8"))
            inputs = event.get("inputs") or {}
        except (OSError, ValueError, AttributeError) as exc:
            raise RunnerEnvironmentError(f"cannot read the event file: {exc}") from None
        attempt_id = str(inputs.get("attempt_id") or "")
        head_sha = str(inputs.get("head_sha") or "").lower()
        if not attempt_id:
            raise RunnerEnvironmentError("dispatch input attempt_id is missing")
        if not _SHA.match(head_sha):
            raise RunnerEnvironmentError("dispatch input head_sha must be 40 hex characters")
        return cls(attempt_id=attempt_id, head_sha=head_sha, pull_request=str(inputs.get("pull_request") or ""),
                   workspace=Path(env["GITHUB_WORKSPACE"]), repository=env["GITHUB_REPOSITORY"],
                   run_id=env["GITHUB_RUN_ID"], run_attempt=env["GITHUB_RUN_ATTEMPT"],
                   token_url=env["ACTIONS_ID_TOKEN_REQUEST_URL"],
                   token_request_token=env["ACTIONS_ID_TOKEN_REQUEST_TOKEN"],
                   service_url=env["SERVICE_URL"], audience=env["SERVICE_OIDC_AUDIENCE"])


def request_id_token(context: RunnerContext, client: httpx.Client) -> str:
    separator = "&" if "?" in context.token_url else "?"
    url = f"{context.token_url}{separator}audience={quote(context.audience, safe='')}"
    response = client.get(url, headers={"Authorization": f"Bearer {context.token_request_token}"})
    if not response.is_success:
        raise PublishError("id_token_unavailable", f"token endpoint answered {response.status_code}")
    try:
        token = response.json()["value"]
    except (ValueError, KeyError, TypeError):
        raise PublishError("id_token_unavailable", "token endpoint answered without a 'value'") from None
    if not isinstance(token, str) or not token:
        raise PublishError("id_token_unavailable", "empty ID token")
    return token


def runner_envelope(result: dict, context: RunnerContext) -> dict:
    return {"attemptId": context.attempt_id, "result": result, "digest": digest(result)}


def send_runner_result(result: dict, context: RunnerContext, client: httpx.Client | None = None) -> dict:
    """Fetch the OIDC token and POST the attempt-bound result to the callback."""
    with client or httpx.Client(timeout=TIMEOUT_SECONDS) as http:
        token = request_id_token(context, http)
        response = http.post(context.service_url.rstrip("/") + "/api/v1/runs/github-actions-result",
                             content=json.dumps(runner_envelope(result, context)).encode("utf-8"),
                             headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"})
    if not response.is_success:
        raise _refusal(response)
    return response.json() if response.content else {}


def report_reference(report: bytes) -> dict:
    """The result's reference to the HTML report the runner uploads after it."""
    return {"mediaType": "text/html", "sha256": hashlib.sha256(report).hexdigest(), "bytes": len(report)}


def send_report_artifact(report: bytes, context: RunnerContext, client: httpx.Client | None = None) -> dict:
    """Upload the HTML report after the result, with a fresh ID token for the same attempt."""
    with client or httpx.Client(timeout=TIMEOUT_SECONDS) as http:
        token = request_id_token(context, http)
        response = http.post(context.service_url.rstrip("/") + "/api/v1/runs/github-actions-artifact",
                             params={"attemptId": context.attempt_id}, content=report,
                             headers={"Authorization": f"Bearer {token}", "Content-Type": "text/html; charset=utf-8"})
    if not response.is_success:
        raise _refusal(response)
    return response.json() if response.content else {}

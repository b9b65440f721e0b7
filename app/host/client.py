"""The code host REST calls the outbox makes, with real paths and bodies
(see tests/fixtures/code-host/rest-openapi-subset.json)."""
from __future__ import annotations

import datetime as dt
import time
from urllib.parse import quote

import httpx

from app import telemetry
from app.config import Secret
from app.host.app_auth import InstallationTokens, app_jwt
from app.host.errors import HostError, HostRetryable, HostUncertain, classify_response

API_VERSION = "2022-11-28"
CHECK_RUN_NAME = "boardready / release readiness"
WORKFLOW_FILE = "readiness-runner.yml"


def _repo_path(full_name: str) -> str:
    owner, name = full_name.split("/", 1)
    return f"/repos/{quote(owner, safe='')}/{quote(name, safe='')}"


def from_config(config) -> HostClient | None:
    """The service's client for the code host, or None when the app is not configured
    (readiness names the missing variables; nothing that needs the host runs)."""
    if not (config.host_app_id and config.host_app_private_key):
        return None
    return HostClient(config.host_api_url, config.host_app_id, config.host_app_private_key,
                      timeout_ms=config.host_timeout_ms)


class HostClient:
    def __init__(self, api_url: str, app_id: str, private_key: Secret, timeout_ms: int = 10_000,
                 transport: httpx.BaseTransport | None = None):
        self.app_id = app_id
        self.private_key = private_key
        timeout = timeout_ms / 1000
        self.http = httpx.Client(
            base_url=api_url, transport=transport,
            timeout=httpx.Timeout(timeout, connect=min(timeout, 5.0)),
            headers={"Accept": "application/vnd.github+json", "X-GitHub-Api-Version": API_VERSION,
                     "User-Agent": "boardready"})
        self.tokens = InstallationTokens(self._fetch_installation_token)

    def close(self) -> None:
        self.http.close()

    # -- transport and classification --------------------------------------
    def _send(self, method: str, path: str, auth: str, json: dict | None = None, params: dict | None = None):
        """One request, counted by outcome for /metrics (ok, or the error's reason code)."""
        started, outcome = time.perf_counter(), "ok"
        try:
            return self._exchange(method, path, auth, json, params)
        except HostError as exc:
            outcome = exc.reason_code
            raise
        finally:
            telemetry.record_host_call(method, outcome, time.perf_counter() - started)

    def _exchange(self, method: str, path: str, auth: str, json: dict | None, params: dict | None):
        try:
            response = self.http.request(method, path, json=json, params=params,
                                         headers={"Authorization": auth})
        except (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout) as exc:
            # The request never reached the host: safe to send again.
            raise HostRetryable(f"connection failed: {type(exc).__name__}", reason_code="host_unreachable") from None
        except (httpx.ReadTimeout, httpx.WriteTimeout, httpx.RemoteProtocolError, httpx.ReadError) as exc:
            raise HostUncertain(f"no answer after sending: {type(exc).__name__}") from None
        error = classify_response(response)
        if error:
            raise error
        return response

    def _installation_call(self, installation_id: int, method: str, path: str, json: dict | None = None,
                           params: dict | None = None):
        token = self.tokens.get(installation_id)
        try:
            return self._send(method, path, f"token {token.reveal()}", json=json, params=params)
        except HostError as exc:
            if exc.status == 401:
                self.tokens.invalidate(installation_id)
            raise

    def _fetch_installation_token(self, installation_id: int) -> tuple[Secret, dt.datetime]:
        response = self._send("POST", f"/app/installations/{int(installation_id)}/access_tokens",
                              f"Bearer {app_jwt(self.app_id, self.private_key)}")
        body = response.json()
        expires_at = dt.datetime.fromisoformat(body["expires_at"].replace("Z", "+00:00"))
        return Secret(body["token"]), expires_at

    def installation(self, installation_id: int) -> dict:
        """The installation as the code host has it now (its `suspended_at`), with the app's JWT."""
        return self._send("GET", f"/app/installations/{int(installation_id)}",
                          f"Bearer {app_jwt(self.app_id, self.private_key)}").json()

    # -- people ----------------------------------------------------------------
    def collaborator_permission(self, installation_id: int, repository: str, username: str) -> dict:
        """A person's permission on a repository ({"permission", "role_name", "user"}), re-read
        before a session's change when its rights are older than SERVICE_PERMISSION_TTL_SECONDS."""
        return self._installation_call(
            installation_id, "GET",
            f"{_repo_path(repository)}/collaborators/{quote(username, safe='')}/permission").json()

    def user(self, installation_id: int, user_id: int) -> dict:
        """A person by their durable id (their current login), with the installation's token."""
        return self._installation_call(installation_id, "GET", f"/user/{int(user_id)}").json()

    # -- check runs ----------------------------------------------------------
    def find_check_run(self, installation_id: int, repository: str, head_sha: str, external_id: str) -> dict | None:
        """Our check run for this head, found by external_id (after a crash between create and report)."""
        response = self._installation_call(
            installation_id, "GET", f"{_repo_path(repository)}/commits/{head_sha}/check-runs",
            params={"check_name": CHECK_RUN_NAME, "filter": "all", "per_page": 100})
        for check_run in response.json().get("check_runs", []):
            if check_run.get("external_id") == external_id:
                return check_run
        return None

    def create_check_run(self, installation_id: int, repository: str, head_sha: str, external_id: str,
                         summary: str) -> dict:
        return self._installation_call(installation_id, "POST", f"{_repo_path(repository)}/check-runs", json={
            "name": CHECK_RUN_NAME, "head_sha": head_sha, "external_id": external_id, "status": "queued",
            "output": {"title": "Readiness check queued", "summary": summary},
        }).json()

    def update_check_run(self, installation_id: int, repository: str, check_run_id: int, body: dict) -> dict:
        return self._installation_call(installation_id, "PATCH",
                                       f"{_repo_path(repository)}/check-runs/{int(check_run_id)}", json=body).json()

    def get_check_run(self, installation_id: int, repository: str, check_run_id: int) -> dict:
        return self._installation_call(installation_id, "GET",
                                       f"{_repo_path(repository)}/check-runs/{int(check_run_id)}").json()

    # -- workflows -------------------------------------------------------------
    def dispatch_workflow(self, installation_id: int, repository: str, ref: str, inputs: dict) -> dict:
        """Dispatch readiness-runner.yml; returns {workflow_run_id, run_url, html_url}."""
        response = self._installation_call(
            installation_id, "POST", f"{_repo_path(repository)}/actions/workflows/{WORKFLOW_FILE}/dispatches",
            json={"ref": ref, "inputs": inputs, "return_run_details": True})
        if response.status_code == 204 or not response.content:
            # An older host without run details: the run id is found by reconciliation.
            return {}
        return response.json()

    def get_workflow_run(self, installation_id: int, repository: str, run_id: int) -> dict:
        return self._installation_call(installation_id, "GET",
                                       f"{_repo_path(repository)}/actions/runs/{int(run_id)}").json()

    def list_workflow_runs(self, installation_id: int, repository: str, branch: str, since: dt.datetime,
                           max_pages: int = 5) -> list[dict]:
        """readiness-runner.yml's dispatch runs on `branch` created since `since`, newest first
        (reconciliation finds a run dispatched without a run id by its name)."""
        created = since.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        runs: list[dict] = []
        for page in range(1, max_pages + 1):
            batch = self._installation_call(
                installation_id, "GET", f"{_repo_path(repository)}/actions/workflows/{WORKFLOW_FILE}/runs",
                params={"branch": branch, "event": "workflow_dispatch", "created": f">={created}",
                        "per_page": 100, "page": page}).json().get("workflow_runs", [])
            runs.extend(r for r in batch if (r.get("created_at") or created) >= created)
            if len(batch) < 100:
                break
        return runs

    # -- pull request comments --------------------------------------------------
    def create_comment(self, installation_id: int, repository: str, number: int, body: str) -> dict:
        return self._installation_call(installation_id, "POST",
                                       f"{_repo_path(repository)}/issues/{int(number)}/comments",
                                       json={"body": body}).json()

    def update_comment(self, installation_id: int, repository: str, comment_id: int, body: str) -> dict:
        return self._installation_call(installation_id, "PATCH",
                                       f"{_repo_path(repository)}/issues/comments/{int(comment_id)}",
                                       json={"body": body}).json()

    def list_comments(self, installation_id: int, repository: str, number: int, max_pages: int = 10) -> list[dict]:
        """The pull request's comments, following pages (100 each, at most max_pages)."""
        comments: list[dict] = []
        for page in range(1, max_pages + 1):
            batch = self._installation_call(installation_id, "GET",
                                            f"{_repo_path(repository)}/issues/{int(number)}/comments",
                                            params={"per_page": 100, "page": page}).json()
            comments.extend(batch)
            if len(batch) < 100:
                break
        return comments

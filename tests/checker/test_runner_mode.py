"""--runner against a local HTTP server playing the ID-token endpoint and the service."""
from __future__ import annotations

import hashlib
import json
import shutil
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
import rfc8785

from checker import cli
from contracts import run_result_validator
from checker_fixtures import KICAD

HEAD_SHA = "0123456789abcdef0123456789abcdef01234567"


class _Service:
    def __init__(self):
        self.requests: list[dict] = []
        self.refuse: tuple[int, dict] | None = None
        service = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def _answer(self, status: int, body: dict):
                raw = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

            def do_GET(self):
                service.requests.append({"method": "GET", "path": self.path,
                                         "auth": self.headers.get("Authorization")})
                if self.path.startswith("/token?") and self.headers.get("Authorization") == "Bearer request-token":
                    self._answer(200, {"value": "oidc-id-token"})
                else:
                    self._answer(401, {"message": "bad request token"})

            def do_POST(self):
                raw = self.rfile.read(int(self.headers["Content-Length"]))
                body = raw if self.headers["Content-Type"].startswith("text/html") else json.loads(raw)
                service.requests.append({"method": "POST", "path": self.path, "body": body,
                                         "auth": self.headers.get("Authorization")})
                if service.refuse:
                    self._answer(*service.refuse)
                else:
                    self._answer(200, {"ok": True, "outcome": "accepted"})

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def service():
    running = _Service()
    yield running
    running.close()


@pytest.fixture
def runner_env(tmp_path, monkeypatch, service):
    workspace = tmp_path / "workspace"
    shutil.copytree(KICAD / "v9/kicad_bot_examples/drc-violation", workspace / "hw")
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"inputs": {"attempt_id": "att-42", "head_sha": HEAD_SHA, "pull_request": "7"}}))
    env = {
        "GITHUB_EVENT_PATH": str(event), "GITHUB_WORKSPACE": str(workspace), "GITHUB_REPOSITORY": "acme/board",
        "GITHUB_RUN_ID": "1001", "GITHUB_RUN_ATTEMPT": "1",
        "ACTIONS_ID_TOKEN_REQUEST_URL": f"{service.url}/token?api-version=2.0",
        "ACTIONS_ID_TOKEN_REQUEST_TOKEN": "request-token",
        "SERVICE_URL": service.url, "SERVICE_OIDC_AUDIENCE": "https://boardready.example",
    }
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    return env


def test_runner_posts_attempt_bound_result_with_digest(runner_env, service, capsys):
    code = cli.main(["--runner", "--no-kicad-cli", "--format", "json"])
    assert code == 1  # the board is blocked; the callback itself was accepted
    token_request, callback, report_token, report = service.requests
    assert token_request["path"] == "/token?api-version=2.0&audience=https%3A%2F%2Fboardready.example"
    # The HTML report follows the result, named by it (SHA-256 and size), with a fresh ID token.
    assert report_token["path"] == token_request["path"]
    assert report["path"] == "/api/v1/runs/github-actions-artifact?attemptId=att-42"
    assert callback["body"]["result"]["reportArtifact"] == {
        "mediaType": "text/html", "sha256": hashlib.sha256(report["body"]).hexdigest(), "bytes": len(report["body"])}
    assert callback["path"] == "/api/v1/runs/github-actions-result"
    assert callback["auth"] == "Bearer oidc-id-token"
    body = callback["body"]
    assert set(body) == {"attemptId", "result", "digest"} and body["attemptId"] == "att-42"
    result = body["result"]
    assert body["digest"] == "sha256:" + hashlib.sha256(rfc8785.dumps(result)).hexdigest()
    assert result["triggerKind"] == "pull_request" and result["headSha"] == HEAD_SHA
    assert result["repository"] == "acme/board" and result["readiness"] == "blocked"
    assert any(f["path"] == "hw/drc-violation.kicad_pcb" for f in result["findings"])
    assert list(run_result_validator().iter_errors(result)) == []


def test_refused_callback_exits_4_with_the_service_code(runner_env, service, capsys):
    service.refuse = (409, {"ok": False, "code": "attempt_superseded", "message": "not the current attempt"})
    assert cli.main(["--runner", "--no-kicad-cli"]) == 4
    captured = capsys.readouterr()
    assert "attempt_superseded" in captured.err and captured.out.strip().endswith("attempt_superseded")


def test_runner_without_id_token_permission_is_a_usage_error(runner_env, monkeypatch, capsys):
    monkeypatch.delenv("ACTIONS_ID_TOKEN_REQUEST_URL")
    assert cli.main(["--runner"]) == 2
    assert "ACTIONS_ID_TOKEN_REQUEST_URL" in capsys.readouterr().err


def test_publish_posts_to_runs_with_the_api_token(service, monkeypatch, capsys):
    monkeypatch.setenv("SERVICE_URL", service.url)
    monkeypatch.setenv("SERVICE_API_TOKEN", "brt_test")
    folder = KICAD / "v9/kicad_sch_api_reference_projects/sch_title"
    assert cli.main([str(folder), "--publish", "--no-kicad-cli", "--repository-id", "12345"]) == 0
    (posted,) = service.requests
    assert posted["path"] == "/api/v1/runs" and posted["auth"] == "Bearer brt_test"
    assert posted["body"]["repositoryId"] == "12345"
    service.refuse = (403, {"ok": False, "code": "repository_out_of_scope", "message": "no"})
    assert cli.main([str(folder), "--publish", "--no-kicad-cli", "--repository-id", "12345"]) == 4
    assert "repository_out_of_scope" in capsys.readouterr().err

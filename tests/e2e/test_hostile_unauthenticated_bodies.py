"""Oversized unauthenticated bodies against the real server (bin/serve's front,
app/front/): on the run routes, whose credentials travel in headers, the caller
is authenticated before a byte of the body is read (app/front/header_phase.py).
A client that announces 8 MiB and sends none of it gets its 401 or 429, with
the application's own answer, counted and logged once; a valid caller is asked
for the body (100 Continue) only then, and its large body is taken."""
from __future__ import annotations

import json
import socket

import httpx
import pytest

from app import config as config_module
from app.serve import Service
from app.web.bodies import RESULT_MAX_BYTES
from tests.helpers.access import bearer, create_token, seed_repository
from tests.helpers.service import OIDC_AUDIENCE, free_port, generated_app_private_key
from tests.helpers.results import CALLBACK, finding, make_result

REPO = 9301
RATE_LIMIT = 6
WRONG_TOKEN = "svc_live_" + "W" * 43
RESULT = "/api/v1/runs/result"
INGEST = "/api/v1/runs"


@pytest.fixture
def served(db_url, tmp_path):
    env = {"HOST_APP_ID": "4242", "HOST_APP_PRIVATE_KEY": generated_app_private_key(),
           "HOST_API_URL": "http://127.0.0.1:9", "SERVICE_OIDC_AUDIENCE": OIDC_AUDIENCE,
           "SERVICE_BIND": f"127.0.0.1:{free_port()}", "SERVICE_WEB_CONCURRENCY": "1", "SERVICE_WEB_THREADS": "2",
           "SERVICE_AUTH_RATE_LIMIT_PER_MINUTE": str(RATE_LIMIT)}
    service = Service(config_module.load(env), db_url, with_workers=False, extra_env=env,
                      log_path=str(tmp_path / "api.log")).start()
    service.log_path = tmp_path / "api.log"
    yield service
    service.stop()


@pytest.fixture
def repo(owner):
    return seed_repository(owner, account_id=9302, installation_id=9303, repository_id=REPO)


def _address(service) -> tuple[str, int]:
    host, port = service.config.bind.rsplit(":", 1)
    return host, int(port)


def _head(path: str, length: int, *headers: str) -> bytes:
    lines = [f"POST {path} HTTP/1.1", "Host: x", "Content-Type: application/json", f"Content-Length: {length}",
             *headers]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def _read_answer(sock) -> tuple[int, dict, dict]:
    """(status, headers, JSON body) of one answer, read to its Content-Length."""
    received = b""
    while b"\r\n\r\n" not in received:
        chunk = sock.recv(4096)
        assert chunk, f"closed without an answer: {received!r}"
        received += chunk
    head, _, body = received.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {name.strip().lower(): value.strip() for name, _, value in (line.partition(":") for line in lines[1:])}
    while len(body) < int(headers["content-length"]):
        body += sock.recv(65536)
    return int(lines[0].split(" ")[1]), headers, json.loads(body)


def _headers_only(service, path: str, *headers: str) -> tuple[int, dict, dict]:
    """Announce the largest body the route takes, send none of it, read the answer."""
    with socket.create_connection(_address(service), timeout=30) as sock:
        sock.sendall(_head(path, RESULT_MAX_BYTES, *headers))
        return _read_answer(sock)


def _refusals(service) -> list[dict]:
    lines = [json.loads(line) for line in service.log_path.read_text().splitlines() if line.startswith("{")]
    return [line for line in lines if line.get("event") == "api.access_refused"]


def _failures(owner) -> dict:
    return {r["client_key"]: r["failures"] for r in
            owner.execute("SELECT * FROM auth_failures WHERE limiter = 'bearer'").fetchall()}


def test_no_token_wrong_token_and_a_forged_id_token_are_refused_before_the_body(served, owner, repo):
    # The server would have to wait for 8 MiB (and answer 408 at the read
    # deadline) if it read the body first: the answer comes with none sent.
    missing = _headers_only(served, RESULT)
    malformed = _headers_only(served, RESULT, "Authorization: Basic dXNlcjpwYXNz")
    # Asked for 100 Continue: the first thing it reads is the refusal.
    wrong = _headers_only(served, RESULT, f"Authorization: Bearer {WRONG_TOKEN}", "Expect: 100-continue")
    ingest = _headers_only(served, INGEST, f"Authorization: Bearer {WRONG_TOKEN}")
    forged = _headers_only(served, CALLBACK, "Authorization: Bearer not.a.jwt")
    assert [(status, body["code"]) for status, _, body in (missing, malformed, wrong, ingest, forged)] == [
        (401, "missing_token"), (401, "malformed_token"), (401, "invalid_token"), (401, "invalid_token"),
        (401, "oidc_malformed_token")]
    for status, headers, body in (missing, malformed, wrong, ingest):
        assert headers["www-authenticate"] == 'Bearer realm="boardready"'
    for status, headers, body in (missing, malformed, wrong, ingest, forged):
        assert (headers["x-content-type-options"], headers["cache-control"]) == ("nosniff", "no-store")
        assert body["ok"] is False
    # The callback's order holds: its content type is judged before its token.
    with socket.create_connection(_address(served), timeout=30) as sock:
        sock.sendall(_head(CALLBACK, RESULT_MAX_BYTES, "Authorization: Bearer not.a.jwt").replace(
            b"application/json", b"text/plain"))
        assert _read_answer(sock)[2]["code"] == "invalid_content_type"
    # Each 401 that presented a credential counted once; the one without any is not counted.
    assert _failures(owner) == {"127.0.0.1": 4}
    assert sorted((r["status"], r["code"]) for r in _refusals(served)) == sorted(
        [(401, "missing_token"), (401, "malformed_token"), (401, "invalid_token"), (401, "invalid_token"),
         (401, "oidc_malformed_token")])


def test_a_client_that_sends_its_body_anyway_reads_the_refusal(served, repo):
    answer = httpx.post(f"{served.base_url}{RESULT}", content=b" " * (RESULT_MAX_BYTES - 1), timeout=30,
                        headers={**bearer(WRONG_TOKEN), "Content-Type": "application/json"})
    assert (answer.status_code, answer.json()["code"]) == (401, "invalid_token")


def test_a_valid_token_is_asked_for_its_large_body_only_once_authenticated(served, owner, pool, repo):
    token, _ = create_token(pool, REPO, scopes=["runs:write"])
    body = make_result("c" * 40, "blocked", [finding(i, "error", line=i + 1) for i in range(8000)])
    body["repositoryId"] = str(REPO)
    raw = json.dumps(body).encode()
    assert len(raw) > 1024 * 1024  # many times the 64 KiB the front holds unasked
    with socket.create_connection(_address(served), timeout=30) as sock:
        sock.sendall(_head(INGEST, len(raw), f"Authorization: Bearer {token}", "Expect: 100-continue"))
        assert sock.recv(4096) == b"HTTP/1.1 100 Continue\r\n\r\n"  # authenticated: now send the body
        sock.sendall(raw)
        status, _, answer = _read_answer(sock)
    assert (status, answer["findings"]) == (201, 8000), answer
    # Without Expect, the body following the headers at once, as most clients send it.
    plain = httpx.post(f"{served.base_url}{INGEST}", content=raw, timeout=30,
                       headers={**bearer(token), "Content-Type": "application/json"})
    assert plain.status_code == 201
    # Authenticated once per request: the scope is still the responder's to judge, after the body.
    reader, _ = create_token(pool, REPO, scopes=["reviews:read"], name="reader")
    with socket.create_connection(_address(served), timeout=30) as sock:
        sock.sendall(_head(INGEST, len(raw), f"Authorization: Bearer {reader}", "Expect: 100-continue"))
        assert sock.recv(4096) == b"HTTP/1.1 100 Continue\r\n\r\n"
        sock.sendall(raw)
        assert _read_answer(sock)[2]["code"] == "insufficient_scope"
    assert _failures(owner) == {}
    assert [(r["status"], r["code"]) for r in _refusals(served)] == [(403, "insufficient_scope")]


def test_the_failure_limiter_counts_refusals_before_the_body_once(served, owner, pool, repo):
    token, _ = create_token(pool, REPO, scopes=["runs:write"])
    for _ in range(RATE_LIMIT):
        assert _headers_only(served, RESULT, f"Authorization: Bearer {WRONG_TOKEN}")[0] == 401
    status, headers, body = _headers_only(served, INGEST, f"Authorization: Bearer {token}")
    assert (status, body["code"]) == (429, "too_many_auth_failures") and int(headers["retry-after"]) > 0
    oidc_status, _, oidc_body = _headers_only(served, CALLBACK, "Authorization: Bearer not.a.jwt")
    assert (oidc_status, oidc_body["code"]) == (429, "too_many_auth_failures")
    assert _failures(owner) == {"127.0.0.1": RATE_LIMIT}  # the 429s are not counted
    assert sorted((r["status"], r["code"]) for r in _refusals(served)) == sorted(
        [(401, "invalid_token")] * RATE_LIMIT + [(429, "too_many_auth_failures")] * 2)

"""The gate's integrity (issue 36): rights stay current for every credential, and no
request without a credential locks anyone out. Each attack of the issue is driven
through the emulator (the code host: permissions, webhooks, OIDC tokens) and the real
service on a real HTTP server, and shown refused."""
from __future__ import annotations

import httpx
import pytest

from app.web.pages.artifacts import UPLOAD_PATH
from tests.api.test_authority import _stack, approve, bearer
from tests.helpers.access import OPERATOR_ENV, create_token
from tests.helpers.service import count
from tests.helpers.sessions import decided_run


ARTIFACT_KEY = "artifact-signing-key-for-the-integrity-tests-0123"


@pytest.fixture
def stack(pool, owner):
    yield from _stack(pool, owner, SERVICE_ARTIFACT_SIGNING_KEY=ARTIFACT_KEY, **OPERATOR_ENV)


# ---- no request without a credential counts ------------------------------------------------------

@pytest.mark.parametrize("method, path, content_type", [
    ("POST", "/api/v1/runs/github-actions-result", "application/json"),
    ("POST", UPLOAD_PATH + "?attemptId=1-" + "a" * 32, "text/html; charset=utf-8"),
    ("GET", "/metrics", "application/json"),
])
def test_credential_less_requests_never_lock_out_a_valid_credential(stack, owner, pool, method, path, content_type):
    repo = stack.repos[0]["id"]
    for _ in range(25):   # what a cross-site form or image tag can make a browser send
        answer = httpx.request(method, stack.base + path, timeout=10, content=b"{}",
                               headers={"Content-Type": content_type})
        assert answer.status_code == 401, answer.text
    assert count(owner, "auth_failures") == 0
    token, _ = create_token(pool, repo, scopes=["reviews:read"])
    assert httpx.get(f"{stack.base}/api/v1/runs", headers=bearer(token), timeout=10).status_code == 200
    metrics = httpx.get(f"{stack.base}/metrics", headers=bearer(OPERATOR_ENV["SERVICE_OPERATOR_API_TOKEN"]),
                        timeout=10)
    assert metrics.status_code == 200, metrics.text

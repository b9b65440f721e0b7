"""Sign-in with the code host end to end over HTTP: a browser (httpx with a
cookie jar) against the service on a real server and the emulator, PKCE,
refused state and code, a viewer without access, denial, sign-out."""
from __future__ import annotations

import datetime as dt
import email.utils

from dataclasses import dataclass
from urllib.parse import parse_qs, urlsplit

import emulator
import httpx
import pytest

from app.web.session_auth import SESSION_COOKIE
from app.web.sign_in import SIGN_IN_COOKIE
from app.web.wsgi import create_app
from contracts import openapi_response_validator
from tests.helpers.access import seed_repository
from tests.helpers.service import count, free_port, make_config
from tests.helpers.sessions import decided_run, served

ORG = "acme-hw"


@dataclass
class Stack:
    host: object
    base: str
    app: dict
    installation: dict
    repos: list

    def browser(self) -> httpx.Client:
        return httpx.Client(timeout=10, follow_redirects=True)


@pytest.fixture
def stack(pool, owner):
    with emulator.start() as host:
        port = free_port()
        public = f"http://127.0.0.1:{port}"
        app = host.register_app(callback_urls=[public + "/auth/callback"])
        installation = host.create_installation(ORG)
        repos = [host.create_repository(f"{ORG}/board-{i}", installation_id=installation["id"]) for i in range(3)]
        for repo in repos:
            seed_repository(owner, account_id=repos[0]["owner"]["id"], installation_id=installation["id"],
                            repository_id=repo["id"], full_name=repo["full_name"], login=ORG)
        config = make_config(HOST_APP_ID=str(app["id"]), HOST_APP_PRIVATE_KEY=app["private_key_pem"],
                             HOST_API_URL=host.url, HOST_WEB_URL=host.url, HOST_OAUTH_CLIENT_ID=app["client_id"],
                             HOST_OAUTH_CLIENT_SECRET=app["client_secret"], SERVICE_PUBLIC_URL=public)
        with served(create_app(config, pool), port) as base:
            yield Stack(host, base, app, installation, repos)


def start(stack: Stack, browser: httpx.Client, return_to: str = "/api/v1/session") -> dict:
    """The browser's first two hops: the service's sign-in, the code host's authorize.
    Returns the code host's redirect back (code, state) without following it."""
    first = browser.get(f"{stack.base}/auth/sign-in", params={"returnTo": return_to}, follow_redirects=False)
    assert first.status_code == 302, first.text
    authorize = browser.get(first.headers["Location"], follow_redirects=False)
    assert authorize.status_code == 302
    location = urlsplit(authorize.headers["Location"])
    assert f"{location.scheme}://{location.netloc}{location.path}" == f"{stack.base}/auth/callback"
    return {k: v[0] for k, v in parse_qs(location.query).items()}


def callback(stack: Stack, browser: httpx.Client, **params) -> httpx.Response:
    answer = browser.get(f"{stack.base}/auth/callback", params=params, follow_redirects=False)
    if answer.status_code != 302:
        openapi_response_validator("/auth/callback", "get", answer.status_code).validate(answer.json())
    return answer


def test_sign_in_end_to_end(stack, owner, capfd):
    host = stack.host
    user = host.create_user("ada", organizations=[ORG], repository_access=[r["full_name"] for r in stack.repos[:2]])
    browser = stack.browser()
    answer = browser.get(f"{stack.base}/auth/sign-in", params={"returnTo": "/api/v1/session"})
    assert answer.status_code == 200, answer.text
    body = answer.json()
    openapi_response_validator("/api/v1/session", "get", 200).validate(body)
    assert body["viewer"] == {"id": user["id"], "login": "ada"} and body["actor"] == f"host-user:{user['id']}"

    # The flow as the code host saw it: PKCE S256, our state, the registered callback.
    [authorize] = host.requests(operation_id="oauth/authorize")
    query = parse_qs(authorize["query"])
    assert query["code_challenge_method"] == ["S256"] and len(query["code_challenge"][0]) == 43
    assert query["redirect_uri"] == [f"{stack.base}/auth/callback"] and len(query["state"][0]) >= 32
    [exchange] = host.requests(operation_id="oauth/access-token")
    assert exchange["body"]["code_verifier"] == "[redacted]" and exchange["status"] == 200
    read = [e["operation_id"] for e in host.requests() if e["path"].startswith("/user")]
    assert read == ["users/get-authenticated", "apps/list-installations-for-authenticated-user",
                    "apps/list-installation-repos-for-authenticated-user"]

    # The cookies: a pre-session on /auth, then the session; HttpOnly, SameSite=Lax, not Secure on http.
    set_cookies = [h for r in answer.history for h in r.headers.get_list("set-cookie")]
    session_cookie = next(c for c in set_cookies if c.startswith(f"{SESSION_COOKIE}=") and "Max-Age=0" not in c)
    assert "HttpOnly" in session_cookie and "SameSite=Lax" in session_cookie and "Secure" not in session_cookie
    assert any(c.startswith(f"{SIGN_IN_COOKIE}=") and "Path=/auth" in c for c in set_cookies)

    stored = owner.execute("SELECT * FROM sessions").fetchone()
    assert stored["viewer_id"] == user["id"] and stored["viewer_login"] == "ada"
    assert sorted(stored["repository_ids"]) == sorted(r["id"] for r in stack.repos[:2])
    assert stored["installation_ids"] == [stack.installation["id"]]
    # The OAuth token is nowhere: not in the database, not in a log line.
    everything = str(owner.execute("SELECT (SELECT json_agg(s) FROM sessions s) AS s, "
                                   "(SELECT json_agg(a) FROM sign_in_attempts a) AS a").fetchone())
    assert "gho_" not in everything and count(owner, "sign_in_attempts") == 0
    out, err = capfd.readouterr()
    assert "gho_" not in out + err and browser.cookies.get(SESSION_COOKIE) not in out + err

    listing = browser.get(f"{stack.base}/api/v1/runs")
    assert listing.status_code == 200 and listing.json() == {"items": [], "nextCursor": None}

    # Sign out with the CSRF token: the session is gone.
    refused = browser.post(f"{stack.base}/auth/sign-out")
    assert refused.status_code == 403 and refused.json()["code"] == "csrf_failed"
    openapi_response_validator("/auth/sign-out", "post", 403).validate(refused.json())
    out = browser.post(f"{stack.base}/auth/sign-out", headers={"X-CSRF-Token": body["csrfToken"]})
    assert out.status_code == 204 and count(owner, "sessions") == 0
    # The browser is told to forget the cookie, not only handed an empty one.
    [expired] = [h for h in out.headers.get_list("set-cookie") if h.startswith("boardready_session=")]
    expires = next(part.split("=", 1)[1] for part in expired.split("; ") if part.lower().startswith("expires="))
    assert email.utils.parsedate_to_datetime(expires) <= dt.datetime.now(dt.timezone.utc)
    after = browser.get(f"{stack.base}/api/v1/session")
    assert after.status_code == 401 and after.json()["code"] == "session_required"


def test_a_refused_state_ends_the_attempt(stack, owner):
    stack.host.create_user("bo", organizations=[ORG])
    browser = stack.browser()
    back = start(stack, browser)
    refused = callback(stack, browser, code=back["code"], state="x" * 43)
    assert refused.status_code == 400 and refused.json()["code"] == "invalid_state"
    # One try: the right state afterwards finds no attempt, and the pre-session cookie was cleared.
    again = callback(stack, browser, code=back["code"], state=back["state"])
    assert again.status_code == 400 and again.json()["code"] == "sign_in_expired"
    assert count(owner, "sessions") == 0
    assert stack.host.requests(operation_id="oauth/access-token") == []


def test_a_refused_code_creates_no_session(stack, owner):
    stack.host.create_user("cy", organizations=[ORG])
    browser = stack.browser()
    back = start(stack, browser)
    refused = callback(stack, browser, code=back["code"][:-2] + "00", state=back["state"])
    assert refused.status_code == 400 and refused.json()["code"] == "sign_in_refused"
    assert count(owner, "sessions") == 0


def test_a_stolen_code_is_useless_in_another_browser(stack, owner):
    """PKCE: the verifier comes from the pre-session cookie of the browser that started."""
    stack.host.create_user("di", organizations=[ORG])
    victim, attacker = stack.browser(), stack.browser()
    stolen = start(stack, victim)
    own = start(stack, attacker)
    refused = callback(stack, attacker, code=stolen["code"], state=own["state"])
    assert refused.status_code == 400 and refused.json()["code"] == "sign_in_refused"
    assert count(owner, "sessions") == 0


def test_a_viewer_without_access_sees_nothing(stack, owner, pool):
    stack.host.create_user("eve", organizations=["someone-else"])
    run = decided_run(owner, pool, stack.repos[0]["id"])
    browser = stack.browser()
    answer = browser.get(f"{stack.base}/auth/sign-in", params={"returnTo": "/api/v1/runs"})
    assert answer.status_code == 200 and answer.json() == {"items": [], "nextCursor": None}
    assert owner.execute("SELECT repository_ids FROM sessions").fetchone()["repository_ids"] == []
    assert browser.get(f"{stack.base}/api/v1/runs/{run['id']}").status_code == 404


def test_a_user_who_does_not_authorize(stack, owner):
    stack.host.create_user("fay", organizations=[ORG])
    stack.host.set_oauth_denied(True)
    answer = stack.browser().get(f"{stack.base}/auth/sign-in")
    assert answer.status_code == 403 and answer.json()["code"] == "sign_in_denied"
    assert count(owner, "sessions") == 0 and count(owner, "sign_in_attempts") == 0


def test_callback_without_a_sign_in_in_progress(stack):
    answer = httpx.get(f"{stack.base}/auth/callback", params={"code": "abc", "state": "s" * 43})
    assert answer.status_code == 400 and answer.json()["code"] == "sign_in_expired"


@pytest.mark.parametrize("return_to", ["//evil.example/x", "https://evil.example/", "evil", "/\\evil", "/a b"])
def test_return_to_must_be_a_path_here(stack, owner, return_to):
    answer = httpx.get(f"{stack.base}/auth/sign-in", params={"returnTo": return_to})
    assert answer.status_code == 400 and answer.json()["code"] == "invalid_return_to"
    openapi_response_validator("/auth/sign-in", "get", 400).validate(answer.json())
    assert count(owner, "sign_in_attempts") == 0


def test_code_host_down_during_the_callback(stack, owner):
    stack.host.create_user("gus", organizations=[ORG])
    browser = stack.browser()
    back = start(stack, browser)
    stack.host.add_fault(operation_id="users/get-authenticated", preset="server_error")
    answer = callback(stack, browser, **back)
    assert answer.status_code == 503 and answer.json()["code"] == "code_host_unavailable"
    assert count(owner, "sessions") == 0


def test_installations_and_repositories_are_read_page_by_page(stack, owner):
    host = stack.host
    more = host.create_installation("acme-two")
    extra = [host.create_repository(f"acme-two/r-{i}", installation_id=more["id"]) for i in range(105)]
    host.create_user("hal", organizations=[ORG, "acme-two"])
    answer = stack.browser().get(f"{stack.base}/auth/sign-in")
    assert answer.status_code in (200, 404)  # returnTo "/" is not a route of the API
    stored = owner.execute("SELECT installation_ids, repository_ids FROM sessions").fetchone()
    assert sorted(stored["installation_ids"]) == sorted([stack.installation["id"], more["id"]])
    assert len(stored["repository_ids"]) == 3 + len(extra)
    pages = [e for e in host.requests(operation_id="apps/list-installation-repos-for-authenticated-user")]
    assert len(pages) == 3  # 3 repositories, then 100 + 5


def test_sign_in_is_off_without_a_client(client):
    for path in ("/auth/sign-in", "/auth/callback"):
        answer = client.simulate_get(path)
        assert answer.status_code == 503 and answer.json["code"] == "sign_in_not_configured"
        openapi_response_validator(path, "get", 503).validate(answer.json)

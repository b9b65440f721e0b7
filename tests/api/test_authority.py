"""Who may decide (issue 25): each attack of the issue driven through the
emulator (the code host's OAuth pages, permissions and webhooks) and the
real service on a real HTTP server, and shown refused."""
from __future__ import annotations

import datetime as dt
import json
import types
import uuid
from dataclasses import dataclass

import emulator
import httpx
import pytest

from app.web import keyset
from app.web.session_auth import SESSION_COOKIE
from app.web.wsgi import create_app
from tests.helpers.paths import webhook_fixture_json
from tests.helpers.access import seed_repository
from tests.helpers.service import WEBHOOK_SECRET, count, free_port, make_config, webhook_headers
from tests.helpers.sessions import decided_run, finding, served

ORG = "acme-hw"
FINGERPRINT = "ab" * 16
CURSOR_SECRET = "cursor-secret-for-the-authority-tests-0123456789"


@dataclass
class Stack:
    host: object
    base: str
    installation: dict
    repos: list

    def sign_in(self, login: str, **user) -> "Browser":
        created = self.host.create_user(login, organizations=[ORG], **user)
        browser = Browser(httpx.Client(timeout=10, follow_redirects=True), self.base, created["id"], login)
        answer = browser.http.get(f"{self.base}/auth/sign-in", params={"returnTo": "/api/v1/session"})
        assert answer.status_code == 200, answer.text
        browser.csrf = answer.json()["csrfToken"]
        return browser


@dataclass
class Browser:
    http: httpx.Client
    base: str
    user_id: int
    login: str
    csrf: str = ""

    def get(self, path: str, **kwargs) -> httpx.Response:
        return self.http.get(self.base + path, **kwargs)

    def send(self, method: str, path: str, body: dict | None = None) -> httpx.Response:
        return self.http.request(method, self.base + path, json=body, headers={"X-CSRF-Token": self.csrf})

    def mint(self, repository_id: int, **fields) -> httpx.Response:
        return self.send("POST", "/api/v1/tokens", {"repositoryId": str(repository_id), "name": "mine", **fields})


def _stack(pool, owner, **config):
    with emulator.start() as host:
        port = free_port()
        public = f"http://127.0.0.1:{port}"
        app = host.register_app(callback_urls=[public + "/auth/callback"])
        installation = host.create_installation(ORG)
        repos = [host.create_repository(f"{ORG}/board-{i}", installation_id=installation["id"]) for i in range(2)]
        for repo in repos:
            seed_repository(owner, account_id=repo["owner"]["id"], installation_id=installation["id"],
                            repository_id=repo["id"], full_name=repo["full_name"], login=ORG)
        settings = make_config(HOST_APP_ID=str(app["id"]), HOST_APP_PRIVATE_KEY=app["private_key_pem"],
                               HOST_API_URL=host.url, HOST_WEB_URL=host.url, HOST_OAUTH_CLIENT_ID=app["client_id"],
                               HOST_OAUTH_CLIENT_SECRET=app["client_secret"], SERVICE_PUBLIC_URL=public,
                               SERVICE_CURSOR_SECRET=CURSOR_SECRET, **config)
        with served(create_app(settings, pool), port) as base:
            host.configure_webhooks(url=base + "/api/host/webhook", secret=WEBHOOK_SECRET)
            yield Stack(host, base, installation, repos)


@pytest.fixture
def stack(pool, owner):
    yield from _stack(pool, owner)


def bearer(value: str) -> dict:
    return {"Authorization": f"Bearer {value}"}


def approve(stack: Stack, credential: dict, review_id: int, status: str = "approved", **more) -> httpx.Response:
    return httpx.post(f"{stack.base}/api/v1/reviews/{review_id}/approvals", json={"status": status, **more},
                      headers=credential, timeout=10)


# ---- a person behind every token -------------------------------------------------------------

def test_the_authors_own_token_cannot_approve_their_review(stack, owner, pool):
    repo = stack.repos[0]["id"]
    author = stack.sign_in("author")
    run = decided_run(owner, pool, repo, author_id=author.user_id)
    minted = author.mint(repo, scopes=["reviews:read", "reviews:write"])
    assert minted.status_code == 201, minted.text
    token = minted.json()["token"]
    # A token minted from a session lives at most SERVICE_SESSION_TOKEN_MAX_DAYS (90).
    expires = dt.datetime.fromisoformat(minted.json()["tokenRecord"]["expiresAt"].replace("Z", "+00:00"))
    assert dt.timedelta(days=89) < expires - dt.datetime.now(dt.timezone.utc) <= dt.timedelta(days=90)
    assert author.mint(repo, durationDays=91).json()["code"] == "invalid_duration_days"

    refused = approve(stack, bearer(token), run["review_id"])
    assert refused.status_code == 409 and refused.json()["code"] == "self_approval_not_allowed"
    assert count(owner, "review_approvals") == 0
    assert owner.execute("SELECT person_id FROM api_tokens").fetchone()["person_id"] == author.user_id

    # Another member's token approves, as that member.
    reviewer = stack.sign_in("reviewer")
    other = reviewer.mint(repo, scopes=["reviews:write"]).json()["token"]
    accepted = approve(stack, bearer(other), run["review_id"])
    assert accepted.status_code == 201 and accepted.json()["approval"]["approverId"] == f"host-user:{reviewer.user_id}"
    # The same approval again is already applied and publishes nothing.
    items = count(owner, "outbox_items")
    again = approve(stack, bearer(other), run["review_id"])
    assert again.status_code == 200 and again.json()["outcome"] == "already_applied"
    assert count(owner, "outbox_items") == items


# ---- authority comes from the code host --------------------------------------------------------

def test_a_member_without_admin_cannot_mint_admin_tokens_nor_opt_in_to_token_results(stack, owner, pool):
    repo = stack.repos[0]["id"]
    member = stack.sign_in("member", default_role="push")
    stored = owner.execute("SELECT admin_repository_ids, write_repository_ids FROM sessions").fetchone()
    assert stored["admin_repository_ids"] == [] and sorted(stored["write_repository_ids"]) == [r["id"] for r in stack.repos]
    for scopes in (["admin"], ["runs:write"]):
        refused = member.mint(repo, scopes=scopes)
        assert refused.status_code == 403 and refused.json()["code"] == "insufficient_scope", scopes
    opt_in = member.send("PUT", f"/api/v1/repositories/{repo}/settings", {"tokenPublishedResults": True})
    assert opt_in.status_code == 403 and opt_in.json()["code"] == "insufficient_scope"
    assert member.get("/api/v1/tokens", params={"repositoryId": str(repo)}).status_code == 403
    assert owner.execute("SELECT token_published_results FROM repositories WHERE id = %s",
                         (repo,)).fetchone()["token_published_results"] is False
    # What push gives: review tokens, and nothing that passes for admin.
    review_token = member.mint(repo, scopes=["reviews:write"]).json()["token"]
    with_token = httpx.put(f"{stack.base}/api/v1/repositories/{repo}/settings", json={"tokenPublishedResults": True},
                           headers=bearer(review_token), timeout=10)
    assert with_token.status_code == 403
    # Break-glass needs admin too.
    run = decided_run(owner, pool, repo, author_id=member.user_id)
    glass = member.send("POST", f"/api/v1/reviews/{run['review_id']}/approvals",
                        {"status": "approved", "breakGlass": True, "reason": "hotfix for the demo board"})
    assert glass.status_code == 403 and count(owner, "review_approvals") == 0

    # A maintainer may, and the change is audited with the person.
    admin = stack.sign_in("lead", default_role="maintain")
    changed = admin.send("PUT", f"/api/v1/repositories/{repo}/settings", {"tokenPublishedResults": True})
    assert changed.status_code == 200, changed.text
    assert owner.execute("SELECT actor FROM audit_events WHERE event_type = 'repository.settings_changed'"
                         ).fetchone()["actor"] == f"host-user:{admin.user_id}"
    assert admin.mint(repo, scopes=["admin"]).status_code == 201
    assert owner.execute("SELECT count(*) AS n FROM audit_events WHERE event_type = "
                         "'control_plane.admin_token_created'").fetchone()["n"] == 1
    # Revoking someone else's token needs admin; the admin may, audited.
    token_id = owner.execute("SELECT id FROM api_tokens WHERE person_id = %s", (member.user_id,)).fetchone()["id"]
    assert member.send("DELETE", f"/api/v1/tokens?tokenId={token_id}").status_code == 200   # their own
    lead_token = owner.execute("SELECT id FROM api_tokens WHERE person_id = %s", (admin.user_id,)).fetchone()["id"]
    assert member.send("DELETE", f"/api/v1/tokens?tokenId={lead_token}").status_code == 404
    assert admin.send("DELETE", f"/api/v1/tokens?tokenId={lead_token}").status_code == 200


def test_a_pull_member_only_reads(stack, owner, pool):
    repo = stack.repos[0]["id"]
    reader = stack.sign_in("reader", default_role="pull")
    run = decided_run(owner, pool, repo)
    assert reader.get("/api/v1/runs").json()["items"][0]["id"] == str(run["id"])
    refused = reader.send("POST", f"/api/v1/reviews/{run['review_id']}/approvals", {"status": "approved"})
    assert refused.status_code == 403 and refused.json()["code"] == "insufficient_scope"
    waiver = reader.send("POST", f"/api/v1/repositories/{repo}/waivers", {"fingerprint": "abc", "reason": "r"})
    assert waiver.status_code == 403 and count(owner, "waivers") == 0


@pytest.fixture
def rereading_stack(pool, owner):
    yield from _stack(pool, owner, SERVICE_PERMISSION_TTL_SECONDS="0")


def test_rights_are_read_again_from_the_code_host_before_a_change(rereading_stack, owner, pool):
    stack = rereading_stack
    repo, full_name = stack.repos[0]["id"], stack.repos[0]["full_name"]
    person = stack.sign_in("rosa", default_role="admin")
    run = decided_run(owner, pool, repo)
    assert person.send("PUT", f"/api/v1/repositories/{repo}/settings",
                       {"tokenPublishedResults": True}).status_code == 200
    # Demoted on the code host: the next change asks again and is refused; the rights are replaced.
    stack.host.set_permission("rosa", repository=full_name, role="triage")
    demoted = person.send("PUT", f"/api/v1/repositories/{repo}/settings", {"tokenPublishedResults": False})
    assert demoted.status_code == 403 and demoted.json()["code"] == "insufficient_scope"
    assert repo not in owner.execute("SELECT admin_repository_ids FROM sessions").fetchone()["admin_repository_ids"]
    asked = stack.host.requests(operation_id="repos/get-collaborator-permission-level")
    assert len(asked) == 2 and all(r["status"] == 200 for r in asked)
    # Out of the organization: each repository asked about is lost (403); with no access
    # left anywhere, the session is ended.
    stack.host.set_permission("rosa", organizations=[])
    other = stack.repos[1]["id"]
    lost = person.send("POST", f"/api/v1/repositories/{other}/waivers", {"fingerprint": "abc", "reason": "r"})
    assert lost.status_code == 403 and count(owner, "waivers") == 0
    assert owner.execute("SELECT repository_ids FROM sessions").fetchone()["repository_ids"] == [repo]
    ended = person.send("POST", f"/api/v1/reviews/{run['review_id']}/approvals", {"status": "changes_requested"})
    assert ended.status_code == 401 and ended.json()["code"] == "session_ended"
    assert count(owner, "sessions") == 0 and count(owner, "review_approvals") == 0


# ---- membership webhooks end access at once ---------------------------------------------------------

def test_removal_from_the_organization_ends_the_session_and_revokes_minted_tokens(stack, owner, pool):
    repo = stack.repos[0]["id"]
    leaver, stayer = stack.sign_in("leaver"), stack.sign_in("stayer")
    token = leaver.mint(repo, scopes=["admin", "reviews:read"]).json()["token"]
    kept = stayer.mint(repo, scopes=["reviews:read"]).json()["token"]
    assert httpx.get(f"{stack.base}/api/v1/runs", headers=bearer(token), timeout=10).status_code == 200

    delivered = stack.host.remove_organization_member(stack.installation["id"], "leaver")
    assert delivered["status"] in (200, 202), delivered

    gone = leaver.get("/api/v1/runs")
    assert gone.status_code == 401 and gone.json()["code"] == "invalid_session"
    revoked = httpx.post(f"{stack.base}/api/v1/tokens", json={"repositoryId": str(repo), "name": "again"},
                         headers=bearer(token), timeout=10)
    assert revoked.status_code == 401 and revoked.json()["code"] == "token_revoked"
    # Only that person: the other member's session and token work.
    assert stayer.get("/api/v1/runs").status_code == 200
    assert httpx.get(f"{stack.base}/api/v1/runs", headers=bearer(kept), timeout=10).status_code == 200
    events = owner.execute("SELECT event_type, details FROM audit_events WHERE event_type IN "
                           "('control_plane.session_ended', 'control_plane.token_revoked') ORDER BY event_type"
                           ).fetchall()
    assert [(e["event_type"], e["details"]["personId"], e["details"]["reason"]) for e in events] == [
        ("control_plane.session_ended", leaver.user_id, "organization.member_removed"),
        ("control_plane.token_revoked", leaver.user_id, "organization.member_removed")]


def _deliver(stack: Stack, event: str, payload: dict) -> httpx.Response:
    body = json.dumps(payload).encode()
    return httpx.post(f"{stack.base}/api/host/webhook", content=body, timeout=10,
                      headers=webhook_headers(body, event, str(uuid.uuid4())))


def test_the_real_membership_payloads_end_access(stack, owner, pool):
    """The package's own examples, moved onto this installation's ids."""
    repo = stack.repos[1]
    person = stack.sign_in("hacktocat")
    person.mint(repo["id"], scopes=["reviews:write"])
    removed = webhook_fixture_json("member.added.0.json")
    removed["action"] = "removed"          # the package has no member.removed example; same shape
    removed["member"]["id"] = person.user_id
    removed["repository"]["id"] = repo["id"]
    # The service acts on what the code host says now (a delivery carries no time): it agrees.
    stack.host.set_permission("hacktocat", organizations=[])
    assert _deliver(stack, "member", removed).status_code == 202
    assert person.get("/api/v1/runs").status_code == 401
    assert owner.execute("SELECT revoked_reason FROM api_tokens").fetchone()["revoked_reason"] == "access_removed"

    again = stack.sign_in("hacktocat")
    org_removed = webhook_fixture_json("organization.member_removed.ghes-35.json")
    org_removed["membership"]["user"]["id"] = again.user_id
    org_removed["organization"]["id"] = stack.repos[0]["owner"]["id"]
    stack.host.set_permission("hacktocat", organizations=[])
    assert _deliver(stack, "organization", org_removed).status_code == 202
    assert again.get("/api/v1/runs").status_code == 401 and count(owner, "sessions") == 0
    broken = webhook_fixture_json("organization.member_removed.ghes-35.json")
    del broken["membership"]["user"]["id"]
    assert _deliver(stack, "organization", broken).status_code == 400


# ---- limits that protect people ------------------------------------------------------------------

def test_credential_less_requests_never_lock_out_a_valid_session(stack, owner):
    person = stack.sign_in("victim")
    for _ in range(20):   # what a cross-site image tag sends
        answer = httpx.get(f"{stack.base}/api/v1/runs", timeout=10)
        assert answer.status_code == 401 and answer.json()["code"] == "missing_token"
    assert count(owner, "auth_failures") == 0
    assert person.get("/api/v1/runs").status_code == 200
    # Forged cookies do count, and still never refuse the valid session.
    for _ in range(25):
        httpx.get(f"{stack.base}/api/v1/runs", cookies={SESSION_COOKIE: "f" * 43}, timeout=10)
    assert person.get("/api/v1/runs").status_code == 200


@pytest.fixture
def limited_stack(pool, owner):
    yield from _stack(pool, owner, SERVICE_SIGN_IN_PER_MINUTE="4", SERVICE_DECISIONS_PER_MINUTE="5")


def test_sign_in_and_decision_floods_are_refused(limited_stack, owner, pool):
    stack = limited_stack
    person = stack.sign_in("flood")      # a start and a callback: two of the four
    starts = [httpx.get(f"{stack.base}/auth/sign-in", follow_redirects=False, timeout=10) for _ in range(3)]
    assert [s.status_code for s in starts] == [302, 302, 429]
    assert starts[-1].json()["code"] == "too_many_sign_ins" and int(starts[-1].headers["Retry-After"]) >= 1
    callback = httpx.get(f"{stack.base}/auth/callback", params={"code": "x", "state": "y" * 20}, timeout=10)
    assert callback.status_code == 429
    assert count(owner, "sign_in_attempts") == 2

    run = decided_run(owner, pool, stack.repos[0]["id"])
    path = f"/api/v1/reviews/{run['review_id']}/approvals"
    answers = [person.send("POST", path, {"status": s}).status_code
               for s in ["approved", "changes_requested"] * 3]
    assert answers == [201] * 5 + [429]
    assert owner.execute("SELECT status FROM review_approvals").fetchone()["status"] == "approved"


# ---- inputs ------------------------------------------------------------------------------------------

def _cursor(person: Browser, session_id: str, path: str, key: list, filters: dict) -> str:
    """A cursor MACed exactly as the service does, for a key of the wrong types."""
    req = types.SimpleNamespace(path=path, context=types.SimpleNamespace(
        auth=types.SimpleNamespace(session_id=session_id),
        config=make_config(SERVICE_CURSOR_SECRET=CURSOR_SECRET)))
    return keyset.encode(req, key, filters)


def test_forged_and_odd_cursors_are_400(stack, owner, pool):
    repo = stack.repos[0]["id"]
    person = stack.sign_in("curious")
    for i in range(3):
        decided_run(owner, pool, repo, pr_number=i + 1)
    first = person.get("/api/v1/runs", params={"limit": "1"}).json()["nextCursor"]
    assert person.get("/api/v1/runs", params={"limit": "1", "cursor": first}).status_code == 200
    session_id = str(owner.execute("SELECT id FROM sessions").fetchone()["id"])
    payload, _ = first.split(".")
    filters = {"repositoryId": None, "status": None, "decision": None}
    forged = [
        payload + "." + keyset._b64(b"\0" * 16),                                    # a made-up MAC
        _cursor(person, str(uuid.uuid4()), "/api/v1/runs", json.loads(keyset._unb64(payload))[0], filters),
        _cursor(person, session_id, "/api/v1/runs", [True, 1], filters),
        _cursor(person, session_id, "/api/v1/runs", ["2024-01-01T00:00:00+00:00", True], filters),
        _cursor(person, session_id, "/api/v1/runs", ["10000-01-01T00:00:00+00:00", 1], filters),
        _cursor(person, session_id, "/api/v1/runs", ["2024-01-01T00:00:00+00:00", 2**64], filters),
        _cursor(person, session_id, "/api/v1/runs", [1, 3, 2**40], filters),
        "[true]", "é.é", "." * 5,
    ]
    for cursor in forged:
        answer = person.get("/api/v1/runs", params={"cursor": cursor})
        assert answer.status_code == 400 and answer.json()["code"] == "invalid_cursor", cursor
    waivers = f"/api/v1/repositories/{repo}/waivers"
    for key in ([True], [1, 3, 2**40], [0], ["1"]):
        cursor = _cursor(person, session_id, waivers, key, {"repositoryId": repo})
        answer = person.get(waivers, params={"cursor": cursor})
        assert answer.status_code == 400 and answer.json()["code"] == "invalid_cursor", key
    findings = f"/api/v1/runs/{decided_run(owner, pool, repo, pr_number=9)['id']}/findings"
    for key in ([True], [2**40], [-1]):
        cursor = _cursor(person, session_id, findings, key, {"severity": None, "waived": None})
        assert person.get(findings, params={"cursor": cursor}).status_code == 400, key


def test_the_year_10000_waiver_is_refused_and_nothing_is_stored(stack, owner, pool):
    repo = stack.repos[0]["id"]
    person = stack.sign_in("waiver")
    decided_run(owner, pool, repo, readiness="blocked", findings=[finding(1, "error", FINGERPRINT)])
    path = f"/api/v1/repositories/{repo}/waivers"
    too_far = (dt.datetime.now(dt.timezone.utc) + dt.timedelta(days=366)).isoformat()
    for expires in ("9999-12-31T23:59:59-14:00", "10000-01-01T00:00:00Z", too_far, "1969-12-31T23:59:59Z"):
        answer = person.send("POST", path, {"fingerprint": FINGERPRINT, "reason": "known", "expiresAt": expires})
        assert answer.status_code == 400 and answer.json()["code"] == "invalid_expires_at", expires
    assert count(owner, "waivers") == 0
    # A value the previous release could store does not make the listing unreadable.
    ok = person.send("POST", path, {"fingerprint": FINGERPRINT, "reason": "known"})
    assert ok.status_code == 201
    owner.execute("UPDATE waivers SET expires_at = '9999-12-31T23:59:59-14:00'")
    listing = person.get(path)
    assert listing.status_code == 200 and listing.json()["items"][0]["expiresAt"].startswith("9999-12-31T23:59:59")


# ---- spec points found open ----------------------------------------------------------------------

def test_paid_endpoints_answer_410_to_a_session_too(stack):
    person = stack.sign_in("buyer")
    for path in ("/api/v1/billing/checkout", "/api/v1/billing/portal"):
        answer = person.send("POST", path)
        assert answer.status_code == 410 and answer.json()["code"] == "marketplace_free_only", path


@pytest.mark.parametrize("name, value", [("SERVICE_OPERATOR_API_TOKEN", "too-short"),
                                         ("SERVICE_CURSOR_SECRET", "short")])
def test_an_invalid_secret_is_named_by_readiness(pool, name, value):
    from falcon import testing
    client = testing.TestClient(create_app(make_config(**{name: value}), pool))
    answer = client.simulate_get("/api/health/ready")
    assert answer.status_code == 503 and answer.json["reason"] == "missing-configuration"
    assert answer.json["missing"] == [name]


def test_repositories_removed_and_the_installation_deleted_end_everyones_access_there(stack, owner):
    kept, removed = stack.repos
    person = stack.sign_in("everyone")
    token_kept = person.mint(kept["id"], scopes=["reviews:read"]).json()["token"]
    token_removed = person.mint(removed["id"], scopes=["reviews:read"]).json()["token"]
    delivered = stack.host.send_installation_repositories_event(stack.installation["id"],
                                                                removed=[removed["full_name"]])
    assert delivered["status"] in (200, 202), delivered
    assert person.get("/api/v1/runs").status_code == 401          # the session reached that repository
    assert httpx.get(f"{stack.base}/api/v1/runs", headers=bearer(token_removed), timeout=10).json()["code"] == \
        "token_revoked"
    assert httpx.get(f"{stack.base}/api/v1/runs", headers=bearer(token_kept), timeout=10).status_code == 200

    delivered = stack.host.send_installation_event(stack.installation["id"], action="deleted")
    assert delivered["status"] in (200, 202), delivered
    assert httpx.get(f"{stack.base}/api/v1/runs", headers=bearer(token_kept), timeout=10).json()["code"] == \
        "token_revoked"
    reasons = [r["details"]["reason"] for r in owner.execute(
        "SELECT details FROM audit_events WHERE event_type = 'control_plane.token_revoked' ORDER BY occurred_at")]
    assert reasons == ["installation_repositories.removed", "installation.deleted"]


def test_revoking_a_token_reads_the_rights_again(rereading_stack, owner):
    stack = rereading_stack
    repo, full_name = stack.repos[0]["id"], stack.repos[0]["full_name"]
    lead, member = stack.sign_in("lead2", default_role="admin"), stack.sign_in("member2", default_role="push")
    theirs = member.mint(repo, scopes=["reviews:write"]).json()["tokenRecord"]["id"]
    mine = lead.mint(repo, scopes=["reviews:read"]).json()["tokenRecord"]["id"]
    stack.host.set_permission("lead2", repository=full_name, role="pull")
    # No longer admin there: another person's token is out of reach; their own is not.
    assert lead.send("DELETE", f"/api/v1/tokens?tokenId={theirs}").status_code == 404
    assert lead.send("DELETE", f"/api/v1/tokens?tokenId={mine}").json()["outcome"] == "revoked"
    assert owner.execute("SELECT revoked_at FROM api_tokens WHERE id = %s", (theirs,)).fetchone()["revoked_at"] is None


def test_a_pending_sign_in_is_kept_ten_minutes(pool, owner):
    from app import sql_api
    start = dt.datetime(2030, 1, 1, tzinfo=dt.timezone.utc)
    with pool.connection() as conn:
        for n, minutes in enumerate((0, 9, 11)):
            sql_api.sign_in_begin(conn, cookie_sha256=bytes([n]) * 32, state="s" * 20, return_to="/", ttl_seconds=600,
                                  now=start + dt.timedelta(minutes=minutes))
    # At minute 11 the first attempt (expired at minute 10) is gone; the one from minute 9 is not.
    kept = sorted(r["cookie_sha256"][0] for r in owner.execute("SELECT cookie_sha256 FROM sign_in_attempts"))
    assert kept == [1, 2]


def test_without_a_cursor_secret_one_is_generated_into_the_data_folder(pool, owner, tmp_path):
    from falcon import testing
    from tests.helpers.sessions import Session, seed_repositories
    repos = seed_repositories(owner, 1)
    for n in range(3):
        decided_run(owner, pool, repos[0], pr_number=n + 1)
    one_folder, other = tmp_path / "data", tmp_path / "other"
    first, second, elsewhere = (testing.TestClient(create_app(make_config(SERVICE_DATA_DIR=str(folder)), pool))
                                for folder in (one_folder, one_folder, other))
    session = Session(pool, repos)
    cursor = first.simulate_get("/api/v1/runs", params={"limit": "1"}, headers=session.headers()).json["nextCursor"]
    assert (one_folder / "cursor-secret").stat().st_mode & 0o777 == 0o600
    # Every process of the folder shares the key; another folder's does not.
    assert second.simulate_get("/api/v1/runs", params={"cursor": cursor}, headers=session.headers()).status_code == 200
    refused = elsewhere.simulate_get("/api/v1/runs", params={"cursor": cursor}, headers=session.headers())
    assert refused.status_code == 400 and refused.json["code"] == "invalid_cursor"

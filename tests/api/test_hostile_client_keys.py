"""Forged client addresses: the failure limiters believe X-Forwarded-For only
from a trusted proxy (SERVICE_TRUSTED_PROXIES), on the bearer, operator and
OIDC paths; refusals are logged without the credential or the address."""
from __future__ import annotations

import datetime as dt
import json

import pytest
from falcon import testing

from app.web.client_address import client_key, key_hash
from app.web.wsgi import create_app
from tests.helpers.access import OPERATOR_ENV, bearer, create_token, install_clock, seed_repository
from tests.helpers.service import make_config

CHECKOUT = "/api/v1/billing/checkout"
OPERATOR_LIST = "/api/v1/operator/installations/501/dead-letters"
CALLBACK = "/api/v1/runs/github-actions-result"
REPO = 9001
ATTACKER = "203.0.113.66"      # a peer that is no proxy of ours
VICTIM = "198.51.100.20"
PROXY = "10.1.2.3"
BAD_TOKEN = "svc_live_" + "B" * 43
START = dt.datetime(2024, 5, 1, 12, 0, 5, tzinfo=dt.timezone.utc)


@pytest.fixture(autouse=True)
def clock(monkeypatch):
    return install_clock(monkeypatch, START)


@pytest.fixture
def repo(owner):
    return seed_repository(owner, account_id=18404719, installation_id=501, repository_id=REPO, login="username")


@pytest.fixture
def behind_proxy(pool):
    """The service behind a proxy at 10.1.2.3 (and not on loopback)."""
    return testing.TestClient(create_app(make_config(SERVICE_TRUSTED_PROXIES=f"{PROXY}/32", **OPERATOR_ENV), pool))


def keys(owner, limiter="bearer") -> dict:
    return {r["client_key"]: r["failures"] for r in
            owner.execute("SELECT * FROM auth_failures WHERE limiter = %s", (limiter,)).fetchall()}


def test_client_key_rules():
    trusted = make_config(SERVICE_TRUSTED_PROXIES="10.0.0.0/8, ::1").trusted_proxies
    assert client_key(ATTACKER, "1.2.3.4", trusted) == ATTACKER                    # not a proxy: header ignored
    assert client_key("10.9.9.9", "192.0.2.1, 10.9.9.9", trusted) == "192.0.2.1"   # the proxy's first hop
    assert client_key("::1", "2001:db8::1", trusted) == "2001:db8::1"
    assert client_key("10.9.9.9", "not-an-address", trusted) == "10.9.9.9"         # a proxy writes addresses
    assert client_key("10.9.9.9", None, trusted) == "10.9.9.9"
    assert client_key(None, "1.2.3.4", trusted) == "unknown"
    assert make_config().trusted_proxies == make_config(SERVICE_TRUSTED_PROXIES=None).trusted_proxies
    assert "SERVICE_TRUSTED_PROXIES" in make_config(SERVICE_TRUSTED_PROXIES="10.0.0.0/33").missing


def test_rotating_forwarded_for_from_an_untrusted_peer_is_throttled(behind_proxy, owner, repo):
    for n in range(20):
        forged = {"X-Forwarded-For": f"192.0.2.{n}"}
        assert behind_proxy.simulate_post(CHECKOUT, remote_addr=ATTACKER,
                                          headers=bearer(BAD_TOKEN, **forged)).status_code == 401
    limited = behind_proxy.simulate_post(CHECKOUT, remote_addr=ATTACKER,
                                         headers=bearer(BAD_TOKEN, **{"X-Forwarded-For": "192.0.2.99"}))
    assert (limited.status_code, limited.json["code"]) == (429, "too_many_auth_failures")
    assert keys(owner) == {ATTACKER: 20}


def test_a_victims_address_in_the_header_cannot_lock_the_victim_out(behind_proxy, pool, owner, repo):
    value, _ = create_token(pool, REPO)
    for _ in range(25):
        behind_proxy.simulate_post(CHECKOUT, remote_addr=ATTACKER,
                                   headers=bearer(BAD_TOKEN, **{"X-Forwarded-For": VICTIM}))
    # The victim, directly and through the trusted proxy, with a valid token.
    assert behind_proxy.simulate_post(CHECKOUT, remote_addr=VICTIM, headers=bearer(value)).status_code == 410
    through_proxy = bearer(value, **{"X-Forwarded-For": f"{VICTIM}, {PROXY}"})
    assert behind_proxy.simulate_post(CHECKOUT, remote_addr=PROXY, headers=through_proxy).status_code == 410
    assert VICTIM not in keys(owner)


def test_behind_a_trusted_proxy_clients_are_keyed_on_the_first_hop(behind_proxy, pool, owner, repo):
    value, _ = create_token(pool, REPO)
    for _ in range(20):
        behind_proxy.simulate_post(CHECKOUT, remote_addr=PROXY, headers=bearer(BAD_TOKEN, **{
            "X-Forwarded-For": "192.0.2.7, 10.1.2.3"}))
    assert keys(owner) == {"192.0.2.7": 20}
    guessed = behind_proxy.simulate_post(CHECKOUT, remote_addr=PROXY, headers=bearer(value, **{
        "X-Forwarded-For": "192.0.2.7"}))
    assert guessed.status_code == 429
    other = behind_proxy.simulate_post(CHECKOUT, remote_addr=PROXY, headers=bearer(value, **{
        "X-Forwarded-For": "192.0.2.8"}))
    assert other.status_code == 410


def test_the_operator_path_ignores_forged_addresses(behind_proxy, owner):
    for n in range(21):
        result = behind_proxy.simulate_get(OPERATOR_LIST, remote_addr=ATTACKER, headers=bearer(
            "wrong-operator-token-" + "x" * 20, **{"X-Forwarded-For": f"192.0.2.{n}"}))
    assert (result.status_code, result.json["code"]) == (429, "too_many_auth_failures")
    assert keys(owner, "operator") == {ATTACKER: 20}


def test_the_oidc_path_ignores_forged_addresses(behind_proxy, owner):
    body = {"attemptId": "1-" + "0" * 32, "result": {}, "digest": "sha256:" + "0" * 64}
    for n in range(21):
        result = behind_proxy.simulate_post(CALLBACK, remote_addr=ATTACKER, json=body, headers=bearer(
            "not.a.jwt", **{"X-Forwarded-For": f"192.0.2.{n}"}))
    assert (result.status_code, result.json["code"]) == (429, "too_many_auth_failures")
    assert keys(owner) == {ATTACKER: 20}


def test_refusals_are_logged_without_credentials_or_addresses(behind_proxy, capsys, repo):
    behind_proxy.simulate_post(CHECKOUT, remote_addr=ATTACKER, headers=bearer(BAD_TOKEN))
    for _ in range(20):
        behind_proxy.simulate_post(CHECKOUT, remote_addr=ATTACKER, headers=bearer(BAD_TOKEN))
    lines = [json.loads(line) for line in capsys.readouterr().err.splitlines() if line.startswith("{")]
    refused = [line for line in lines if line["event"] == "api.access_refused"]
    assert {(r["status"], r["code"]) for r in refused} == {(401, "invalid_token"), (429, "too_many_auth_failures")}
    assert all(r["route"] == CHECKOUT and r["clientKeyHash"] == key_hash(ATTACKER) for r in refused)
    everything = "\n".join(json.dumps(line) for line in lines)
    assert BAD_TOKEN not in everything and ATTACKER not in everything


def test_every_answer_is_hardened(client, pool, owner, repo):
    admin, _ = create_token(pool, REPO, scopes=["admin"])
    created = client.simulate_post("/api/v1/tokens", headers=bearer(admin), json={
        "repositoryId": str(REPO), "name": "ci", "scopes": ["runs:write"]})
    assert created.status_code == 201
    for answer in (created, client.simulate_get("/api/health/live"), client.simulate_post(CHECKOUT),
                   client.simulate_get("/api/nothing-here")):
        assert answer.headers["X-Content-Type-Options"] == "nosniff"
        assert answer.headers["Cache-Control"] == "no-store"

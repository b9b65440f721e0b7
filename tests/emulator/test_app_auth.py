"""App JWT verification, installation tokens and the routes that take them."""
import time

import pytest

from emulator.auth import generate_rsa_key_pair, make_app_jwt
from tests.emulator.helpers import HostClient, exchange_token


def access_tokens(installed, jwt, installation_id=None):
    return installed.client.post(
        f"/app/installations/{installation_id or installed.installation['id']}/access_tokens",
        token=jwt, auth_scheme="Bearer")


def test_token_exchange_answers_the_real_shape(installed):
    response = access_tokens(installed, installed.emu.app_jwt())
    assert response.status_code == 201
    body = response.json()
    assert body["token"].startswith("ghs_")
    assert body["permissions"]["checks"] == "write"
    assert "contents" not in body["permissions"]
    assert body["repository_selection"] == "selected"


def test_tokens_vary_in_length(installed):
    lengths = {len(access_tokens(installed, installed.emu.app_jwt()).json()["token"]) for _ in range(12)}
    assert len(lengths) > 1


def test_integer_and_string_issuer_are_both_accepted(installed):
    app_id = installed.app["id"]
    for iss in (app_id, str(app_id)):
        jwt = make_app_jwt(installed.app["private_key_pem"], iss)
        assert access_tokens(installed, jwt).status_code == 201


@pytest.mark.parametrize("case", ["expired", "too_long", "future_iat", "wrong_key", "wrong_iss", "garbage", "missing"])
def test_bad_app_jwts_are_refused_with_401(installed, case):
    now = int(time.time())
    key = installed.app["private_key_pem"]
    app_id = installed.app["id"]
    jwt = {
        "expired": lambda: make_app_jwt(key, app_id, iat=now - 700, exp=now - 100),
        "too_long": lambda: make_app_jwt(key, app_id, iat=now - 30, exp=now + 600),
        "future_iat": lambda: make_app_jwt(key, app_id, iat=now + 300, exp=now + 400),
        "wrong_key": lambda: make_app_jwt(generate_rsa_key_pair()[0], app_id),
        "wrong_iss": lambda: make_app_jwt(key, app_id + 1),
        "garbage": lambda: "not.a.jwt",
        "missing": lambda: "",
    }[case]()
    response = access_tokens(installed, jwt)
    assert response.status_code == 401
    assert response.json()["message"]


def test_exactly_ten_minutes_is_accepted(installed):
    now = int(time.time())
    jwt = make_app_jwt(installed.app["private_key_pem"], installed.app["id"], iat=now - 60, exp=now + 540)
    assert access_tokens(installed, jwt).status_code == 201


def test_registered_public_key_is_used(emu, description):
    private_pem, public_pem = generate_rsa_key_pair()
    app = emu.register_app(app_id=424242, public_key_pem=public_pem)
    assert app["private_key_pem"] is None
    inst = emu.create_installation("solo", account_type="User")
    client = HostClient(emu.url, description)
    ok = client.post(f"/app/installations/{inst['id']}/access_tokens", token=make_app_jwt(private_pem, 424242), auth_scheme="Bearer")
    assert ok.status_code == 201


def test_unknown_installation_is_404(installed):
    assert access_tokens(installed, installed.emu.app_jwt(), installation_id=999).status_code == 404


def test_installation_of_another_app_is_404(installed):
    other = installed.emu.register_app(slug="other")
    jwt = installed.emu.app_jwt(app_id=other["id"])
    assert access_tokens(installed, jwt).status_code == 404


def test_get_installation_and_repo_installation(installed):
    jwt = installed.emu.app_jwt()
    inst_id = installed.installation["id"]
    got = installed.client.get(f"/app/installations/{inst_id}", token=jwt, auth_scheme="Bearer")
    assert got.status_code == 200
    assert got.json()["account"]["login"] == "acme-boards"
    assert got.json()["account"]["type"] == "Organization"
    by_repo = installed.client.get(f"/repos/{installed.full_name}/installation", token=jwt, auth_scheme="Bearer")
    assert by_repo.status_code == 200 and by_repo.json()["id"] == inst_id
    assert installed.client.get("/repos/acme-boards/nope/installation", token=jwt, auth_scheme="Bearer").status_code == 404
    # An installation token is not an app JWT.
    assert installed.client.get(f"/app/installations/{inst_id}").status_code == 401


def test_installation_repositories(installed):
    response = installed.client.get("/installation/repositories")
    assert response.status_code == 200
    assert [r["full_name"] for r in response.json()["repositories"]] == [installed.full_name]


def test_repo_routes_need_a_live_token_of_the_owning_installation(installed):
    emu, client = installed.emu, installed.client
    path = f"/repos/{installed.full_name}/actions/runs/1"
    assert client.get(path, token="", validate=False).status_code == 401
    assert client.get(path, token="ghs_unknown", validate=False).status_code == 401
    other_inst = emu.create_installation("someone-else")
    emu.create_repository("someone-else/thing", installation_id=other_inst["id"])
    assert client.get("/repos/someone-else/thing/actions/runs/1", validate=False).status_code == 404
    emu.expire_installation_tokens()
    assert client.get(path, validate=False).status_code == 401


def test_bearer_scheme_is_accepted_for_installation_tokens(installed):
    assert installed.client.get("/installation/repositories", auth_scheme="Bearer").status_code == 200


def test_token_restricted_to_repositories_and_permissions(installed):
    emu, client = installed.emu, installed.client
    emu.create_repository("acme-boards/second", installation_id=installed.installation["id"])
    narrowed = exchange_token(client, emu, installed.installation["id"], repositories=["second"],
                              permissions={"checks": "read"})
    assert narrowed.status_code == 201
    assert [r["name"] for r in narrowed.json()["repositories"]] == ["second"]
    token = narrowed.json()["token"]
    assert client.get(f"/repos/{installed.full_name}/check-runs/1", token=token, validate=False).status_code == 404
    head = emu.repository("acme-boards/second")["head_sha"]
    denied = client.post("/repos/acme-boards/second/check-runs", token=token, json={"name": "x", "head_sha": head}, validate=False)
    assert denied.status_code == 403
    refused = exchange_token(client, emu, installed.installation["id"], permissions={"contents": "read"})
    assert refused.status_code == 422
    unknown = exchange_token(client, emu, installed.installation["id"], repositories=["not-there"])
    assert unknown.status_code == 422


def test_token_expiry_follows_the_configured_lifetime(installed):
    installed.emu.set_installation_token_ttl(0)
    token = exchange_token(installed.client, installed.emu, installed.installation["id"]).json()["token"]
    assert installed.client.get("/installation/repositories", token=token).status_code == 401

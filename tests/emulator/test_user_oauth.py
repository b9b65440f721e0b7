"""The OAuth web flow and the signed-in user's routes."""
from urllib.parse import parse_qs, urlsplit

import httpx

from tests.emulator.helpers import HostClient


def sign_in(emu, app, state="xyz", redirect_uri="http://127.0.0.1:1/callback"):
    answer = httpx.get(emu.url + "/login/oauth/authorize",
                       params={"client_id": app["client_id"], "redirect_uri": redirect_uri, "state": state})
    assert answer.status_code == 302
    location = urlsplit(answer.headers["Location"])
    assert f"{location.scheme}://{location.netloc}{location.path}" == redirect_uri
    return parse_qs(location.query)


def test_oauth_flow_and_user_routes(installed, description):
    emu = installed.emu
    emu.create_user("ada", name="Ada", email="ada@example.org", organizations=["acme-boards"])
    query = sign_in(emu, installed.app)
    assert query["state"] == ["xyz"]
    exchange = httpx.post(emu.url + "/login/oauth/access_token", headers={"Accept": "application/json"},
                          data={"client_id": installed.app["client_id"], "client_secret": installed.app["client_secret"],
                                "code": query["code"][0]})
    body = exchange.json()
    assert body["token_type"] == "bearer" and body["access_token"].startswith("gho_")
    user_client = HostClient(emu.url, description, token=body["access_token"])
    me = user_client.get("/user")
    assert me.status_code == 200 and me.json()["login"] == "ada"
    installations = user_client.get("/user/installations").json()
    assert [i["id"] for i in installations["installations"]] == [installed.installation["id"]]
    repos = user_client.get(f"/user/installations/{installed.installation['id']}/repositories").json()
    assert [r["full_name"] for r in repos["repositories"]] == [installed.full_name]
    hidden = emu.create_installation("not-adas")
    assert user_client.get(f"/user/installations/{hidden['id']}/repositories").status_code == 404
    # A code works once.
    again = httpx.post(emu.url + "/login/oauth/access_token", headers={"Accept": "application/json"},
                       data={"client_id": installed.app["client_id"], "client_secret": installed.app["client_secret"],
                             "code": query["code"][0]})
    assert again.json()["error"] == "bad_verification_code"


def test_form_encoded_answer_and_bad_client_secret(installed):
    emu = installed.emu
    emu.create_user("bob")
    code = sign_in(emu, installed.app)["code"][0]
    wrong = httpx.post(emu.url + "/login/oauth/access_token", headers={"Accept": "application/json"},
                       json={"client_id": installed.app["client_id"], "client_secret": "nope", "code": code})
    assert wrong.json()["error"] == "incorrect_client_credentials"
    form = httpx.post(emu.url + "/login/oauth/access_token",
                      data={"client_id": installed.app["client_id"], "client_secret": installed.app["client_secret"], "code": code})
    assert parse_qs(form.text)["access_token"][0].startswith("gho_")
    assert emu.requests(path_prefix="/login/oauth/access_token")[-1]["body"]["client_secret"] == "[redacted]"


def test_user_routes_need_a_user_token(installed):
    assert installed.client.get("/user", validate=False).status_code == 401
    assert installed.client.get("/user", token="", validate=False).status_code == 401
    emu = installed.emu
    emu.create_user("carol", sign_in=False)
    token = emu.user_token("carol")
    assert installed.client.get("/user", token=token).json()["login"] == "carol"
    assert installed.client.get("/user/installations", token=token).json()["total_count"] == 0


def pkce_pair(seed: str = "v") -> tuple[str, str]:
    import base64
    import hashlib
    verifier = (seed * 64)[:64]
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    return verifier, challenge


def exchange(emu, app, code, **extra):
    return httpx.post(emu.url + "/login/oauth/access_token", headers={"Accept": "application/json"},
                      data={"client_id": app["client_id"], "client_secret": app["client_secret"], "code": code,
                            **extra}).json()


def authorize(emu, app, **params):
    return httpx.get(emu.url + "/login/oauth/authorize", params={"client_id": app["client_id"], **params})


def test_pkce_s256_binds_the_code_to_its_verifier(installed):
    emu, app = installed.emu, installed.app
    emu.create_user("dora", organizations=["acme-boards"])
    verifier, challenge = pkce_pair()
    for presented in (None, pkce_pair("w")[0], verifier[:42]):
        answer = authorize(emu, app, redirect_uri="http://127.0.0.1:1/cb", state="s" * 20, code_challenge=challenge,
                           code_challenge_method="S256")
        code = parse_qs(urlsplit(answer.headers["Location"]).query)["code"][0]
        refused = exchange(emu, app, code, **({"code_verifier": presented} if presented else {}))
        assert refused["error"] == "bad_verification_code"
    answer = authorize(emu, app, redirect_uri="http://127.0.0.1:1/cb", code_challenge=challenge,
                       code_challenge_method="S256")
    code = parse_qs(urlsplit(answer.headers["Location"]).query)["code"][0]
    assert exchange(emu, app, code, code_verifier=verifier)["access_token"].startswith("gho_")
    assert emu.requests(path_prefix="/login/oauth/access_token")[-1]["body"]["code_verifier"] == "[redacted]"
    plain = authorize(emu, app, code_challenge=verifier, code_challenge_method="plain")
    assert plain.status_code == 400


def test_redirect_uri_must_be_a_registered_callback_or_below_it(emu):
    app = emu.register_app(callback_urls=["http://127.0.0.1:7000/auth/callback"])
    emu.create_user("erin")
    below = authorize(emu, app, redirect_uri="http://127.0.0.1:7000/auth/callback/more", state="abc")
    assert below.headers["Location"].startswith("http://127.0.0.1:7000/auth/callback/more?code=")
    for wrong in ("http://127.0.0.1:7001/auth/callback", "http://evil.example/auth/callback",
                  "http://127.0.0.1:7000/other"):
        answer = authorize(emu, app, redirect_uri=wrong, state="abc")
        location = urlsplit(answer.headers["Location"])
        assert f"{location.scheme}://{location.netloc}{location.path}" == "http://127.0.0.1:7000/auth/callback"
        query = parse_qs(location.query)
        assert query["error"] == ["redirect_uri_mismatch"] and query["state"] == ["abc"] and "code" not in query


def test_a_user_who_refuses_is_sent_back_with_access_denied(installed):
    emu = installed.emu
    emu.create_user("fred")
    emu.set_oauth_denied(True)
    query = parse_qs(urlsplit(authorize(emu, installed.app, redirect_uri="http://127.0.0.1:1/cb",
                                        state="xyz").headers["Location"]).query)
    assert query["error"] == ["access_denied"] and query["state"] == ["xyz"] and "code" not in query
    emu.set_oauth_denied(False)
    assert "code" in sign_in(emu, installed.app)


def test_sign_in_as_and_repository_access_over_the_control_api(installed, description):
    emu = installed.emu
    emu.create_repository("acme-boards/other", installation_id=installed.installation["id"])
    control = httpx.Client(base_url=emu.url + "/_emulator", timeout=10)
    made = control.post("/users", json={"login": "gail", "organizations": ["acme-boards"], "sign_in": False,
                                        "repository_access": ["acme-boards/other"]})
    assert made.status_code == 201
    emu.create_user("hank", organizations=["acme-boards"])
    assert control.post("/users/gail/sign-in").json()["login"] == "gail"
    code = sign_in(emu, installed.app)["code"][0]
    token = exchange(emu, installed.app, code)["access_token"]
    repos = HostClient(emu.url, description, token=token).get(
        f"/user/installations/{installed.installation['id']}/repositories").json()
    assert [r["full_name"] for r in repos["repositories"]] == ["acme-boards/other"]
    assert control.put("/oauth/denied", json={"denied": True}).json() == {"denied": True}
    assert control.post("/users/nobody/sign-in").status_code == 404


def test_a_users_permissions_in_the_code_hosts_shape_and_changed_by_control(installed, description):
    emu = installed.emu
    emu.create_user("bo", organizations=["acme-boards"], default_role="push")
    user_client = HostClient(emu.url, description, token=emu.user_token("bo"))
    listing = f"/user/installations/{installed.installation['id']}/repositories"
    [repo] = user_client.get(listing).json()["repositories"]
    assert repo["permissions"] == {"admin": False, "maintain": False, "push": True, "triage": True, "pull": True}
    asked = f"/repos/{installed.full_name}/collaborators/bo/permission"
    answer = installed.client.get(asked).json()          # the installation's token, validated against the description
    assert (answer["permission"], answer["role_name"], answer["user"]["login"]) == ("write", "write", "bo")

    emu.set_permission("bo", repository=installed.full_name, role="maintain")
    [repo] = user_client.get(listing).json()["repositories"]
    assert repo["permissions"]["maintain"] is True and repo["permissions"]["admin"] is False
    assert installed.client.get(asked).json()["role_name"] == "maintain"
    emu.set_permission("bo", organizations=[])
    assert installed.client.get(asked).json()["permission"] == "none"
    assert installed.client.get(f"/repos/{installed.full_name}/collaborators/nobody/permission",
                                validate=False).status_code == 404

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

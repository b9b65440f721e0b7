"""bin/register-app (tools/register_app.py) against the emulator's manifest flow:
the form a browser posts, the code host's redirect, the conversion, the env
file; then the service, configured from that file alone, makes every code host
call it makes in production with an installation granted exactly the
manifest's permissions."""
from __future__ import annotations

import datetime as dt
import json
import re
import stat
import subprocess
import urllib.error
import urllib.request
from html import unescape
from pathlib import Path
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest

import emulator
from app import config
from app.host.client import from_config
from app.lifecycle_events import HANDLED_EVENTS
from tools import register_app

ROOT = Path(__file__).resolve().parents[2]
PUBLIC_URL = "https://boardready.example.com"


@pytest.fixture
def host():
    running = emulator.start()
    try:
        yield running
    finally:
        running.stop()


def _browser_submits(flow_url: str) -> tuple[int, str]:
    """What a browser does with the tool's page: read the form, post it, follow the redirect."""
    page = urllib.request.urlopen(flow_url + "/").read().decode()
    action = unescape(re.search(r'<form method=post action="([^"]+)"', page).group(1))
    fields = {name: unescape(value) for name, value in re.findall(r'name=(\w+) value="([^"]*)"', page)}
    try:
        response = urllib.request.urlopen(urllib.request.Request(action, data=urlencode(fields).encode()))
        return response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args):
        return None


def _posted_manifest(host, fields: dict) -> urllib.error.HTTPError:
    """The code host's answer to the manifest form, its redirect not followed."""
    request = urllib.request.Request(register_app.new_app_url(host.url, None), data=urlencode(fields).encode())
    with pytest.raises(urllib.error.HTTPError) as answer:
        urllib.request.build_opener(_NoRedirect).open(request)
    return answer.value


def _env(path: Path) -> dict[str, str]:
    return dict(line.split("=", 1) for line in path.read_text().splitlines() if line and not line.startswith("#"))


def test_the_manifest_asks_for_what_the_service_uses_and_never_contents():
    document = register_app.manifest(PUBLIC_URL, "http://127.0.0.1:1/callback")
    assert document["hook_attributes"] == {"url": PUBLIC_URL + "/api/host/webhook", "active": True}
    assert document["callback_urls"] == [PUBLIC_URL + "/auth/callback"]
    permissions = document["default_permissions"]
    assert {"checks": "write", "actions": "write", "metadata": "read"}.items() <= permissions.items()
    assert "contents" not in permissions and "administration" not in permissions
    # Every event the intake handles that must be asked for, and nothing else.
    assert set(document["default_events"]) == (set(HANDLED_EVENTS) | {"organization", "member", "membership", "team"}) \
        - register_app.ALWAYS_DELIVERED
    for event in document["default_events"]:
        assert register_app.EVENT_PERMISSION[event] in permissions


def test_print_shows_the_manifest():
    out = subprocess.run([str(ROOT / "bin" / "register-app"), "--public-url", PUBLIC_URL, "--print"],
                         capture_output=True, text=True, check=True).stdout
    assert json.loads(out)["hook_attributes"]["url"] == PUBLIC_URL + "/api/host/webhook"


def test_the_flow_registers_the_app_and_the_service_works_with_what_it_wrote(host, tmp_path):
    env_file = tmp_path / "app.env"
    flow = register_app.ManifestFlow(PUBLIC_URL, env_file, web_url=host.url, api_url=host.url,
                                     org="acme-hw", name="boardready test").start()
    try:
        status, page = _browser_submits(flow.url)
        assert flow.done.wait(10)
    finally:
        flow.stop()
    assert (status, flow.error) == (200, None), page
    assert "registered" in page

    # The env file and the key beside it: the owner's, readable by the folder's group (the service's).
    key_file = env_file.with_name("app.env.private-key.pem")
    for path in (env_file, key_file):
        assert stat.S_IMODE(path.stat().st_mode) == 0o640
        assert path.stat().st_gid == tmp_path.stat().st_gid
    written = _env(env_file)
    assert written["HOST_APP_ID"] == str(flow.app["id"])
    assert written["HOST_APP_PRIVATE_KEY_FILE"] == str(key_file.resolve())
    assert written["SERVICE_PUBLIC_URL"] == PUBLIC_URL
    assert flow.app["pem"] not in env_file.read_text()

    # The code host registered what the manifest asked for.
    app = host.state.apps[flow.app["id"]]
    manifest = register_app.manifest(PUBLIC_URL, flow.url + "/callback")
    assert app.permissions == manifest["default_permissions"]
    assert app.events == manifest["default_events"]
    assert app.callback_urls == [PUBLIC_URL + "/auth/callback"]
    assert app.owner.login == "acme-hw"
    assert host.sender.targets["app"].url == PUBLIC_URL + "/api/host/webhook"

    # The service, configured from the file, is complete for the app's part...
    cfg = config.load({**written, "SERVICE_OIDC_AUDIENCE": "boardready"})
    assert cfg.missing == ()
    assert cfg.sign_in.enabled and cfg.webhook_secret.reveal() == flow.app["webhook_secret"]

    # ...and every call it makes to the code host succeeds with the manifest's permissions.
    installation = host.create_installation("acme-hw", permissions=manifest["default_permissions"])
    repo = host.create_repository("acme-hw/blinky", installation_id=installation["id"])
    pull = host.open_pull_request("acme-hw/blinky", title="Add the board")
    client = from_config(cfg)
    try:
        iid, name, sha = installation["id"], "acme-hw/blinky", pull["head"]["sha"]
        check = client.create_check_run(iid, name, sha, "boardready:release_run:1", "queued")
        assert client.find_check_run(iid, name, sha, "boardready:release_run:1")["id"] == check["id"]
        client.update_check_run(iid, name, check["id"], {"status": "completed", "conclusion": "neutral"})
        assert client.get_check_run(iid, name, check["id"])["conclusion"] == "neutral"
        run = client.dispatch_workflow(iid, name, repo["default_branch"],
                                       {"attempt_id": "1-abc", "head_sha": sha, "pull_request": str(pull["number"])})
        client.get_workflow_run(iid, name, run["workflow_run_id"])
        client.list_workflow_runs(iid, name, repo["default_branch"], dt.datetime.now(dt.timezone.utc)
                                  - dt.timedelta(minutes=5))
        comment = client.create_comment(iid, name, pull["number"], "readiness: neutral")
        client.update_comment(iid, name, comment["id"], "readiness: neutral (updated)")
        assert len(client.list_comments(iid, name, pull["number"])) == 1
    finally:
        client.close()


def test_a_code_converts_once(host, tmp_path):
    manifest = register_app.manifest(PUBLIC_URL, "http://127.0.0.1:9/callback")
    answer = _posted_manifest(host, {"manifest": json.dumps(manifest), "state": "s1"})
    assert answer.code == 302
    location = urlsplit(answer.headers["Location"])
    assert location.path == "/callback" and parse_qs(location.query)["state"] == ["s1"]
    code = parse_qs(location.query)["code"][0]
    app = register_app.convert(host.url, code)
    assert app["pem"].startswith("-----BEGIN") and app["webhook_secret"] and app["client_secret"]
    with pytest.raises(urllib.error.HTTPError) as again:
        register_app.convert(host.url, code)
    assert again.value.code == 404
    # The tool never replaces secrets it wrote before.
    register_app.write_env_file(tmp_path / "app.env", app, PUBLIC_URL, host.url, host.url)
    with pytest.raises(FileExistsError):
        register_app.write_env_file(tmp_path / "app.env", app, PUBLIC_URL, host.url, host.url)


def test_the_code_host_refuses_an_event_without_its_permission(host):
    manifest = register_app.manifest(PUBLIC_URL, "http://127.0.0.1:9/callback")
    del manifest["default_permissions"]["pull_requests"]
    request = urllib.request.Request(register_app.new_app_url(host.url, "acme-hw"),
                                     data=urlencode({"manifest": json.dumps(manifest)}).encode())
    with pytest.raises(urllib.error.HTTPError) as answer:
        urllib.request.urlopen(request)
    assert answer.value.code == 422
    assert "pull_request needs the pull_requests permission" in answer.value.read().decode()


def test_the_command_serves_the_flow_and_exits_once_the_app_is_registered(host, tmp_path):
    command = subprocess.Popen(
        [str(ROOT / "bin" / "register-app"), "--public-url", PUBLIC_URL, "--web-url", host.url,
         "--api-url", host.url, "--org", "acme-hw", "--env-file", "app.env"],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        first = command.stdout.readline()
        flow_url = re.search(r"Open (http://127\.0\.0\.1:\d+)/", first).group(1)
        status, _ = _browser_submits(flow_url)
        out, err = command.communicate(timeout=60)
    finally:
        if command.poll() is None:
            command.kill()
    assert (status, command.returncode) == (200, 0), err
    assert "registered; settings written to" in out
    written = _env(tmp_path / "app.env")                     # relative to where the command ran
    assert written["HOST_WEB_URL"] == host.url and int(written["HOST_APP_ID"]) in host.state.apps


def test_the_command_converts_a_code_got_by_hand(host, tmp_path):
    manifest = register_app.manifest(PUBLIC_URL, "http://127.0.0.1:9/callback")
    answer = _posted_manifest(host, {"manifest": json.dumps(manifest)})
    code = parse_qs(urlsplit(answer.headers["Location"]).query)["code"][0]
    run = [str(ROOT / "bin" / "register-app"), "--public-url", PUBLIC_URL, "--api-url", host.url,
           "--env-file", str(tmp_path / "app.env"), "--code", code]
    done = subprocess.run(run, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    again = subprocess.run(run[:-4] + ["--env-file", str(tmp_path / "other.env"), "--code", code],
                           capture_output=True, text=True)
    assert again.returncode == 1 and "HTTPError" in again.stderr    # a code converts once


@pytest.mark.parametrize("case", ["folder_missing", "env_file_exists", "key_exists"])
def test_the_outputs_are_checked_before_the_code_host_creates_the_app(host, tmp_path, case):
    """A code spent on an app whose credentials cannot be written leaves an
    orphan app the code host refuses to register again under its name."""
    env_file = tmp_path / "app.env"
    if case == "folder_missing":
        env_file = tmp_path / "not-yet" / "app.env"
    elif case == "env_file_exists":
        env_file.write_text("kept\n")
    else:
        register_app.key_file_for(env_file).write_text("kept\n")
    apps_before = set(host.state.apps)
    manifest = register_app.manifest(PUBLIC_URL, "http://127.0.0.1:9/callback")
    answer = _posted_manifest(host, {"manifest": json.dumps(manifest)})
    code = parse_qs(urlsplit(answer.headers["Location"]).query)["code"][0]
    done = subprocess.run([str(ROOT / "bin" / "register-app"), "--public-url", PUBLIC_URL, "--api-url", host.url,
                           "--env-file", str(env_file), "--code", code], capture_output=True, text=True)
    assert done.returncode == 1 and "nothing was created on the code host" in done.stderr, done.stderr
    # The code is still good: the tool did not spend it.
    assert register_app.convert(host.url, code)["id"] not in apps_before
    if case != "folder_missing":
        assert "kept" in (env_file if case == "env_file_exists" else register_app.key_file_for(env_file)).read_text()


def test_force_replaces_the_files_whole(host, tmp_path):
    manifest = register_app.manifest(PUBLIC_URL, "http://127.0.0.1:9/callback")
    answer = _posted_manifest(host, {"manifest": json.dumps(manifest)})
    app = register_app.convert(host.url, parse_qs(urlsplit(answer.headers["Location"]).query)["code"][0])
    (tmp_path / "app.env").write_text("old\n")
    register_app.write_env_file(tmp_path / "app.env", app, PUBLIC_URL, host.url, host.url, force=True)
    assert _env(tmp_path / "app.env")["HOST_APP_ID"] == str(app["id"])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["app.env", "app.env.private-key.pem"]


@pytest.mark.parametrize("field, value", [
    ("webhook_secret", "s3cret\nSERVICE_OPERATOR_API_TOKEN=" + "x" * 40),
    ("client_secret", "a b"),
    ("client_id", "Iv1.\r\nHOST_API_URL=https://evil.example"),
    ("slug", "boardready\nSERVICE_TRUSTED_PROXIES=0.0.0.0/0"),
    ("id", "12\nX=1"),
    ("pem", "-----BEGIN RSA PRIVATE KEY-----\nAAAA\n-----END RSA PRIVATE KEY-----\nHOST_APP_ID=1\n"),
])
def test_the_code_hosts_answer_is_checked_before_anything_is_written(host, tmp_path, field, value):
    """A value with a newline would write a setting of its own into the env file (issue 36)."""
    manifest = register_app.manifest(PUBLIC_URL, "http://127.0.0.1:9/callback")
    code = parse_qs(urlsplit(_posted_manifest(host, {"manifest": json.dumps(manifest), "state": "s"})
                             .headers["Location"]).query)["code"][0]
    app = register_app.convert(host.url, code)
    app[field] = value
    host.add_fault(operation_id="apps/create-from-manifest", status=201, body=app, count=1)
    with pytest.raises(ValueError):
        register_app.convert(host.url, "another-code")
    assert list(tmp_path.iterdir()) == []


def test_the_page_is_served_only_to_its_own_host(host, tmp_path):
    flow = register_app.ManifestFlow(PUBLIC_URL, tmp_path / "app.env", web_url=host.url, api_url=host.url,
                                     org=None, name="boardready").start()
    try:
        port = urlsplit(flow.url).port
        for name in ("attacker.example", f"attacker.example:{port}", f"127.0.0.1:{port + 1}"):
            request = urllib.request.Request(flow.url + "/", headers={"Host": name})
            with pytest.raises(urllib.error.HTTPError) as refused:
                urllib.request.urlopen(request)
            assert refused.value.code == 421, name
            assert b"manifest" not in refused.value.read()
        for name in (f"127.0.0.1:{port}", f"localhost:{port}"):
            page = urllib.request.urlopen(urllib.request.Request(flow.url + "/", headers={"Host": name}))
            assert page.status == 200 and b"name=manifest" in page.read()
    finally:
        flow.stop()

"""The control API over HTTP and the bin/emulator command line."""
import os
import signal
import subprocess
import sys

import httpx

from tests.emulator.helpers import ROOT, HostClient


def test_whole_setup_through_the_control_api(emu, description):
    control = httpx.Client(base_url=emu.url + "/_emulator", timeout=10)
    app = control.post("/apps", json={"slug": "boardready"}).json()
    assert app["private_key_pem"].startswith("-----BEGIN PRIVATE KEY-----")
    inst = control.post("/installations", json={"account_login": "octo", "account_type": "User"}).json()
    repo = control.post("/repositories", json={"full_name": "octo/pcb", "installation_id": inst["id"]}).json()
    assert repo["workflows"]["readiness-runner.yml"]["id"]
    assert control.put("/repositories/octo/pcb/run-settings", json={"mode": "auto", "conclusion": "success",
                                                                     "delay_seconds": 0.02}).status_code == 200
    pr = control.post("/repositories/octo/pcb/pulls", json={"head_ref": "rev-c"}).json()
    synced = control.post(f"/repositories/octo/pcb/pulls/{pr['number']}/synchronize", json={}).json()
    assert synced["head"]["sha"] != pr["head"]["sha"]
    jwt = control.post(f"/apps/{app['id']}/jwt", json={}).json()["token"]
    host = HostClient(emu.url, description)
    token = host.post(f"/app/installations/{inst['id']}/access_tokens", token=jwt, auth_scheme="Bearer").json()["token"]
    run = host.post("/repos/octo/pcb/actions/workflows/readiness-runner.yml/dispatches", token=token,
                    json={"ref": "rev-c", "return_run_details": True}).json()
    waited = emu.wait_for_run(run["workflow_run_id"], timeout=10)
    assert (waited["conclusion"], waited["head_sha"]) == ("success", synced["head"]["sha"])
    runs = control.get("/runs", params={"full_name": "octo/pcb"}).json()["items"]
    assert [r["id"] for r in runs] == [run["workflow_run_id"]]
    assert control.get("/state").json()["repositories"][0]["full_name"] == "octo/pcb"
    assert control.put("/repositories/octo/pcb/workflows", json={"workflows": []}).status_code == 200
    assert host.post("/repos/octo/pcb/actions/workflows/readiness-runner.yml/dispatches", token=token,
                     json={"ref": "main"}).status_code == 404
    assert control.post("/repositories", json={"full_name": "no-slash"}).status_code == 400
    assert control.get("/runs/1").status_code == 404
    assert control.post("/reset").json() == {"reset": True}
    assert control.get("/state").json()["repositories"] == []


def test_manual_run_control_over_http(installed):
    control = httpx.Client(base_url=installed.emu.url + "/_emulator", timeout=10)
    run_id = installed.client.post(f"/repos/{installed.full_name}/actions/workflows/readiness-runner.yml/dispatches",
                                   json={"ref": "main", "return_run_details": True}).json()["workflow_run_id"]
    assert control.post(f"/runs/{run_id}/start").json()["status"] == "in_progress"
    completed = control.post(f"/runs/{run_id}/complete", json={"conclusion": "cancelled"}).json()
    assert (completed["status"], completed["conclusion"]) == ("completed", "cancelled")
    assert control.post(f"/runs/{run_id}/complete", json={"conclusion": "bogus"}).status_code == 400
    assert control.post(f"/runs/{run_id}/rerun").json()["run_attempt"] == 2


def test_cli_prints_its_url_and_serves(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    process = subprocess.Popen(
        [sys.executable, "-m", "emulator", "--port", "0", "--state-dir", str(tmp_path / "state"),
         "--webhook-url", "http://127.0.0.1:9/hook", "--webhook-secret", "s", "--runner-command", "true"],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        url = process.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:")
        state = httpx.get(url + "/_emulator/state").json()
        assert state["oidc_issuer"] == url + "/oidc"
        app = httpx.post(url + "/_emulator/apps", json={}).json()
        inst = httpx.post(url + "/_emulator/installations", json={"account_login": "cli-org"}).json()
        repo = httpx.post(url + "/_emulator/repositories",
                          json={"full_name": "cli-org/r", "installation_id": inst["id"]}).json()
        assert repo["run_settings"]["mode"] == "execute"
        assert app["id"]
    finally:
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=20) == 0

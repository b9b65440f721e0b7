"""Execute mode: the runner command runs in a copy of the repository with a runner's environment."""
import json
import sys
import textwrap

import jwt
import pytest

RUNNER = textwrap.dedent("""
    import json, os, sys, urllib.request
    names = [n for n in os.environ if n.startswith(("GITHUB_", "ACTIONS_", "RUNNER_", "SERVICE_"))]
    env = {n: os.environ[n] for n in names}
    with open(os.environ["GITHUB_EVENT_PATH"]) as f:
        event = json.load(f)
    request = urllib.request.Request(
        os.environ["ACTIONS_ID_TOKEN_REQUEST_URL"] + "&audience=" + os.environ["SERVICE_OIDC_AUDIENCE"],
        headers={"Authorization": "Bearer " + os.environ["ACTIONS_ID_TOKEN_REQUEST_TOKEN"]})
    token = json.load(urllib.request.urlopen(request))["value"]
    files = sorted(os.listdir(os.environ["GITHUB_WORKSPACE"]))
    with open(os.path.join(os.environ["RESULT_DIR"], "seen.json"), "w") as f:
        json.dump({"env": env, "event": event, "token": token, "files": files, "cwd": os.getcwd()}, f)
    print("runner says hello")
    print("runner complains", file=sys.stderr)
    sys.exit(int(event["inputs"].get("exitCode", "0")))
""")


@pytest.fixture
def executing(installed, tmp_path):
    content = tmp_path / "content"
    (content / "hw").mkdir(parents=True)
    (content / "hw" / "board.kicad_pro").write_text("{}")
    results = tmp_path / "results"
    results.mkdir()
    script = tmp_path / "runner.py"
    script.write_text(RUNNER)
    emu = installed.emu
    emu.create_repository("acme-boards/hardware", installation_id=installed.installation["id"], content_dir=str(content))
    emu.set_run_mode("acme-boards/hardware", "execute", runner_command=[sys.executable, str(script)],
                     runner_env={"SERVICE_URL": "http://127.0.0.1:1", "SERVICE_OIDC_AUDIENCE": "boardready",
                                 "RESULT_DIR": str(results)})
    return installed, results


def dispatch(installed, inputs):
    response = installed.client.post(
        "/repos/acme-boards/hardware/actions/workflows/readiness-runner.yml/dispatches",
        json={"ref": "main", "inputs": inputs, "return_run_details": True})
    assert response.status_code == 200, response.text
    return response.json()["workflow_run_id"]


def test_runner_gets_the_environment_and_succeeds(executing):
    installed, results = executing
    emu = installed.emu
    run_id = dispatch(installed, {"releaseRunId": "rr-9", "exitCode": "0"})
    run = emu.wait_for_run(run_id, timeout=60)
    assert run["conclusion"] == "success", run["attempts"][0]["stderr_tail"]
    seen = json.loads((results / "seen.json").read_text())
    env = seen["env"]
    repo = emu.repository("acme-boards/hardware")
    assert env["GITHUB_REPOSITORY"] == "acme-boards/hardware"
    assert env["GITHUB_REPOSITORY_ID"] == str(repo["id"])
    assert env["GITHUB_RUN_ID"] == str(run_id) and env["GITHUB_RUN_ATTEMPT"] == "1"
    assert env["GITHUB_SHA"] == repo["head_sha"] and env["GITHUB_REF"] == "refs/heads/main"
    assert env["GITHUB_EVENT_NAME"] == "workflow_dispatch" and env["GITHUB_ACTIONS"] == "true"
    assert env["SERVICE_URL"] == "http://127.0.0.1:1"
    assert seen["cwd"] == env["GITHUB_WORKSPACE"]
    assert seen["files"] == ["hw"]
    assert seen["event"]["inputs"] == {"releaseRunId": "rr-9", "exitCode": "0"}
    assert seen["event"]["repository"]["full_name"] == "acme-boards/hardware"
    claims = jwt.decode(seen["token"], options={"verify_signature": False})
    assert (claims["aud"], claims["run_id"]) == ("boardready", str(run_id))
    attempt = run["attempts"][0]
    assert attempt["exit_code"] == 0
    assert "runner says hello" in attempt["stdout_tail"]
    assert "runner complains" in attempt["stderr_tail"]


def test_nonzero_exit_is_failure_and_rerun_gets_attempt_two(executing):
    installed, results = executing
    emu = installed.emu
    run_id = dispatch(installed, {"exitCode": "3"})
    run = emu.wait_for_run(run_id, timeout=60)
    assert (run["conclusion"], run["attempts"][0]["exit_code"]) == ("failure", 3)
    emu.rerun(run_id)
    run = emu.wait_for_run(run_id, timeout=60)
    assert run["run_attempt"] == 2
    assert json.loads((results / "seen.json").read_text())["env"]["GITHUB_RUN_ATTEMPT"] == "2"


def test_shell_command_and_timeout(installed, tmp_path):
    emu = installed.emu
    emu.set_run_mode(installed.full_name, "execute", runner_command="echo \"$GITHUB_REPOSITORY\"; exit 0")
    response = installed.client.post(
        f"/repos/{installed.full_name}/actions/workflows/readiness-runner.yml/dispatches",
        json={"ref": "main", "return_run_details": True})
    run = emu.wait_for_run(response.json()["workflow_run_id"], timeout=60)
    assert run["conclusion"] == "success"
    assert run["attempts"][0]["stdout_tail"].strip() == installed.full_name
    emu.set_run_mode(installed.full_name, "execute", runner_command="sleep 30", timeout_seconds=0.2)
    response = installed.client.post(
        f"/repos/{installed.full_name}/actions/workflows/readiness-runner.yml/dispatches",
        json={"ref": "main", "return_run_details": True})
    run = emu.wait_for_run(response.json()["workflow_run_id"], timeout=60)
    assert run["conclusion"] == "timed_out"

"""Workflow dispatch and simulated runs (manual and auto modes)."""
import pytest

DISPATCH = "/repos/{}/actions/workflows/{}/dispatches"


def dispatch(installed, workflow="readiness-runner.yml", **body):
    body.setdefault("ref", "main")
    return installed.client.post(DISPATCH.format(installed.full_name, workflow), json=body)


def test_dispatch_without_run_details_is_204(installed):
    response = dispatch(installed, inputs={"releaseRunId": "r-1"})
    assert response.status_code == 204 and response.content == b""
    [run] = installed.emu.runs(installed.full_name)
    assert run["status"] == "queued"
    assert run["inputs"] == {"releaseRunId": "r-1"}
    assert run["head_sha"] == installed.repo["head_sha"]


def test_dispatch_with_run_details_is_200(installed):
    response = dispatch(installed, inputs={"attempt": 2, "dry": True}, return_run_details=True)
    assert response.status_code == 200
    body = response.json()
    assert body["workflow_run_id"] > 2**32
    assert body["run_url"].endswith(f"/repos/{installed.full_name}/actions/runs/{body['workflow_run_id']}")
    run = installed.emu.run(body["workflow_run_id"])
    assert run["inputs"] == {"attempt": "2", "dry": "true"}


def test_missing_workflow_file_is_404(installed):
    installed.emu.set_workflows(installed.full_name, [])
    assert dispatch(installed).status_code == 404
    assert dispatch(installed, workflow="other.yml").status_code == 404


@pytest.mark.parametrize("body", [
    {"inputs": {}},  # no ref
    {"ref": 7},
    {"ref": "main", "inputs": "x"},
    {"ref": "main", "inputs": {f"k{i}": "v" for i in range(26)}},
    {"ref": "main", "inputs": {"nested": {"a": 1}}},
    {"ref": "main", "return_run_details": "yes"},
    {"ref": "no-such-branch"},
])
def test_bad_dispatch_bodies_are_422(installed, body):
    response = installed.client.post(DISPATCH.format(installed.full_name, "readiness-runner.yml"), json=body)
    assert response.status_code == 422, response.text
    assert installed.emu.runs() == []


def test_undeclared_inputs_are_refused_when_the_workflow_declares_inputs(installed):
    installed.emu.set_workflows(installed.full_name, {"readiness-runner.yml": ["releaseRunId"]})
    assert dispatch(installed, inputs={"other": "x"}).status_code == 422
    assert dispatch(installed, inputs={"releaseRunId": "x"}).status_code == 204


def test_broken_json_is_400(installed):
    response = installed.client.post(DISPATCH.format(installed.full_name, "readiness-runner.yml"),
                                     content=b"{", headers={"Content-Type": "application/json"}, validate=False)
    assert response.status_code == 400


def test_manual_run_moves_through_its_states(installed):
    run_id = dispatch(installed, return_run_details=True).json()["workflow_run_id"]
    path = f"/repos/{installed.full_name}/actions/runs/{run_id}"
    got = installed.client.get(path).json()
    assert (got["status"], got["conclusion"], got["run_attempt"]) == ("queued", None, 1)
    assert got["path"] == ".github/workflows/readiness-runner.yml"
    assert got["event"] == "workflow_dispatch"
    assert got["head_branch"] == "main"
    installed.emu.start_run(run_id)
    assert installed.client.get(path).json()["status"] == "in_progress"
    installed.emu.complete_run(run_id, "failure")
    got = installed.client.get(path).json()
    assert (got["status"], got["conclusion"]) == ("completed", "failure")


def test_rerun_adds_an_attempt(installed):
    run_id = dispatch(installed, return_run_details=True).json()["workflow_run_id"]
    installed.emu.complete_run(run_id, "failure")
    installed.emu.rerun(run_id)
    installed.emu.complete_run(run_id, "success")
    base = f"/repos/{installed.full_name}/actions/runs/{run_id}"
    latest = installed.client.get(base).json()
    assert (latest["run_attempt"], latest["conclusion"]) == (2, "success")
    assert latest["previous_attempt_url"].endswith(f"{base}/attempts/1")
    first = installed.client.get(f"{base}/attempts/1").json()
    assert (first["run_attempt"], first["conclusion"]) == (1, "failure")
    assert installed.client.get(f"{base}/attempts/3").status_code == 404


def test_auto_mode_completes_with_the_configured_conclusion(installed):
    installed.emu.set_run_mode(installed.full_name, "auto", conclusion="neutral", delay_seconds=0.05)
    run_id = dispatch(installed, return_run_details=True).json()["workflow_run_id"]
    run = installed.emu.wait_for_run(run_id, timeout=10)
    assert run["conclusion"] == "neutral"


def test_list_workflow_runs_filters(installed):
    emu = installed.emu
    pr = emu.open_pull_request(installed.full_name, head_ref="feature-x")
    dispatch(installed)
    dispatch(installed, ref="feature-x")
    path = f"/repos/{installed.full_name}/actions/workflows/readiness-runner.yml/runs"
    everything = installed.client.get(path).json()
    assert everything["total_count"] == 2
    on_branch = installed.client.get(path, params={"branch": "feature-x"}).json()
    assert [r["head_sha"] for r in on_branch["workflow_runs"]] == [pr["head"]["sha"]]
    assert on_branch["workflow_runs"][0]["pull_requests"][0]["number"] == pr["number"]
    by_sha = installed.client.get(path, params={"head_sha": installed.repo["head_sha"]}).json()
    assert by_sha["total_count"] == 1
    paged = installed.client.get(path, params={"per_page": 1})
    assert 'rel="next"' in paged.headers["Link"]
    assert len(paged.json()["workflow_runs"]) == 1


def test_runs_of_another_repository_are_404(installed):
    run_id = dispatch(installed, return_run_details=True).json()["workflow_run_id"]
    installed.emu.create_repository("acme-boards/other", installation_id=installed.installation["id"])
    assert installed.client.get(f"/repos/acme-boards/other/actions/runs/{run_id}", validate=False).status_code == 404

"""A dispatched run's display_title comes from the workflow's run-name (set
through the control API, or read from the content folder's workflow file),
and `after` faults let the host act and then lose or replace its answer."""
from __future__ import annotations

import httpx
import pytest

DISPATCH = "/repos/acme-boards/widget/actions/workflows/readiness-runner.yml/dispatches"
TEMPLATE = "boardready readiness ${{ inputs.attempt_id }}"


def dispatch(installed, **extra):
    body = {"ref": "main", "inputs": {"attempt_id": "7-abc", "head_sha": "f" * 40}, **extra}
    return installed.client.request("POST", DISPATCH, json=body, validate=False)


def test_display_title_renders_the_run_name(installed):
    installed.emu.set_run_name("acme-boards/widget", TEMPLATE)
    assert dispatch(installed).status_code == 204
    [run] = installed.emu.runs("acme-boards/widget")
    assert run["display_title"] == "boardready readiness 7-abc"
    listed = installed.client.request("GET", "/repos/acme-boards/widget/actions/workflows/readiness-runner.yml/runs")
    assert listed.json()["workflow_runs"][0]["display_title"] == "boardready readiness 7-abc"


def test_run_name_from_the_workflow_file_in_the_content_folder(emu, tmp_path):
    folder = tmp_path / "content" / ".github" / "workflows"
    folder.mkdir(parents=True)
    (folder / "readiness-runner.yml").write_text(
        f'name: x\nrun-name: "{TEMPLATE.replace("inputs.", "github.event.inputs.")}"\non: workflow_dispatch\n')
    emu.register_app()
    installation = emu.create_installation("acme-files")
    emu.create_repository("acme-files/board", installation_id=installation["id"], content_dir=str(tmp_path / "content"))
    token = emu.installation_token(installation["id"])
    response = httpx.post(f"{emu.url}/repos/acme-files/board/actions/workflows/readiness-runner.yml/dispatches",
                          json={"ref": "main", "inputs": {"attempt_id": "9-def"}},
                          headers={"Authorization": f"token {token}"})
    assert response.status_code == 204
    assert emu.runs("acme-files/board")[0]["display_title"] == "boardready readiness 9-def"


def test_without_a_run_name_the_title_is_the_workflow(installed):
    dispatch(installed)
    assert installed.emu.runs("acme-boards/widget")[0]["display_title"] is None
    run_id = installed.emu.runs("acme-boards/widget")[0]["id"]
    shown = installed.client.request("GET", f"/repos/acme-boards/widget/actions/runs/{run_id}").json()
    assert shown["display_title"] == "readiness-runner"


def test_an_after_fault_replaces_the_answer_once_the_host_acted(installed):
    installed.emu.add_fault(operation_id="actions/create-workflow-dispatch", status=204, after=True, count=1)
    response = dispatch(installed, return_run_details=True)
    assert response.status_code == 204 and response.content == b""
    assert len(installed.emu.runs("acme-boards/widget")) == 1  # the run exists all the same


def test_an_after_drop_loses_the_answer_once_the_host_acted(installed):
    installed.emu.add_fault(operation_id="actions/create-workflow-dispatch", drop=True, after=True, count=1)
    with pytest.raises(httpx.HTTPError):
        dispatch(installed, return_run_details=True)
    assert len(installed.emu.runs("acme-boards/widget")) == 1


def test_an_execute_run_waits_queue_seconds_for_a_runner(installed):
    installed.emu.set_run_mode("acme-boards/widget", mode="execute", runner_command=["true"], queue_seconds=1.5)
    dispatch(installed)
    [run] = installed.emu.runs("acme-boards/widget")
    assert run["status"] == "queued"          # no runner yet
    done = installed.emu.wait_for_run(run["id"], timeout=20)
    assert (done["status"], done["conclusion"]) == ("completed", "success")

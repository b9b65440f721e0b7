"""Check runs: creation, updates, annotations and the real API's validation rules."""
import pytest


def annotation(**extra):
    item = {"path": "board.kicad_pcb", "start_line": 3, "end_line": 3, "annotation_level": "warning", "message": "m"}
    item.update(extra)
    return item


@pytest.fixture
def base(installed):
    return f"/repos/{installed.full_name}/check-runs"


def create(installed, base, **body):
    body.setdefault("name", "boardready/readiness")
    body.setdefault("head_sha", installed.repo["head_sha"])
    return installed.client.post(base, json=body)


def test_create_get_update_complete(installed, base):
    created = create(installed, base, external_id="release-run-1", status="in_progress",
                     output={"title": "Checking", "summary": "started", "annotations": [annotation()]})
    assert created.status_code == 201
    check = created.json()
    assert check["id"] > 2**32
    assert (check["status"], check["conclusion"], check["external_id"]) == ("in_progress", None, "release-run-1")
    assert check["output"]["annotations_count"] == 1
    assert check["app"]["id"] == installed.app["id"]
    updated = installed.client.patch(f"{base}/{check['id']}", json={
        "conclusion": "failure", "output": {"title": "Blocked", "summary": "2 problems",
                                            "annotations": [annotation(annotation_level="failure", start_line=1, end_line=4)]}})
    assert updated.status_code == 200
    got = installed.client.get(f"{base}/{check['id']}").json()
    assert (got["status"], got["conclusion"]) == ("completed", "failure")
    assert got["completed_at"] is not None
    assert got["output"]["annotations_count"] == 2
    assert [a["start_line"] for a in installed.emu.annotations(check["id"])] == [3, 1]
    listed = installed.client.get(f"{base}/{check['id']}/annotations", validate=False)
    assert [a["annotation_level"] for a in listed.json()] == ["warning", "failure"]


def test_status_completed_needs_a_conclusion(installed, base):
    assert create(installed, base, status="completed").status_code == 422
    check = create(installed, base).json()
    assert check["status"] == "queued"
    assert installed.client.patch(f"{base}/{check['id']}", json={"status": "completed"}).status_code == 422
    done = create(installed, base, status="completed", conclusion="success").json()
    assert done["completed_at"] is not None


@pytest.mark.parametrize("output,status", [
    ({"summary": "no title"}, 422),
    ({"title": "t", "summary": "x" * 65536}, 422),
    ({"title": "t", "summary": "s", "text": "x" * 65536}, 422),
    ({"title": "t", "summary": "x" * 65535, "text": "y" * 65535}, 201),
    ({"title": "t", "summary": "s", "annotations": [annotation()] * 51}, 422),
    ({"title": "t", "summary": "s", "annotations": [annotation()] * 50}, 201),
    ({"title": "t", "summary": "s", "annotations": [annotation(start_line=1, end_line=2, start_column=1)]}, 422),
    ({"title": "t", "summary": "s", "annotations": [annotation(start_column=1, end_column=9)]}, 201),
    ({"title": "t", "summary": "s", "annotations": [annotation(annotation_level="error")]}, 422),
    ({"title": "t", "summary": "s", "annotations": [{"path": "a", "start_line": 1, "annotation_level": "notice", "message": "m"}]}, 422),
    ({"title": "t", "summary": "s", "annotations": [annotation(start_line="3")]}, 422),
])
def test_output_validation(installed, base, output, status):
    response = create(installed, base, output=output)
    assert response.status_code == status, response.text
    if status == 422:
        assert installed.emu.check_runs() == []


def test_annotations_accumulate_across_updates_past_fifty(installed, base):
    check = create(installed, base, output={"title": "t", "summary": "s", "annotations": [annotation()] * 50}).json()
    for _ in range(2):
        response = installed.client.patch(f"{base}/{check['id']}",
                                          json={"output": {"summary": "s", "annotations": [annotation()] * 50}})
        assert response.status_code == 200
    assert response.json()["output"]["annotations_count"] == 150
    assert len(installed.emu.annotations(check["id"])) == 150


def test_unknown_head_sha_is_422(installed, base):
    assert create(installed, base, head_sha="f" * 40).status_code == 422


def test_list_for_ref_keeps_the_latest_per_name(installed):
    sha = installed.repo["head_sha"]
    base = f"/repos/{installed.full_name}/check-runs"
    first = create(installed, base).json()
    second = create(installed, base).json()
    create(installed, base, name="other")
    path = f"/repos/{installed.full_name}/commits/{sha}/check-runs"
    latest = installed.client.get(path).json()
    assert {c["id"] for c in latest["check_runs"]} >= {second["id"]}
    assert first["id"] not in {c["id"] for c in latest["check_runs"]}
    assert installed.client.get(path, params={"filter": "all"}).json()["total_count"] == 3
    named = installed.client.get(path, params={"check_name": "other"}).json()
    assert [c["name"] for c in named["check_runs"]] == ["other"]
    by_branch = installed.client.get(f"/repos/{installed.full_name}/commits/heads/main/check-runs").json()
    assert by_branch["total_count"] == 2


def test_check_run_of_another_repository_is_404(installed, base):
    check = create(installed, base).json()
    installed.emu.create_repository("acme-boards/other", installation_id=installed.installation["id"])
    assert installed.client.get(f"/repos/acme-boards/other/check-runs/{check['id']}", validate=False).status_code == 404


def test_check_runs_list_open_pull_requests_of_their_commit(installed, base):
    pr = installed.emu.open_pull_request(installed.full_name)
    check = create(installed, base, head_sha=pr["head"]["sha"]).json()
    assert [p["number"] for p in check["pull_requests"]] == [pr["number"]]

"""Fault switches and the request log."""
import httpx
import pytest


def runs_path(installed):
    return f"/repos/{installed.full_name}/actions/workflows/readiness-runner.yml/runs"


def test_status_fault_with_body_and_headers_then_clears_after_count(installed):
    installed.emu.add_fault(operation_id="actions/list-workflow-runs", status=502, count=2)
    client = installed.client
    assert client.get(runs_path(installed), validate=False).status_code == 502
    assert client.get(runs_path(installed), validate=False).status_code == 502
    assert client.get(runs_path(installed)).status_code == 200
    assert installed.emu.faults() == []


def test_rate_limit_presets(installed):
    installed.emu.add_fault(path="/repos/{owner}/{repo}/check-runs", method="POST", preset="rate_limit", count=1)
    installed.emu.add_fault(operation_id="actions/create-workflow-dispatch", preset="secondary_rate_limit", count=1)
    limited = installed.client.post(f"/repos/{installed.full_name}/check-runs", json={}, validate=False)
    assert limited.status_code == 403
    assert limited.headers["X-RateLimit-Remaining"] == "0"
    assert int(limited.headers["X-RateLimit-Reset"]) > 0
    secondary = installed.client.post(
        f"/repos/{installed.full_name}/actions/workflows/readiness-runner.yml/dispatches", json={"ref": "main"}, validate=False)
    assert secondary.status_code == 403 and "Retry-After" in secondary.headers
    assert "secondary rate limit" in secondary.json()["message"]


def test_429_with_retry_after(installed):
    installed.emu.add_fault(path="/installation/*", status=429, headers={"Retry-After": "7"}, count=1)
    response = installed.client.get("/installation/repositories", validate=False)
    assert (response.status_code, response.headers["Retry-After"]) == (429, "7")


def test_persistent_fault_until_removed(installed):
    fault = installed.emu.add_fault(path="/installation/repositories", status=500)
    for _ in range(3):
        assert installed.client.get("/installation/repositories", validate=False).status_code == 500
    installed.emu.remove_fault(fault["id"])
    assert installed.client.get("/installation/repositories").status_code == 200


def test_drop_closes_the_connection_without_an_answer(installed):
    installed.emu.add_fault(operation_id="apps/list-repos-accessible-to-installation", drop=True, count=1)
    with pytest.raises(httpx.RemoteProtocolError):
        installed.client.get("/installation/repositories", validate=False)
    entry = installed.emu.requests(path_prefix="/installation/")[-1]
    assert entry["dropped"] is True and entry["status"] is None
    assert installed.client.get("/installation/repositories").status_code == 200


def test_delay_past_the_client_timeout(installed):
    installed.emu.add_fault(path="/installation/repositories", delay_ms=3000, count=1)
    with pytest.raises(httpx.ReadTimeout):
        httpx.get(installed.emu.url + "/installation/repositories",
                  headers={"Authorization": f"token {installed.token}"}, timeout=0.3)
    # A delay-only fault lets the request through once the delay is over.
    installed.emu.add_fault(path="/installation/repositories", delay_ms=50, count=1)
    assert installed.client.get("/installation/repositories").status_code == 200


def test_faults_do_not_touch_other_routes(installed):
    installed.emu.add_fault(operation_id="checks/create", status=500)
    assert installed.client.get("/installation/repositories").status_code == 200


def test_request_log_records_and_redacts(installed):
    emu = installed.emu
    emu.clear_requests()
    installed.client.post(f"/repos/{installed.full_name}/check-runs",
                          json={"name": "n", "head_sha": installed.repo["head_sha"]})
    [entry] = emu.requests()
    assert entry["method"] == "POST"
    assert entry["path"] == f"/repos/{installed.full_name}/check-runs"
    assert entry["operation_id"] == "checks/create"
    assert entry["status"] == 201
    assert entry["body"] == {"name": "n", "head_sha": installed.repo["head_sha"]}
    assert entry["headers"]["authorization"] == "token [redacted]"
    assert installed.token not in repr(emu.requests())
    # Control routes are not logged; the log clears.
    emu.clear_requests()
    assert emu.requests() == []


def test_request_log_over_http_with_filters(installed):
    installed.client.get("/installation/repositories", params={"per_page": 5})
    installed.client.get(f"/repos/{installed.full_name}/actions/runs/1", validate=False)
    found = httpx.get(installed.emu.url + "/_emulator/requests", params={"operation_id": "actions/get-workflow-run"}).json()
    assert [e["status"] for e in found["items"]] == [404]
    listing = installed.emu.requests(path_prefix="/installation/")
    assert listing[-1]["query"] == "per_page=5"
    assert httpx.delete(installed.emu.url + "/_emulator/requests").status_code == 200
    assert installed.emu.requests() == []


def test_fault_control_over_http(emu):
    base = emu.url + "/_emulator/faults"
    created = httpx.post(base, json={"path": "/user", "status": 503, "count": 1})
    assert created.status_code == 201
    assert httpx.get(emu.url + "/user").status_code == 503
    assert httpx.get(base).json()["items"] == []
    assert httpx.post(base, json={"path": "/user"}).status_code == 400
    assert httpx.post(base, json={"path": "/user", "status": 500, "colour": "red"}).status_code == 400
    httpx.post(base, json={"path": "/user", "status": 500})
    assert httpx.delete(base).status_code == 200
    assert httpx.get(base).json()["items"] == []

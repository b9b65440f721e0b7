"""The board diff on the run page, in Debian's Chromium, against the code host emulator.

A pull request's run whose readiness workflow checked tests/fixtures/kicad-diff
(a board whose pull request moves footprint P5, deletes a track and adds a via)
against its base: the checker's real result and its real HTML report go through
the signed-result callback and the artifact upload, a reviewer signs in through
the emulator, and the run page draws the board from the report's data with
exactly those three changes; selecting the new finding zooms to its pin; a
layer toggle and the keyboard zoom work; axe finds nothing serious or critical.
The screenshots go to docs/img/ with BOARDREADY_UPDATE_SCREENSHOTS=1 (docs/board-diff.md
shows them), else to .data/screenshots/."""
from __future__ import annotations

from pathlib import Path

import pytest
from falcon import testing

from app.web.pages.artifacts import UPLOAD_PATH
from app.web.pages.board_view import board_document
from app.web.wsgi import create_app
from checker.publish import report_reference
from checker.report_html import render_html
from checker.runner import RunOptions, check
from tests.helpers.browser import headless_chromium, screenshot_folder
from tests.helpers.service import free_port
from tests.helpers.host import REPOSITORY, make_hostkit
from tests.helpers.results import DispatchedRun, envelope
from tests.helpers.sessions import Session, served
from tests.api.test_pages_browser import ORG, signed_in_through_the_code_host

ROOT = Path(__file__).resolve().parents[2]
PAIR = ROOT / "tests" / "fixtures" / "kicad-diff"
SHOTS = screenshot_folder()
SIGNING_KEY = "board-diff-test-signing-key-0123456789abcdef"


@pytest.fixture(scope="module")
def browser():
    yield from headless_chromium()


def _checked_pull_request(head_sha: str):
    """What the readiness workflow sends: the checker's result and report, with the base checked too."""
    outcome = check(RunOptions(path=PAIR / "head", base=PAIR / "base", run_kicad_cli=False,
                               trigger_kind="pull_request", repository=REPOSITORY, head_sha=head_sha))
    report = render_html(outcome).encode("utf-8")
    result = dict(outcome.result, reportArtifact=report_reference(report))
    return outcome, result, report


def _view_box(page) -> list[float]:
    return [float(v) for v in page.locator("svg.bv-svg").get_attribute("viewBox").split()]


def _serious(page) -> list[str]:
    from axe_playwright_python.sync_playwright import Axe

    results = Axe().run(page)
    return [v["id"] for v in results.response["violations"] if v["impact"] in ("serious", "critical")]


def test_board_document_is_read_out_of_the_report_and_nothing_else():
    outcome, _, report = _checked_pull_request("a" * 40)
    document = board_document(report)
    assert document["diff"]["vias"]["added"] and len(document["findings"]) == len(outcome.findings)
    assert board_document(b"<html><script>alert(1)</script></html>") is None
    assert board_document(b'<script type="application/json" id="board-data">{"version": 99}</script>') is None
    assert board_document(b'<script type="application/json" id="board-data">not json</script>') is None


@pytest.mark.browser
def test_the_run_page_draws_the_change_and_pins_the_new_finding(browser, host, owner, pool, db_url):
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    kit = make_hostkit(host, public_url=base, SERVICE_OIDC_ISSUER=host.oidc_issuer,
                       SERVICE_ARTIFACT_SIGNING_KEY=SIGNING_KEY)
    client = testing.TestClient(create_app(kit.config, pool))
    run = DispatchedRun(kit, client, pool, db_url, owner)
    outcome, result, report = _checked_pull_request(run.head_sha)
    assert run.post(client, envelope(run.attempt_ref, result)).status_code == 200
    uploaded = client.simulate_post(UPLOAD_PATH, params={"attemptId": run.attempt_ref}, body=report,
                                    headers={"Authorization": f"Bearer {run.token()}", "Content-Type": "text/html"})
    assert uploaded.status_code == 201, uploaded.json
    host.create_user("mara", name="Mara Reviewer", organizations=[ORG])
    link = f"{base}/release-runs/{run.release_run_id}"
    short = next(f for f in outcome.findings if f.rule_id == "board.short")

    with served(create_app(kit.config, pool), port):
        # Not signed in: the drawing's data is not there for the asking.
        anonymous = browser.new_context()
        answer = anonymous.request.get(link + "/board.json", max_redirects=0)
        assert answer.status in (302, 303) and b"board-data" not in answer.body()
        anonymous.close()

        context, page = signed_in_through_the_code_host(browser, base, link)
        problems: list[str] = []
        page.on("console", lambda message: message.type == "error" and problems.append(message.text))
        page.on("pageerror", lambda error: problems.append(str(error)))
        page.set_viewport_size({"width": 1400, "height": 1000})
        page.goto(link + "#board")
        page.wait_for_selector("[data-board-view][data-ready=true]")
        # For the record (not asserted: timing): navigation start to the drawing taking input.
        print(f"run page interactive after {page.evaluate('performance.now()'):.0f} ms")
        # Exactly the three changes of the pull request, drawn and listed.
        marked = page.locator("svg .bv-change").evaluate_all("els => els.map(e => e.dataset.change)")
        assert sorted(marked) == ["footprint-moved", "track-removed", "via-added"]
        assert page.locator(".bv-changes li").all_inner_texts() == [
            "P5 moved 1.7961 mm", "Track removed on B.Cu (Net-(C2-Pad2))", "Via added (Net-(R1-Pad1))"]
        assert "1 footprint moved: P5 (1.7961 mm)" in page.locator(".bv-summary").inner_text()
        page.locator("[data-action=fit-change]").click()
        page.locator("#board").screenshot(path=str(SHOTS / "board-diff-run-page.png"))
        assert _serious(page) == []

        # Selecting the new finding zooms to its pin, which turns active.
        whole = _view_box(page)
        item = page.locator(f'.bv-findings li[data-fingerprint="{short.fingerprint}"]')
        assert "new" in item.inner_text()
        item.locator("button").click()
        x, y, w, h = _view_box(page)
        assert x < short.extra["x"] < x + w and y < short.extra["y"] < y + h and w < whole[2]
        assert "active" in page.locator(f"#marker-{short.fingerprint}").get_attribute("class")
        # ... and outlines the items it names: the via and the pad it touches.
        assert page.locator(".bv-named").count() >= 2
        page.locator("#board").screenshot(path=str(SHOTS / "board-diff-finding.png"))
        # Selecting a pin selects its finding.
        other = next(f for f in outcome.findings if f.rule_id == "board.unconnected")
        page.keyboard.press("Escape")
        page.locator("[data-action=fit-change]").click()
        page.locator(".bv-svg").focus()
        page.keyboard.press("0")
        page.locator(f"#marker-{other.fingerprint}").dispatch_event("click")
        assert "active" in page.locator(f'.bv-findings li[data-fingerprint="{other.fingerprint}"]').get_attribute("class")

        # The keyboard zooms; a layer toggle hides that layer's copper.
        page.locator(".bv-svg").focus()
        before = _view_box(page)[2]
        page.keyboard.press("+")
        assert abs(_view_box(page)[2] - before / 1.5) < 1e-6
        page.keyboard.press("0")
        drawn = ("e => { for (let n = e; n && n.tagName !== 'svg'; n = n.parentNode) {"
                 " if (getComputedStyle(n).display === 'none') return false; } return true; }")
        track = page.locator('g[data-layer="B.Cu"] polyline').first
        assert track.evaluate(drawn)
        page.locator('input[data-layer-toggle="B.Cu"]').uncheck()
        assert not track.evaluate(drawn)
        page.locator('input[data-layer-toggle="B.Cu"]').check()
        # New findings only: all but the base's own (P4's silkscreen across the board edge).
        page.locator("input[data-action=new-only]").check()
        assert page.locator(".bv-findings li:not([hidden])").count() == len(
            [f for f in outcome.findings if f.baseline != "existing"]) < len(outcome.findings)
        page.locator("input[data-action=changes-only]").check()
        page.locator("[data-action=fit-change]").click()
        page.locator("#board").screenshot(path=str(SHOTS / "board-diff-changes-only.png"))
        assert problems == []
        context.close()


def _uploaded_run(host, owner, pool, db_url, report_for):
    kit = make_hostkit(host, SERVICE_OIDC_ISSUER=host.oidc_issuer, SERVICE_ARTIFACT_SIGNING_KEY=SIGNING_KEY)
    client = testing.TestClient(create_app(kit.config, pool))
    run = DispatchedRun(kit, client, pool, db_url, owner)
    outcome, result, report = _checked_pull_request(run.head_sha)
    report = report_for(report)
    result["reportArtifact"] = report_reference(report)
    assert run.post(client, envelope(run.attempt_ref, result)).status_code == 200
    assert client.simulate_post(UPLOAD_PATH, params={"attemptId": run.attempt_ref}, body=report,
                                headers={"Authorization": f"Bearer {run.token()}",
                                         "Content-Type": "text/html"}).status_code == 201
    return kit, client, run, outcome


def test_board_json_is_the_reports_drawing_for_a_viewer_of_the_repository(host, owner, pool, db_url):
    kit, client, run, outcome = _uploaded_run(host, owner, pool, db_url, lambda report: report)
    path = f"/release-runs/{run.release_run_id}/board.json"
    viewer = Session(pool, [kit.repository["id"]])
    answer = client.simulate_get(path, headers=viewer.headers(csrf=False))
    assert answer.status_code == 200 and answer.headers["content-type"].startswith("application/json")
    assert answer.headers["x-content-type-options"] == "nosniff"
    # Not kept by the browser: after sign-out it is not served from the cache (issue 36).
    assert answer.headers["cache-control"] == "private, no-store"
    document = answer.json
    assert [p["fingerprint"] for p in document["findings"]] == [f.fingerprint for f in outcome.findings]
    assert document["diff"]["footprints"]["moved"][0]["ref"] == "P5"
    # Someone who cannot see the repository gets the 404 that names nothing; nobody signed in, sign-in.
    stranger = Session(pool, [kit.repository["id"] + 1], viewer_id=4242)
    assert client.simulate_get(path, headers=stranger.headers(csrf=False)).status_code == 404
    assert client.simulate_get(path).status_code == 303
    # The script and its styles come from this origin.
    script = client.simulate_get("/static/board-view.js")
    assert script.status_code == 200 and script.headers["content-type"].startswith("text/javascript")
    assert b"BoardView" in script.content
    assert client.simulate_get("/static/board-view.css").status_code == 200
    # The run page includes the drawing (its script from this origin, no inline script).
    page = client.simulate_get(f"/release-runs/{run.release_run_id}", headers=viewer.headers(csrf=False))
    assert f'data-board-src="{path}"' in page.text and '<script src="/static/board-view.js"' in page.text
    assert "script-src" not in page.headers["content-security-policy"] or "unsafe-inline" not in \
        page.headers["content-security-policy"]


def test_a_report_without_a_drawing_is_a_404_and_the_page_still_lists_findings(host, owner, pool, db_url):
    kit, client, run, outcome = _uploaded_run(host, owner, pool, db_url,
                                              lambda _: b"<!doctype html><title>an older checker's report</title>")
    viewer = Session(pool, [kit.repository["id"]])
    answer = client.simulate_get(f"/release-runs/{run.release_run_id}/board.json", headers=viewer.headers(csrf=False))
    assert answer.status_code == 404
    page = client.simulate_get(f"/release-runs/{run.release_run_id}", headers=viewer.headers(csrf=False))
    assert page.status_code == 200 and outcome.findings[0].message.split(";")[0][:40] in page.text

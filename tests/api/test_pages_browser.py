"""The review pages in Debian's Chromium, as a person uses them, against the
code host emulator: the check run's link opened before sign-in, sign-in through
the emulator's authorize page and /auth/callback back to that run page, the run
listing paged through 60 runs, a finding waived from the keyboard, the run
approved by a second reviewer signed in the same way, the decision badge
turning PASS and the emulator's check run turning from failure to success, the
uploaded report opened (its script gets no cookie and no API), sign-out.
The listing's columns (title from the code host, score, blocking/total
findings, review state, newest or superseded), the waiver's scope, last day
and reason, both pages at a phone's 390 px without sideways scrolling, and a request for
changes whose comment lands on the pull request.
axe-core runs on every page (no serious or critical violations) and each
page's screenshot is written to .data/screenshots/pages/ for a person to look at
(07-run-published.png and 10-check-run.png are docs/img/run-page.png and
docs/img/check-run.png)."""
from __future__ import annotations

import datetime as dt
import hashlib
import re
from pathlib import Path

import pytest

from falcon import testing

from app.web.pages.artifacts import UPLOAD_PATH
from app.web.wsgi import create_app
from tests.helpers.browser import headless_chromium
from tests.helpers.access import seed_repository
from tests.helpers.service import free_port
from tests.helpers.host import REPOSITORY, make_hostkit, run_outbox
from tests.helpers.results import DispatchedRun, envelope, finding, make_result
from tests.helpers.sessions import decided_run, served
from tests.helpers.sessions import finding as sessionkit_finding

ORG = "acme-hw"
SHOTS = Path(__file__).resolve().parents[2] / ".data" / "screenshots" / "pages"
HOSTILE_REPORT = (b"<!doctype html><title>report</title><p id=cookie>unset</p><p id=api>unset</p><script>"
                  b"try{document.getElementById('cookie').textContent='cookie:'+document.cookie}"
                  b"catch(e){document.getElementById('cookie').textContent='cookie blocked'}"
                  b"fetch('/api/v1/session',{credentials:'include'}).then(r=>r.text())"
                  b".then(t=>{document.getElementById('api').textContent='api:'+t})"
                  b".catch(()=>{document.getElementById('api').textContent='api blocked'})</script>")


@pytest.fixture(scope="module")
def browser():
    yield from headless_chromium()


def check_page(page, name: str) -> None:
    from axe_playwright_python.sync_playwright import Axe

    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)
    results = Axe().run(page)
    serious = [v["id"] for v in results.response["violations"] if v["impact"] in ("serious", "critical")]
    assert serious == [], f"{name}: {serious}"


def signed_in_through_the_code_host(browser, base: str, link: str):
    """A fresh browser opens `link`, is sent to /sign-in, presses the button and goes
    through the emulator's authorize page and /auth/callback back to `link`."""
    context = browser.new_context(viewport={"width": 1200, "height": 900})
    page = context.new_page()
    page.goto(link)
    assert page.url.startswith(base + "/sign-in?returnTo=")   # the page remembers where the viewer was going
    page.click("text=Sign in with the code host")
    page.wait_for_url(link)
    return context, page


# The elements that reach past the viewport's right edge (the message when a page scrolls sideways).
WIDER = ("[...document.querySelectorAll('body *')].filter(e => e.getBoundingClientRect().right > window.innerWidth)"
         ".slice(0, 8).map(e => e.tagName + '.' + e.className + ' ' + Math.round(e.getBoundingClientRect().right))")


def show_check_run(page, check_run: dict, annotations: list[dict]) -> None:
    """The check run as the emulator holds it, laid out as the code host shows one
    (the emulator serves no HTML): the picture docs/img/check-run.png is made from."""
    import html

    rows = "".join(f"<li><b>{html.escape(a['annotation_level'])}</b> <code>{html.escape(a['path'])}:"
                   f"{a['start_line']}</code> {html.escape(a['message'])}</li>" for a in annotations)
    shot = page.context.new_page()
    shot.set_viewport_size({"width": 1000, "height": 400})
    shot.set_content(
        "<!doctype html><html lang=en><title>check run</title><body style='font:15px system-ui;margin:24px'>"
        f"<main><h1 style='font-size:20px'>{html.escape(check_run['name'])}</h1>"
        f"<p>{html.escape(check_run['status'])} · <b>{html.escape(check_run['conclusion'] or '')}</b></p>"
        f"<h2 style='font-size:17px'>{html.escape(check_run['title'])}</h2>"
        f"<pre style='white-space:pre-wrap;background:#f6f8fa;padding:12px'>{html.escape(check_run['summary'])}</pre>"
        f"<h2 style='font-size:17px'>Annotations</h2><ul>{rows}</ul></main></body></html>")
    check_page(shot, "10-check-run")
    shot.close()


def check_run(host, check_run_id: int) -> dict:
    """The check run as the code host shows it."""
    return next(c for c in host.check_runs(REPOSITORY) if c["id"] == check_run_id)


@pytest.mark.browser
def test_a_reviewer_walks_the_pages(browser, host, owner, pool, db_url):
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    kit = make_hostkit(host, public_url=base, SERVICE_OIDC_ISSUER=host.oidc_issuer,
                       SERVICE_ARTIFACT_SIGNING_KEY="browser-test-signing-key-0123456789abcdef")
    client = testing.TestClient(create_app(kit.config, pool))
    # The run under review, as it happens: the pull request's webhook, the dispatch, the signed
    # result (blocked: one error, one medium, one low), the report uploaded, the check run completed.
    run = DispatchedRun(kit, client, pool, db_url, owner,
                        pr=host.open_pull_request(REPOSITORY, title="Rev B: move the LED, add the connector"))
    result = make_result(run.head_sha, "blocked",
                         [finding(0, "error", line=3), finding(1, "medium", line=8), finding(2, "low", line=13)],
                         reportArtifact={"mediaType": "text/html", "sha256": hashlib.sha256(HOSTILE_REPORT).hexdigest(),
                                         "bytes": len(HOSTILE_REPORT)})
    assert run.post(client, envelope(run.attempt_ref, result)).status_code == 200
    uploaded = client.simulate_post(UPLOAD_PATH, params={"attemptId": run.attempt_ref}, body=HOSTILE_REPORT,
                                    headers={"Authorization": f"Bearer {run.token()}", "Content-Type": "text/html"})
    assert uploaded.status_code == 201, uploaded.json
    run_outbox(kit, pool, db_url)
    published = check_run(host, run.check_run_id)
    assert published["conclusion"] == "failure"
    [link] = set(re.findall(re.escape(base) + r"/release-runs/\d+", published["summary"]))
    assert link == f"{base}/release-runs/{run.release_run_id}"

    # 59 older runs on the installation's three repositories, for the listing to page through.
    account_id = kit.installation["account"]["id"]
    repos = [kit.repository["id"]]
    for name in ("board-1", "board-2"):
        made = host.create_repository(f"{ORG}/{name}", installation_id=kit.installation["id"])
        repos.append(seed_repository(owner, account_id=account_id, installation_id=kit.installation["id"],
                                     repository_id=made["id"], full_name=made["full_name"], login=ORG))
    start = dt.datetime(2025, 3, 1, tzinfo=dt.timezone.utc)
    for i in range(59):
        decided_run(owner, pool, repos[i % 3], pr_number=100 + i, started_at=start + dt.timedelta(minutes=i),
                    readiness=("ready", "at-risk", "blocked")[i % 3],
                    findings=[sessionkit_finding(i, "medium")] if i % 3 else [])
    host.create_user("mara", name="Mara Reviewer", organizations=[ORG])   # the one the authorize page signs in

    with served(create_app(kit.config, pool), port):
        anonymous = browser.new_page()
        anonymous.goto(base + "/")
        check_page(anonymous, "01-home")
        anonymous.goto(link)
        check_page(anonymous, "02-sign-in")
        anonymous.close()

        # The check run's link, opened by a person who is not signed in yet.
        context, page = signed_in_through_the_code_host(browser, base, link)
        page.goto(base + "/runs")
        check_page(page, "03-runs")
        # The newest run first: its title from the code host, score, findings, review wanted.
        first = page.locator("tbody tr").first
        row = first.inner_text()
        assert "Rev B: move the LED, add the connector" in row and REPOSITORY in row and run.head_sha[:7] in row
        assert "newest" in row and "1 blocking / 3" in row and "wanted" in row   # error, medium, low
        assert first.locator(".badge").inner_text() == "FAIL"
        assert page.locator("th").all_inner_texts() == ["Pull request", "Head", "Decision", "Score", "Findings",
                                                        "Review", "Updated"]
        seen = page.locator("tbody tr").count()
        while page.locator("a[rel=next]").count():
            page.click("a[rel=next]")
            seen += page.locator("tbody tr").count()
        assert seen == 60
        page.click("a[rel=prev]")
        assert page.locator("tbody tr").count() == 25
        page.select_option("select[name=decision]", "FAIL")
        page.click("text=Filter")
        check_page(page, "04-runs-filtered")

        page.goto(link)
        assert page.locator("h2 .badge").inner_text() == "FAIL"
        check_page(page, "05-run")
        # Waive the error finding from the keyboard, until a last day; the form says what a waiver covers.
        error_finding = page.locator("li.finding").first   # error findings come first
        error_finding.locator("summary").focus()
        page.keyboard.press("Enter")
        scope = error_finding.locator(".scope")
        assert scope.is_visible()
        assert f"covers this finding in every pull request of {REPOSITORY}" in " ".join(scope.inner_text().split())
        last_day = (dt.datetime.now(dt.timezone.utc) + dt.timedelta(days=30)).date()
        error_finding.locator("input[name=expires_on]").fill(last_day.isoformat())
        error_finding.locator("input[name=reason]").focus()
        page.keyboard.type("Bench-tested: the net is a test point")
        page.keyboard.press("Enter")
        page.wait_for_url("**done=waived**")
        assert "The finding is waived." in page.content()
        waived = page.locator("li.finding.waived").first.inner_text()
        assert "Waived by mara: “Bench-tested: the net is a test point”" in waived
        assert f"until {last_day.isoformat()} 23:59 UTC" in waived and "Revoke waiver" in waived
        history = page.locator("table.history").inner_text()
        assert "mara" in history and "host-user:" not in history
        assert "waived drc.track-width (board/blinky.kicad_pcb:3)" in history

        # A second person signs in the same way and approves.
        host.create_user("jonas", name="Jonas Second", organizations=[ORG])
        second_context, second_page = signed_in_through_the_code_host(browser, base, link)
        second_page.click("button[value=approved]")
        second_page.wait_for_url("**done=approved**")
        assert second_page.locator("h2 .badge").inner_text() == "PASS"
        # Approve is no longer offered to the one who approved.
        assert "You approved this run." in second_page.content()
        assert second_page.locator("button[value=approved]").count() == 0
        check_page(second_page, "06-run-approved")
        second_context.close()
        # The decision reaches the code host: the check run turns from failure to success.
        run_outbox(kit, pool, db_url)
        updated = check_run(host, run.check_run_id)
        assert (updated["status"], updated["conclusion"]) == ("completed", "success")
        page.set_viewport_size({"width": 1000, "height": 900})   # the README's screenshot is this one
        page.goto(link)
        assert "now showing PASS" in page.locator("dl").first.inner_text()
        check_page(page, "07-run-published")

        # The check run and the pull request link to the code host.
        web = f"{host.url}/{REPOSITORY}"
        assert page.locator(f'a[href="{web}/runs/{run.check_run_id}"]').count() == 2
        assert page.locator(f'a[href="{web}/pull/{run.pr["number"]}"]').count() == 1
        # A phone: both pages fit 390 px, nothing scrolls sideways.
        page.set_viewport_size({"width": 390, "height": 844})
        for path, name in (("/runs", "08-runs-phone"), (link.removeprefix(base), "09-run-phone")):
            page.goto(base + path)
            assert page.evaluate("document.documentElement.scrollWidth") <= 390, (name, page.evaluate(WIDER))
            check_page(page, name)
        page.set_viewport_size({"width": 1000, "height": 900})
        page.goto(link)
        show_check_run(page, updated, host.annotations(run.check_run_id))

        with page.expect_popup() as popup:
            page.click("text=Open the checker's report")
        report = popup.value
        report.wait_for_function("document.getElementById('api').textContent !== 'unset'")
        assert report.locator("#cookie").inner_text() in ("cookie blocked", "cookie:")
        assert report.locator("#api").inner_text() == "api blocked"
        report.close()

        # Requesting changes with a comment: recorded, and the comment is on the pull request for its author.
        page.fill("textarea[name=comment]", "Please move C3 closer to U1\nand re-run the check.")
        page.click("button[value=changes_requested]")
        page.wait_for_url("**done=changes_requested_commented**")
        assert "your comment is on the pull request" in page.content()
        [posted] = [c["body"] for c in host.comments(REPOSITORY) if "Changes requested" in c["body"]]
        assert "by mara" in posted and "> Please move C3 closer to U1\n> and re-run the check." in posted
        assert link in posted

        page.click("text=Sign out")
        page.wait_for_url(base + "/")
        page.goto(base + "/runs")
        assert "/sign-in" in page.url
        context.close()

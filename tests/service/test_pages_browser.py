"""The review pages in Debian's Chromium, as a person uses them: the run
listing paged through 60 runs, a run opened, a finding waived from the
keyboard, the run approved by a second reviewer, the decision badge turning
PASS, the report opened (its script gets no cookie and no API), sign-out.
axe-core runs on every page (no serious or critical violations) and each
page's screenshot is written to .data/screenshots/pages/ for a person to look at."""
from __future__ import annotations

import datetime as dt
import hashlib
import os
from pathlib import Path

import pytest

from app.web.session_auth import SESSION_COOKIE
from app.web.wsgi import create_app
from tests.service.helpers import make_config
from tests.service.sessionkit import Session, decided_run, finding, seed_repositories, served

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]
SHOTS = Path(__file__).resolve().parents[2] / ".data" / "screenshots" / "pages"
HOSTILE_REPORT = (b"<!doctype html><title>report</title><p id=cookie>unset</p><p id=api>unset</p><script>"
                  b"try{document.getElementById('cookie').textContent='cookie:'+document.cookie}"
                  b"catch(e){document.getElementById('cookie').textContent='cookie blocked'}"
                  b"fetch('/api/v1/session',{credentials:'include'}).then(r=>r.text())"
                  b".then(t=>{document.getElementById('api').textContent='api:'+t})"
                  b".catch(()=>{document.getElementById('api').textContent='api blocked'})</script>")


@pytest.fixture(scope="module")
def browser():
    if not os.path.exists(CHROMIUM):
        pytest.fail("Debian chromium is missing at /usr/bin/chromium (bin/test installs it)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        instance = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        yield instance
        instance.close()


def check_page(page, name: str) -> None:
    from axe_playwright_python.sync_playwright import Axe

    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)
    results = Axe().run(page)
    serious = [v["id"] for v in results.response["violations"] if v["impact"] in ("serious", "critical")]
    assert serious == [], f"{name}: {serious}"


def signed_in(browser, base: str, session: Session):
    context = browser.new_context(viewport={"width": 1200, "height": 900})
    context.add_cookies([{"name": SESSION_COOKIE, "value": session.value, "url": base}])
    return context


@pytest.mark.browser
def test_a_reviewer_walks_the_pages(browser, owner, pool):
    config = make_config(HOST_OAUTH_CLIENT_ID="Iv1.pages", HOST_OAUTH_CLIENT_SECRET="pages-secret",
                         SERVICE_ARTIFACT_SIGNING_KEY="browser-test-signing-key-0123456789abcdef")
    repos = seed_repositories(owner, 3)
    start = dt.datetime(2025, 3, 1, tzinfo=dt.timezone.utc)
    for i in range(59):
        decided_run(owner, pool, repos[i % 3], pr_number=100 + i, started_at=start + dt.timedelta(minutes=i),
                    readiness=("ready", "at-risk", "blocked")[i % 3],
                    findings=[finding(i, "medium")] if i % 3 else [])
    run = decided_run(owner, pool, repos[0], pr_number=7, started_at=start + dt.timedelta(hours=5), readiness="blocked",
                      findings=[finding(0, "error", "e0" * 8), finding(1, "medium", "a1" * 8), finding(2, "low", "c3" * 8)])
    result_id = owner.execute("SELECT id FROM run_results WHERE release_run_id = %s", (run["id"],)).fetchone()["id"]
    owner.execute("INSERT INTO report_artifacts (run_result_id, release_run_id, repository_id, media_type, sha256, "
                  "size_bytes, content, created_at) VALUES (%s, %s, %s, 'text/html', %s, %s, %s, now())",
                  (result_id, run["id"], repos[0], hashlib.sha256(HOSTILE_REPORT).hexdigest(), len(HOSTILE_REPORT),
                   HOSTILE_REPORT))
    reviewer, second = Session(pool, repos, login="mara"), Session(pool, repos, viewer_id=9_000_005, login="jonas")

    with served(create_app(config, pool)) as base:
        anonymous = browser.new_page()
        anonymous.goto(base + "/")
        check_page(anonymous, "01-home")
        anonymous.goto(base + f"/release-runs/{run['id']}")
        assert "/sign-in?returnTo=/release-runs/" in anonymous.url   # the link remembers the run
        check_page(anonymous, "02-sign-in")

        context = signed_in(browser, base, reviewer)
        page = context.new_page()
        page.goto(base + "/runs")
        check_page(page, "03-runs")
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

        page.goto(base + f"/release-runs/{run['id']}")
        assert page.locator("h2 .badge").inner_text() == "FAIL"
        check_page(page, "05-run")
        # Waive the error finding from the keyboard.
        error_finding = page.locator("li.finding").first   # error findings come first
        error_finding.locator("summary").focus()
        page.keyboard.press("Enter")
        error_finding.locator("input[name=reason]").focus()
        page.keyboard.type("Bench-tested: the net is a test point")
        page.keyboard.press("Enter")
        page.wait_for_url("**done=waived**")
        assert "The finding is waived." in page.content()

        second_page = signed_in(browser, base, second).new_page()
        second_page.goto(base + f"/release-runs/{run['id']}")
        second_page.click("button[value=approved]")
        second_page.wait_for_url("**done=approved**")
        assert second_page.locator("h2 .badge").inner_text() == "PASS"
        check_page(second_page, "06-run-approved")

        with page.expect_popup() as popup:
            page.goto(base + f"/release-runs/{run['id']}")
            page.click("text=Open the checker's report")
        report = popup.value
        report.wait_for_function("document.getElementById('api').textContent !== 'unset'")
        assert report.locator("#cookie").inner_text() in ("cookie blocked", "cookie:")
        assert report.locator("#api").inner_text() == "api blocked"
        report.close()

        page.click("text=Sign out")
        page.wait_for_url(base + "/")
        page.goto(base + "/runs")
        assert "/sign-in" in page.url
        context.close()

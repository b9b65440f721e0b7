"""Browser tests' shared parts: Debian's headless Chromium under Playwright,
an offline page that records what went wrong, and where pictures go."""
from __future__ import annotations

from pathlib import Path

from tests.helpers.paths import REPO_ROOT


def screenshot_folder() -> Path:
    """Where browser tests put their pictures: docs/img/ when asked
    (BOARDREADY_UPDATE_SCREENSHOTS=1, to refresh the documentation's
    pictures), else .data/screenshots/, so that a test run leaves the
    checkout as it found it."""
    import os

    if os.environ.get("BOARDREADY_UPDATE_SCREENSHOTS") == "1":
        return REPO_ROOT / "docs" / "img"
    folder = REPO_ROOT / ".data" / "screenshots"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]


def headless_chromium():
    """Debian's chromium under Playwright, for a module-scoped `browser` fixture
    to `yield from`; a missing binary fails the test (bin/test installs it)."""
    import os

    import pytest
    from playwright.sync_api import sync_playwright

    if not os.path.exists(CHROMIUM):
        pytest.fail("Debian chromium is missing at /usr/bin/chromium (bin/test installs it)")
    with sync_playwright() as playwright:
        instance = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        yield instance
        instance.close()


def offline_page(browser, uri: str, **context_options):
    """A page opened offline on `uri`, with the lists the test asserts stay
    empty: console errors and page errors (`problems`) and every request that
    left the file (`requests`)."""
    context = browser.new_context(offline=True, **context_options)
    page = context.new_page()
    problems: list[str] = []
    requests: list[str] = []
    page.on("console", lambda message: message.type == "error" and problems.append(message.text))
    page.on("pageerror", lambda error: problems.append(str(error)))
    page.on("request", lambda request: not request.url.startswith("file:") and requests.append(request.url))
    page.goto(uri)
    return page, problems, requests

"""The HTML report in headless Chromium (Debian's, driven by playwright)."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from checker.report_html import render_html
from checker.runner import RunOptions, check
from checker_fixtures import KICAD, REPO_ROOT
from tests.helpers.browser import headless_chromium, offline_page



def _report(tmp_path: Path, relative: str) -> tuple[Path, object]:
    outcome = check(RunOptions(path=KICAD / relative, run_kicad_cli=False))
    page = tmp_path / "report.html"
    page.write_text(render_html(outcome), encoding="utf-8")
    return page, outcome


def test_report_is_self_contained(tmp_path):
    page, outcome = _report(tmp_path, "v6/stickhub")
    text = page.read_text()
    # The SVG namespace is a name, not an address: the only http:// allowed.
    assert "http://" not in text.replace('"http://www.w3.org/2000/svg"', "").replace("https://", "")
    assert "<script src" not in text and "<link" not in text
    assert outcome.result["readiness"].upper() in text


@pytest.fixture(scope="module")
def browser():
    yield from headless_chromium()


@pytest.mark.browser
def test_finding_click_highlights_marker_offline(browser, tmp_path):
    page_file, outcome = _report(tmp_path, "v9/kicad_bot_examples/drc-violation")
    crossing = next(f for f in outcome.findings if f.rule_id == "board.edge-clearance")
    page, problems, requests = offline_page(browser, page_file.as_uri())
    assert page.locator("#verdict").inner_text() == "BLOCKED"
    marker = page.locator(f"#marker-{crossing.fingerprint}")
    assert "active" not in (marker.get_attribute("class") or "")
    page.locator(f'li[data-fingerprint="{crossing.fingerprint}"] button').click()
    assert "active" in marker.get_attribute("class")
    assert problems == [] and requests == []
    page.context.close()


@pytest.mark.browser
def test_bom_search_and_filters(browser, tmp_path):
    page_file, outcome = _report(tmp_path, "v6/complex_hierarchy")
    page = browser.new_page()
    page.goto(page_file.as_uri())
    total = page.locator("#bom tbody tr").count()
    assert total > 50
    page.fill("#bom-search", "C1")
    assert 0 < page.locator("#bom tbody tr").count() < total
    page.fill("#bom-search", "")
    page.check("#filter-dnp")
    assert page.locator("#bom tbody tr").count() == 0  # the demo has no DNP parts
    page.uncheck("#filter-dnp")
    page.check("#filter-mpn")
    assert page.locator("#bom tbody tr").count() == total  # and no MPNs at all
    page.close()


@pytest.mark.browser
def test_screenshot_of_a_real_board(browser, tmp_path):
    page_file, _ = _report(tmp_path, "v6/stickhub")
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.goto(page_file.as_uri())
    page.locator(".bv-findings li button").first.click()
    shot = tmp_path / "report.png"
    page.screenshot(path=str(shot), full_page=False)
    page.close()
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20_000
    out = REPO_ROOT / "out"
    out.mkdir(exist_ok=True)
    shutil.copy(shot, out / "checker-report.png")  # kept for people to look at (out/ is git-ignored)

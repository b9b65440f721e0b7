"""The board diff on real boards: a fixture board and the same board with planted
edits (tests/fixtures/kicad-diff: P5 moved, one track deleted, one via added)."""
from __future__ import annotations

import json
import shutil
import os
from pathlib import Path

import pytest

from checker import board_view
from checker.board_diff import change_count
from checker.drawing import geometry_document
from checker.limits import DEFAULT_LIMITS
from checker.cli import main
from checker.runner import RunOptions, check
from checker_fixtures import FIXTURES, KICAD
from test_runner_mode import runner_env, service  # noqa: F401  (fixtures: the runner's environment and service)
from tests.helpers.browser import headless_chromium, offline_page, screenshot_folder

PAIR = FIXTURES / "kicad-diff"


def _compare(head: Path, base: Path):
    return check(RunOptions(path=head, base=base, run_kicad_cli=False))


def test_the_diff_names_every_planted_edit_and_nothing_else():
    outcome = _compare(PAIR / "head", PAIR / "base")
    [board] = outcome.comparison["boards"]
    diff = board["diff"]
    head = outcome.models[0].board
    # The moved footprint: P5, from its base place to its head place.
    [moved] = diff["footprints"]["moved"]
    assert moved["ref"] == "P5" and moved["base"]["at"][:2] == [125.095, 93.98]
    assert (head.footprints[moved["head"]].x, head.footprints[moved["head"]].y) == (126.365, 92.71)
    # The deleted track, drawn from the base.
    assert diff["tracks"]["removed"] == [["B.Cu", 0.8, "Net-(C2-Pad2)", "c766a778-05a9-412d-80dc-9c3dc4557624",
                                          137.16, 115.57, 143.4998, 115.57]]
    # The added via, by its index in the head's geometry.
    [via] = diff["vias"]["added"]
    assert (head.vias[via].x, head.vias[via].y, head.vias[via].net) == (135.509, 120.095, "Net-(R1-Pad1)")
    # Nothing else.
    assert change_count(diff) == 3
    assert diff["nets"] == {"added": [], "removed": [], "changed": []}
    assert outcome.comparison["bom"] == {"added": [], "removed": [], "changed": []}
    assert outcome.comparison["schematic"]["sheets"] == {"added": [], "removed": [], "changed": []}
    assert outcome.comparison["summary"][:3] == ["1 footprint moved: P5 (1.7961 mm)", "1 track removed", "1 via added"]


def test_an_enlarged_pad_inside_a_footprint_is_named_by_reference_and_number():
    # kicad-diff/pad-enlarged: the base with pad 2 of C2 grown from 1.6 to 2.4 mm, nothing else.
    outcome = _compare(PAIR / "pad-enlarged", PAIR / "base")
    diff = outcome.comparison["boards"][0]["diff"]
    [pad] = diff["footprints"]["pads"]
    assert (pad["ref"], pad["pad"], pad["change"]) == ("C2", "2", "changed")
    assert pad["fields"] == {"size": [[1.6, 1.6], [2.4, 2.4]]}
    head = outcome.models[0].board
    assert head.footprints[pad["head"]].pads[pad["index"]].width == 2.4 and pad["base"][2] == 1.6
    assert change_count(diff) == 1
    assert outcome.comparison["summary"][0] == "C2 pad 2 changed: size 1.6 × 1.6 → 2.4 × 2.4 mm"


def test_pads_added_removed_and_changed_in_every_trait_are_named(tmp_path):
    changed = tmp_path / "changed"
    shutil.copytree(PAIR / "base", changed)
    board = changed / "ecc83-pp.kicad_pcb"
    text = board.read_text()
    c2_pad1 = '(pad "1" thru_hole circle locked (at 0 0 90) (size 1.6 1.6) (drill 0.8) (layers *.Cu *.Mask)'
    c2_pad2 = '(pad "2" thru_hole circle locked (at 5 0 90) (size 1.6 1.6) (drill 0.8) (layers *.Cu *.Mask)'
    assert text.count(c2_pad1) == 1 and text.count(c2_pad2) == 1
    text = text.replace(c2_pad1, '(pad "1" thru_hole rect locked (at 0 0.5 90) (size 1.6 1.6) (drill 1) '
                                 '(layers F.Cu F.Mask)')
    text = text.replace(c2_pad2, '(pad "3" thru_hole circle locked (at 5 0 90) (size 1.6 1.6) (drill 0.8) '
                                 '(layers *.Cu *.Mask)')
    board.write_text(text)
    outcome = _compare(changed, PAIR / "base")
    pads = {(p["ref"], p["pad"]): p for p in outcome.comparison["boards"][0]["diff"]["footprints"]["pads"]}
    assert set(pads) == {("C2", "1"), ("C2", "2"), ("C2", "3")}
    assert pads[("C2", "2")]["change"] == "removed" and pads[("C2", "3")]["change"] == "added"
    assert pads[("C2", "1")]["fields"] == {"shape": ["circle", "rect"], "drill": [[0.8, 0.8], [1.0, 1.0]],
                                           "offset": [[0.0, 0.0], [0.0, 0.5]],
                                           "layers": [["*.Cu", "*.Mask"], ["F.Cu", "F.Mask"]]}
    summary = outcome.comparison["summary"]
    assert "C2 pad 2 removed" in summary and "C2 pad 3 added" in summary
    assert "C2 pad 1 changed: shape circle → rect; drill 0.8 × 0.8 → 1 × 1 mm; offset (0, 0) → (0, 0.5) mm; " \
           "layers *.Cu *.Mask → F.Cu F.Mask" in summary


def test_moving_and_turning_a_footprint_is_not_a_pad_edit(tmp_path):
    turned = tmp_path / "turned"
    shutil.copytree(PAIR / "base", turned)
    board = turned / "ecc83-pp.kicad_pcb"
    text = board.read_text()
    # C2 moved and turned from 90 to 180 degrees: KiCad writes each pad's absolute rotation too.
    text = text.replace("(at 137.16 125.095 90)", "(at 139.7 125.095 180)", 1)
    text = text.replace('(at 0 0 90) (size 1.6 1.6)', '(at 0 0 180) (size 1.6 1.6)', 1)
    text = text.replace('(at 5 0 90) (size 1.6 1.6)', '(at 5 0 180) (size 1.6 1.6)', 1)
    board.write_text(text)
    diff = _compare(turned, PAIR / "base").comparison["boards"][0]["diff"]
    assert [m["ref"] for m in diff["footprints"]["moved"]] == ["C2"] and diff["footprints"]["pads"] == []


def test_a_board_against_itself_has_no_change_and_no_new_finding(tmp_path):
    outcome = _compare(PAIR / "head", PAIR / "head")
    assert change_count(outcome.comparison["boards"][0]["diff"]) == 0
    assert outcome.findings and {f.baseline for f in outcome.findings} == {"existing"}
    # The same, when the base is a copy that differs in a file the checker does not read...
    copy = tmp_path / "copy"
    shutil.copytree(PAIR / "head", copy)
    (copy / "notes.txt").write_text("firmware only")
    same = _compare(PAIR / "head", copy)
    assert same.comparison == outcome.comparison and [f.baseline for f in same.findings] == \
        [f.baseline for f in outcome.findings]
    # ... and one byte in a KiCad file is a change.
    board = copy / "ecc83-pp.kicad_pcb"
    board.write_text(board.read_text().replace("(at 126.365 92.71)", "(at 126.366 92.71)"))
    moved = _compare(PAIR / "head", copy)
    assert [m["ref"] for m in moved.comparison["boards"][0]["diff"]["footprints"]["moved"]] == ["P5"]


def test_findings_the_change_introduced_are_new_by_fingerprint():
    outcome = _compare(PAIR / "head", PAIR / "base")
    base = check(RunOptions(path=PAIR / "base", run_kicad_cli=False))
    known = {f.fingerprint for f in base.findings}
    short = next(f for f in outcome.findings if f.rule_id == "board.short")
    assert "Net-(R1-Pad1)" in short.message and short.baseline == "new"
    assert all((f.baseline == "existing") == (f.fingerprint in known) for f in outcome.findings)
    assert [f["baseline"] for f in outcome.result["findings"]] == [f.baseline for f in outcome.findings]


def test_a_base_without_the_project_shows_everything_added(tmp_path):
    outcome = _compare(PAIR / "head", tmp_path)
    diff = outcome.comparison["boards"][0]["diff"]
    board = outcome.models[0].board
    assert len(diff["footprints"]["added"]) == len(board.footprints)
    assert len(diff["tracks"]["added"]) == len(board.tracks) and diff["tracks"]["removed"] == []
    assert {f.baseline for f in outcome.findings} == {"new"}


WIRE_TO_P2 = ("  (wire (pts (xy 185.42 76.2) (xy 198.12 76.2))\n    (stroke (width 0) (type solid) (color 0 0 0 0))\n"
              "    (uuid 06655b90-3a73-4865-8781-04208e869f47)\n  )\n")


def _schematic_pair(tmp_path, *, cut_wire: bool = False) -> tuple[Path, Path]:
    """The ecc83 demo twice; in the head R1 is 2.2K (and the wire to P2 pin 1 is cut)."""
    base, head = tmp_path / "base", tmp_path / "head"
    for target in (base, head):
        shutil.copytree(KICAD / "v6" / "ecc83", target, ignore=shutil.ignore_patterns("3d*", "*_v2.*"))
    sheet = head / "ecc83-pp.kicad_sch"
    text = sheet.read_text()
    planted = text.replace('(property "Reference" "R1" (id 0) (at 154.94 85.09 0))\n'
                           '    (property "Value" "1.5K"',
                           '(property "Reference" "R1" (id 0) (at 154.94 85.09 0))\n'
                           '    (property "Value" "2.2K"')
    if cut_wire:
        assert WIRE_TO_P2 in planted
        planted = planted.replace(WIRE_TO_P2, "")
    assert planted != text
    sheet.write_text(planted)
    return head, base


def test_bom_lines_changed_by_reference(tmp_path):
    head, base = _schematic_pair(tmp_path)
    outcome = _compare(head, base)
    bom = outcome.comparison["bom"]
    assert bom["added"] == [] and bom["removed"] == []
    assert bom["changed"] == [{"ref": "R1", "changes": {"value": ["1.5K", "2.2K"]}}]
    assert "1 BOM line changed" in outcome.comparison["summary"]
    # The schematic: the one sheet changed, R1's value, nothing else.
    schematic = outcome.comparison["schematic"]
    assert schematic["sheets"] == {"added": [], "removed": [], "changed": ["ecc83-pp.kicad_sch"]}
    assert schematic["symbols"]["added"] == [] and schematic["symbols"]["removed"] == []
    assert schematic["symbols"]["changed"] == [{"ref": "R1", "sheet": "ecc83-pp.kicad_sch",
                                                "changes": {"value": ["1.5K", "2.2K"]}}]
    assert schematic["wires"] == {"added": {}, "removed": {}} and schematic["labels"] == {"added": {}, "removed": {}}
    assert "R1: value 1.5K → 2.2K" in outcome.comparison["summary"]


def test_geometry_document_pins_findings_and_names_the_diff():
    outcome = _compare(PAIR / "head", PAIR / "base")
    document = geometry_document(outcome.models, outcome.findings, outcome.comparison)
    board = document["board"]
    assert board["layers"] == ["F.Cu", "B.Cu"] and not board.get("tooLarge")
    assert len(board["tracks"]) == len(outcome.models[0].board.tracks)
    assert [p["fingerprint"] for p in document["findings"]] == [f.fingerprint for f in outcome.findings]
    short = next(p for p in document["findings"] if p["ruleId"] == "board.short")
    assert short["baseline"] == "new" and "x" in short and "y" in short
    assert document["diff"]["vias"]["added"] and json.loads(json.dumps(document)) == document


def test_zones_carry_their_fills_and_symbols_their_library_bodies(tmp_path, monkeypatch):
    outcome = _compare(PAIR / "head", PAIR / "base")
    board = outcome.models[0].board
    [zone] = geometry_document(outcome.models, outcome.findings, outcome.comparison)["board"]["zones"]
    [(layer, points)] = board.zones[0].fills
    assert zone["fills"][0][0] == layer == "B.Cu" and len(zone["fills"][0]) == 1 + 2 * len(points)
    assert zone["fills"][0][1:3] == [round(points[0][0] * 1000), round(points[0][1] * 1000)]   # micrometres
    # Beyond the budget, the zones are outlines again.
    monkeypatch.setattr(board_view, "MAX_FILL_POINTS", len(points) - 1)
    [outline] = geometry_document(outcome.models, outcome.findings, outcome.comparison)["board"]["zones"]
    assert "fills" not in outline and outline["pts"] == zone["pts"]
    # The changed sheet's symbols, drawn from lib_symbols: R1 (vertical, 1.5K -> 2.2K) is its
    # rectangle and its two pins, which end where the connectivity model has them.
    head, base = _schematic_pair(tmp_path)
    changed = _compare(head, base)
    [sheet] = geometry_document(changed.models, changed.findings, changed.comparison)["sheets"]
    r1 = next(s for s in sheet["view"]["symbols"] if s["ref"] == "R1")
    kinds = sorted(shape[0] for shape in r1["body"])
    assert kinds == ["g", "p", "p"]
    pin_ends = sorted((shape[2], shape[3]) for shape in r1["body"] if shape[0] == "p")
    assert pin_ends == sorted((p[0], p[1]) for p in r1["pins"])
    assert all("body" in s for s in sheet["view"]["symbols"] if not s["ref"].startswith("#"))
    # Beyond the budget, symbols are frames around their pins again.
    from checker import schematic_view

    monkeypatch.setattr(schematic_view, "MAX_BODY_NUMBERS", 10)
    [framed] = geometry_document(changed.models, changed.findings, changed.comparison)["sheets"]
    assert not any("body" in s for s in framed["view"]["symbols"])


def test_a_board_too_large_to_draw_says_so_and_keeps_its_findings(monkeypatch):
    outcome = _compare(PAIR / "head", PAIR / "base")
    monkeypatch.setattr(board_view, "MAX_ITEMS", 10)
    document = geometry_document(outcome.models, outcome.findings, outcome.comparison)
    assert document["board"]["tooLarge"] is True and "tracks" not in document["board"]
    assert document["board"]["items"] > 10
    assert len(document["findings"]) == len(outcome.findings)


def test_cli_base_path_marks_new_findings_in_the_json(tmp_path, capsys):
    report = tmp_path / "result.json"
    code = main([str(PAIR / "head"), "--base", str(PAIR / "base"), "--no-kicad-cli", "--format", "json",
                 "-o", str(report)])
    assert code == 1   # the via's short blocks
    findings = json.loads(report.read_text())["findings"]
    # The base's only findings: P4's silkscreen across the board edge (KiCad's 4 warnings).
    assert {f["baseline"] for f in findings if f["ruleId"] != "board.silk-edge-clearance"} == {"new"}
    assert {f["baseline"] for f in findings if f["ruleId"] == "board.silk-edge-clearance"} == {"existing"}


def test_cli_base_ref_reads_the_base_from_git(tmp_path):
    import subprocess

    repo = tmp_path / "repo"
    shutil.copytree(PAIR / "base", repo / "board")
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.invalid"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "base"], check=True)
    shutil.copy(PAIR / "head" / "ecc83-pp.kicad_pcb", repo / "board" / "ecc83-pp.kicad_pcb")
    page = tmp_path / "report.html"
    code = main([str(repo / "board"), "--base-ref", "HEAD", "--no-kicad-cli", "--format", "json",
                 "-o", str(tmp_path / "result.json"), "--html", str(page)])
    assert code == 1
    findings = json.loads((tmp_path / "result.json").read_text())["findings"]
    assert "new" in {f["baseline"] for f in findings}


def test_cli_base_ref_refuses_what_is_not_a_revision(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_:
        main([str(PAIR / "head"), "--base-ref=--output=/tmp/x", "--no-kicad-cli"])
    assert exit_.value.code == 2


@pytest.fixture(scope="module")
def browser():
    yield from headless_chromium()


def _view_box(page) -> list[float]:
    return [float(v) for v in page.locator("svg.bv-svg").get_attribute("viewBox").split()]


@pytest.mark.browser
def test_the_report_draws_the_change_and_pins_the_new_finding_offline(browser, tmp_path):
    from checker.report_html import render_html

    outcome = _compare(PAIR / "head", PAIR / "base")
    page_file = tmp_path / "report.html"
    page_file.write_text(render_html(outcome), encoding="utf-8")
    page, problems, requests = offline_page(browser, page_file.as_uri(), viewport={"width": 1400, "height": 1000})
    page.wait_for_selector("[data-board-view][data-ready=true]")
    # Exactly the three planted edits, drawn and listed.
    marked = page.locator("svg .bv-change").evaluate_all("els => els.map(e => e.dataset.change)")
    assert sorted(marked) == ["footprint-moved", "track-removed", "via-added"]
    assert page.locator(".bv-changes li").count() == 3
    # The GND zone is drawn as the copper its fill poured (and its outline), not its outline alone.
    assert page.locator('g[data-layer="zones"] .bv-zone-fill').count() == 1
    assert page.locator('g[data-layer="zones"] .bv-zone-outline').count() == 1
    # Selecting the new short zooms to its pin.
    short = next(f for f in outcome.findings if f.rule_id == "board.short")
    whole = _view_box(page)
    page.locator(f'.bv-findings li[data-fingerprint="{short.fingerprint}"] button').click()
    x, y, w, h = _view_box(page)
    assert w < whole[2] / 3
    assert x < short.extra["x"] < x + w and y < short.extra["y"] < y + h
    assert "active" in page.locator(f"#marker-{short.fingerprint}").get_attribute("class")
    # ... and outlines the items it names: the via and the pad it touches.
    assert page.locator(".bv-named").count() >= 2
    # The keyboard zooms in and out.
    page.locator("svg.bv-svg").focus()
    page.keyboard.press("+")
    assert abs(_view_box(page)[2] - w / 1.5) < 1e-6
    page.keyboard.press("-")
    assert abs(_view_box(page)[2] - w) < 1e-6
    page.keyboard.press("0")
    assert _view_box(page)[2] > w
    # A layer toggle hides that layer's copper.
    track = page.locator('g[data-layer="B.Cu"] polyline').first
    # Drawn: neither it nor a group it is in is display: none.
    shown = "e => { for (let n = e; n && n.tagName !== 'svg'; n = n.parentNode) {" \
            " if (getComputedStyle(n).display === 'none') return false; } return true; }"
    assert track.evaluate(shown)
    page.locator('input[data-layer-toggle="B.Cu"]').uncheck()
    assert not track.evaluate(shown)
    # Changes only hides the unchanged copper; the severity filter hides the high finding and its pin.
    assert page.locator('g[data-layer="through"] .bv-unchanged').first.evaluate(shown)
    page.locator('input[data-action="changes-only"]').check()
    assert not page.locator('g[data-layer="through"] .bv-unchanged').first.evaluate(shown)
    page.select_option('select[data-action="severity"]', "error")
    assert page.locator(".bv-findings li:not([hidden])").count() == sum(f.severity == "error" for f in outcome.findings)
    assert problems == [] and requests == []
    page.context.close()


@pytest.mark.browser
def test_the_report_draws_the_enlarged_pad_under_its_base_pad(browser, tmp_path):
    from checker.report_html import render_html

    page_file = tmp_path / "report.html"
    page_file.write_text(render_html(_compare(PAIR / "pad-enlarged", PAIR / "base")), encoding="utf-8")
    page, problems, requests = offline_page(browser, page_file.as_uri(), viewport={"width": 1200, "height": 900})
    page.wait_for_selector("[data-board-view][data-ready=true]")
    assert page.locator("svg .bv-change").evaluate_all("els => els.map(e => e.dataset.change)") == ["pad-changed"]
    assert page.locator(".bv-changes li").all_inner_texts()[0].startswith("C2 pad 2 changed: size")
    assert page.locator(".bv-moved-from").count() == 1   # the base pad, drawn under the head's
    assert problems == [] and requests == []
    page.context.close()


def test_kicads_findings_are_left_unmarked_the_base_is_not_given_to_kicad():
    outcome = check(RunOptions(path=PAIR / "head", base=PAIR / "base", run_kicad_cli=False,
                               drc_report=PAIR / "head" / "kicad-drc.json"))
    kicad = [f for f in outcome.findings if f.source != "boardready"]
    own = [f for f in outcome.findings if f.source == "boardready"]
    assert kicad and own
    assert {f.baseline for f in kicad} == {None}
    # All new but the base's own warnings: P4's silkscreen across the board edge.
    assert {f.baseline for f in own if f.rule_id != "board.silk-edge-clearance"} == {"new"}


@pytest.mark.browser
def test_hostile_drawing_data_is_drawn_as_text_and_runs_nothing(browser, tmp_path):
    from checker.report_html import render_html

    page_file = tmp_path / "report.html"
    page_file.write_text(render_html(check(RunOptions(path=PAIR / "base", run_kicad_cli=False))), encoding="utf-8")
    page = browser.new_page()
    page.goto(page_file.as_uri())
    page.wait_for_selector("[data-board-view][data-ready=true]")
    hostile = '<img src=x onerror="window.pwned=1">'
    document = {"version": 1, "board": {
        "bounds": [0, 0, 10, 10], "layers": ["__proto__", "F.Cu"], "items": 3, "outline": [[0, 0, 10, 0, 10, 10]],
        "footprints": [{"ref": hostile, "value": "", "lib": "", "id": "constructor", "layer": "F.Cu",
                        "at": [5, 5, 0], "pads": [[5, 5, 1, 1, 0, "rect", "F", 0, "1", "", "__proto__"]]}],
        "tracks": [["__proto__", 0.2, hostile, "toString", 0, 0, "x", 5]], "vias": [], "zones": []},
        "findings": [{"fingerprint": '"><script>window.pwned=2</script>', "ruleId": "r", "severity": "error",
                      "title": hostile, "message": hostile, "x": 5, "y": 5, "uuids": ["__proto__"]}]}
    page.evaluate("doc => BoardView.mount(document.querySelector('[data-board-view]'), doc)", document)
    page.locator(".bv-findings li button").first.click()
    assert page.evaluate("window.pwned") is None
    assert hostile in page.locator(".bv-findings").inner_text()
    assert page.locator(".bv-ref").first.text_content() == hostile
    page.close()


def test_a_drawing_beyond_its_byte_budget_is_too_large_and_keeps_its_findings(monkeypatch):
    from checker import report_html

    outcome = _compare(PAIR / "head", PAIR / "base")
    page = report_html.render_html(outcome)
    assert '"tooLarge"' not in page and '"tracks":[[' in page
    monkeypatch.setattr(report_html, "MAX_DRAWING_BYTES", 2000)
    page = report_html.render_html(outcome)
    start = page.index('<script type="application/json" id="board-data">') + 48
    document = json.loads(page[start:page.index("</script>", start)])
    assert document["board"]["tooLarge"] is True and "diff" not in document
    assert len(document["findings"]) == len(outcome.findings) and "1 via added" in document["summary"]


@pytest.mark.browser
def test_a_board_too_large_to_draw_says_so_in_the_page_and_lists_the_findings(browser, tmp_path, monkeypatch):
    from checker import report_html

    monkeypatch.setattr(board_view, "MAX_ITEMS", 10)
    outcome = _compare(PAIR / "head", PAIR / "base")
    page_file = tmp_path / "report.html"
    page_file.write_text(report_html.render_html(outcome), encoding="utf-8")
    page = browser.new_page()
    page.goto(page_file.as_uri())
    page.wait_for_selector("[data-board-view][data-ready=true]")
    assert "too large to draw" in page.locator(".bv-note").inner_text()
    assert page.locator("svg.bv-svg").count() == 0
    assert page.locator(".bv-findings li").count() == len(outcome.findings)
    assert "1 via added" in page.locator(".bv-summary").inner_text()
    page.close()


@pytest.mark.browser
def test_the_changed_sheet_is_drawn_with_its_changed_symbol_and_the_new_erc_finding_pinned(browser, tmp_path):
    from checker.report_html import render_html

    head, base = _schematic_pair(tmp_path, cut_wire=True)
    outcome = _compare(head, base)
    assert outcome.comparison["schematic"]["wires"] == {"added": {}, "removed": {
        "ecc83-pp.kicad_sch": [[185.42, 76.2, 198.12, 76.2]]}}
    assert "ecc83-pp.kicad_sch: 1 wire removed" in outcome.comparison["summary"]
    erc = next(f for f in outcome.findings if f.rule_id == "erc.pin-not-connected")
    assert erc.baseline == "new" and erc.path == "ecc83-pp.kicad_sch"
    page_file = tmp_path / "report.html"
    page_file.write_text(render_html(outcome), encoding="utf-8")
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.goto(page_file.as_uri())
    page.wait_for_selector("[data-board-view][data-ready=true]")
    sheets = page.locator(".bv-sheets")
    assert sheets.locator("h4").all_inner_texts() == ["ecc83-pp.kicad_sch"]
    marked = sheets.locator(".bv-change").evaluate_all("els => els.map(e => e.dataset.change)")
    assert sorted(marked) == ["symbol-changed", "wire-removed"]
    assert sorted(sheets.locator(".bv-changes li").all_inner_texts()) == ["R1 changed", "Wire removed"]
    # Symbols are drawn from their library graphics, not as frames.
    assert sheets.locator(".bv-sch-body").count() >= 20 and sheets.locator(".bv-sch-body polygon").count() >= 10
    # The ERC finding is a pin on the sheet; selecting it zooms the sheet to it.
    pin = sheets.locator(f"#marker-{erc.fingerprint}")
    assert pin.count() == 1
    whole = [float(v) for v in sheets.locator("svg").get_attribute("viewBox").split()]
    page.locator(f'.bv-findings li[data-fingerprint="{erc.fingerprint}"] button').click()
    x, y, w, h = [float(v) for v in sheets.locator("svg").get_attribute("viewBox").split()]
    assert w < whole[2] and x < erc.extra["x"] < x + w and y < erc.extra["y"] < y + h
    assert "active" in pin.get_attribute("class")
    sheets.locator(".bv-svg").screenshot(path=str(screenshot_folder() / "board-diff-sheet.png"))
    # The report (an at-risk one here) passes axe: nothing serious or critical.
    from axe_playwright_python.sync_playwright import Axe

    violations = Axe().run(page).response["violations"]
    assert [v["id"] for v in violations if v["impact"] in ("serious", "critical")] == []
    page.close()


def test_runner_without_a_readable_base_still_sends_its_result(runner_env, service, capsys):
    code = main(["--runner", "--no-kicad-cli", "--base-ref", "0" * 40])
    assert code == 1   # the board is blocked; the result went out all the same
    assert "without the board diff" in capsys.readouterr().err
    callback = next(r for r in service.requests if r["path"] == "/api/v1/runs/github-actions-result")
    assert all("baseline" not in f for f in callback["body"]["result"]["findings"])


def test_runner_with_the_base_commit_marks_new_findings_and_sends_the_diff(runner_env, service):
    import subprocess

    workspace = Path(runner_env["GITHUB_WORKSPACE"])
    [board] = workspace.glob("hw/*.kicad_pcb")
    # The base has a lone NET_B stub away from the crossing tracks (which share a net, as in KiCad).
    board.write_text(board.read_text().rstrip()[:-1] + '\t(segment\n\t\t(start 3 15)\n\t\t(end 6 15)\n\t\t(width 0.25)'
                     '\n\t\t(layer "F.Cu")\n\t\t(net 2)\n\t\t(uuid "2f0c2a4e-0003-4000-8000-000000000003")\n\t)\n)\n')
    git = ["git", "-C", str(workspace), "-c", "user.name=t", "-c", "user.email=t@example.invalid"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "base"], check=True)
    base = subprocess.run([*git, "rev-parse", "HEAD"], check=True, capture_output=True, text=True).stdout.strip()
    text = board.read_text()
    stub = text.rindex("\t(segment\n")
    board.write_text(text[:stub] + "\t(not_a_segment\n" + text[stub + len("\t(segment\n"):])   # the head deletes it
    assert main(["--runner", "--no-kicad-cli", "--base-ref", base]) in (0, 1)   # 4 would be a refused result
    callback = next(r for r in service.requests if r["path"] == "/api/v1/runs/github-actions-result")
    findings = callback["body"]["result"]["findings"]
    assert findings and all(f["baseline"] == "existing" for f in findings if f["source"] == "boardready")
    report = next(r for r in service.requests if r["path"].startswith("/api/v1/runs/github-actions-artifact"))
    assert b'"removed":[["' in report["body"] and b"1 track removed" in report["body"]


@pytest.mark.browser
def test_mouse_wheel_drag_and_a_two_finger_pinch_move_the_view(browser, tmp_path):
    from checker.report_html import render_html

    page_file = tmp_path / "report.html"
    page_file.write_text(render_html(_compare(PAIR / "head", PAIR / "base")), encoding="utf-8")
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.goto(page_file.as_uri())
    page.wait_for_selector("[data-board-view][data-ready=true]")
    drawing = page.locator("svg.bv-svg").bounding_box()
    cx, cy = drawing["x"] + drawing["width"] / 2, drawing["y"] + drawing["height"] / 2
    start = _view_box(page)
    page.mouse.move(cx, cy)
    page.mouse.wheel(0, -200)
    page.wait_for_function(f"document.querySelector('svg.bv-svg').viewBox.baseVal.width < {start[2]}")
    zoomed = _view_box(page)
    # A drag to the right moves the view left: the board follows the pointer.
    page.mouse.down()
    page.mouse.move(cx + 100, cy, steps=4)
    page.mouse.up()
    dragged = _view_box(page)
    assert dragged[0] < zoomed[0] and dragged[2] == zoomed[2]
    # Two fingers moving apart zoom in.
    page.evaluate("""([x, y]) => {
        const svg = document.querySelector('svg.bv-svg');
        const touch = (type, id, px) => svg.dispatchEvent(new PointerEvent(type, {pointerId: id, pointerType: 'touch',
            clientX: px, clientY: y, bubbles: true}));
        touch('pointerdown', 11, x - 20); touch('pointerdown', 12, x + 20);
        touch('pointermove', 12, x + 40); touch('pointermove', 12, x + 80);
        touch('pointerup', 11, x - 20); touch('pointerup', 12, x + 80);
    }""", [cx, cy])
    assert _view_box(page)[2] < dragged[2]
    page.close()


def test_a_base_the_checker_refuses_leaves_the_head_checked_without_a_diff(tmp_path):
    base = tmp_path / "base"
    shutil.copytree(PAIR / "base", base)
    (base / "ecc83-pp.kicad_pcb").write_text("(kicad_pcb (version 20211014) (footprint")   # cut short
    outcome = _compare(PAIR / "head", base)
    assert outcome.comparison["boards"] == []
    assert outcome.comparison["summary"][0].startswith("The base commit could not be checked (")
    assert outcome.findings and {f.baseline for f in outcome.findings} == {None}
    assert outcome.result["readiness"] == "blocked"   # the head's own verdict stands


PLANTED = FIXTURES / "kicad-planted"
# Real pairs: the diff fixture, each planted-defect board against the clean one it was
# made from, and projects with a schematic whose base (tools/bench_board_diff.py's
# planted_base) has a footprint elsewhere, a track more and a via less.
BOARD_PAIRS = [(PAIR / "head", PAIR / "base")] + [
    (folder, PLANTED / "clean") for folder in sorted(PLANTED.iterdir())
    if folder.name != "clean" and (folder / "ecc83-pp.kicad_pcb").exists()]
SCHEMATIC_PROJECTS = [FIXTURES / "kicad-multilayer" / "kit-dev-coldfire-xilinx_5213",
                      KICAD / "v6" / "flat_hierarchy", KICAD / "v6" / "pic_programmer", KICAD / "v6" / "stickhub"]


def _marks_of_a_full_base_check(head: Path, base: Path, findings) -> list[str | None]:
    known = {f.fingerprint for f in check(RunOptions(path=base, run_kicad_cli=False)).findings}
    return [("existing" if f.fingerprint in known else "new") if f.source == "boardready" else None
            for f in findings]


def _restricted_and_full(head: Path, base: Path) -> tuple[dict, dict, list, list]:
    """The base's side as its check makes it (reusing the head's schematic and ERC
    where only board-side files changed, running only the rules the head has findings of)
    and as a full check of the base makes it, and the marks each gives the head's findings."""
    from checker.base_check import BaseCheck, compare
    from checker.runner import _bom, _check

    head_outcome = check(RunOptions(path=head, run_kicad_cli=False))
    root = Path(os.path.abspath(head))
    base_check = BaseCheck(_check, RunOptions(path=root, base=base, run_kicad_cli=False), root, root)
    full = base_check._checked(head_outcome.models, reuse=False)
    rules = frozenset(f.rule_id for f in head_outcome.findings if f.source == "boardready")
    restricted = base_check._checked(head_outcome.models, reuse=True, rules=rules)
    marks = []
    for payload in (restricted, full):
        for finding in head_outcome.findings:
            finding.baseline = None
        compare(head_outcome.models, payload, _bom(head_outcome.models, DEFAULT_LIMITS), head_outcome.findings, root)
        marks.append([f.baseline for f in head_outcome.findings])
    return restricted, full, marks, _marks_of_a_full_base_check(head, base, head_outcome.findings)


# And each pair the other way round: the base then has findings of rules the head has none
# of, which its check does not look for.
@pytest.mark.parametrize("head, base", BOARD_PAIRS + [(b, h) for h, b in BOARD_PAIRS],
                         ids=[h.name for h, _ in BOARD_PAIRS] + [f"{h.name}-reversed" for h, _ in BOARD_PAIRS])
def test_the_base_check_marks_the_findings_a_full_check_of_the_base_marks_new(head, base):
    outcome = _compare(head, base)   # the runner's way
    assert [f.baseline for f in outcome.findings] == _marks_of_a_full_base_check(head, base, outcome.findings)
    restricted, full, marks, expected = _restricted_and_full(head, base)
    assert marks[0] == marks[1] == expected
    assert restricted["boards"] == full["boards"] and restricted["bom"] == full["bom"]


@pytest.mark.parametrize("project", SCHEMATIC_PROJECTS, ids=[p.name for p in SCHEMATIC_PROJECTS])
def test_a_board_only_change_reuses_the_heads_schematic_and_erc_and_marks_exactly_what_a_full_check_marks(
        project, tmp_path):
    from tools.bench_board_diff import planted_base

    base = planted_base(project, tmp_path)
    restricted, full, marks, expected = _restricted_and_full(project, base)
    assert restricted["erc_is_heads"] and restricted["schematic"] is None   # the restricted way was taken
    assert not full["erc_is_heads"]
    assert marks[0] == marks[1] == expected
    assert restricted["boards"] == full["boards"] and restricted["bom"] == full["bom"]
    assert change_count(restricted["boards"][0]["diff"]) >= 3
    outcome = _compare(project, base)
    assert [f.baseline for f in outcome.findings] == _marks_of_a_full_base_check(project, base, outcome.findings)
    moved, *edits = outcome.comparison["summary"][:3]
    assert moved.startswith("1 footprint moved: ") and moved.endswith(" (2.54 mm)")
    assert edits == ["1 track removed", "1 via added"]


def _same_model(a, b, path="board") -> None:
    """Field by field, but where the items came from in their files (their locations)."""
    import dataclasses

    import numpy as np

    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        assert np.array_equal(a, b), path
    elif dataclasses.is_dataclass(a) and not isinstance(a, type):
        assert type(a) is type(b), path
        for field in dataclasses.fields(a):
            if field.name not in ("location", "uuids", "footprint", "file_offsets"):
                _same_model(getattr(a, field.name), getattr(b, field.name), f"{path}.{field.name}")
        if getattr(a, "footprint", None) is not None or getattr(b, "footprint", None) is not None:
            assert a.footprint.uuid == b.footprint.uuid, path   # the footprint it belongs to, by uuid
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), path
        for i, (x, y) in enumerate(zip(a, b)):
            _same_model(x, y, f"{path}[{i}]")
    elif isinstance(a, dict):
        assert a.keys() == b.keys(), path
        for key in a:
            _same_model(a[key], b[key], f"{path}[{key!r}]")
    else:
        assert a == b, path


# The planted boards pcbnew saved as it is now (ecc83-*: KiCad 9) against the clean KiCad 6 one
# differ in their header: those the base loads in full (below).
SAME_HEADER_PAIRS = [pair for pair in BOARD_PAIRS if not pair[0].name.startswith("ecc83-")]


@pytest.mark.parametrize("head, base", SAME_HEADER_PAIRS + [(p, None) for p in SCHEMATIC_PROJECTS],
                         ids=[h.name for h, _ in SAME_HEADER_PAIRS] + [p.name for p in SCHEMATIC_PROJECTS])
def test_the_base_board_built_from_the_heads_items_is_the_board_a_full_load_makes(head, base, tmp_path):
    from checker.base_check import _board_from_heads
    from checker.board import load_board
    from checker.project import InputReader
    from tools.bench_board_diff import planted_base

    base = base or planted_base(head, tmp_path)
    head_board = check(RunOptions(path=head, run_kicad_cli=False)).models[0].board
    path = next(Path(base).glob("*.kicad_pcb"))
    reader = InputReader(Path(os.path.abspath(base)), DEFAULT_LIMITS)
    built = _board_from_heads(head_board, Path(os.path.abspath(head)), path, reader)
    assert built is not None
    reused = sum(item is twin for name in ("footprints", "tracks", "vias") for item, twin in
                 zip(getattr(built, name), getattr(head_board, name)))
    assert reused > 0   # the head's own items, not copies
    loaded = load_board(path, reader)
    _same_model(built, loaded)
    # Every item is where the base's file has it (what orders a cluster's items: propagate_nets).
    for name in ("footprints", "tracks", "vias", "zones", "copper_shapes"):
        assert [built.offset_of(item.location) for item in getattr(built, name)] == [
            loaded.offset_of(item.location) for item in getattr(loaded, name)], name
    pads = [(built.offset_of(pad.location), loaded.offset_of(twin.location))
            for footprint, other in zip(built.footprints, loaded.footprints)
            for pad, twin in zip(footprint.pads, other.pads)]
    assert pads and all(here == there for here, there in pads)


def test_the_base_board_is_loaded_in_full_when_the_header_differs(tmp_path):
    from checker.base_check import _board_from_heads
    from checker.project import InputReader

    base = tmp_path / "base"
    shutil.copytree(PAIR / "base", base)
    board = base / "ecc83-pp.kicad_pcb"
    text = board.read_text()
    board.write_text(text.replace('(paper "A4")', '(paper "A3")', 1))
    assert board.read_text() != text
    head_board = check(RunOptions(path=PAIR / "head", run_kicad_cli=False)).models[0].board
    assert _board_from_heads(head_board, PAIR / "head", board, InputReader(base, DEFAULT_LIMITS)) is None
    # A KiCad 9 board against the KiCad 6 one it was made from: another header.
    head = PLANTED / "ecc83-lone-track"
    head_board = check(RunOptions(path=head, run_kicad_cli=False)).models[0].board
    clean = PLANTED / "clean" / "ecc83-pp.kicad_pcb"
    assert _board_from_heads(head_board, head, clean, InputReader(PLANTED / "clean", DEFAULT_LIMITS)) is None


def test_matching_only_the_keys_unshared_items_touch_gives_what_matching_all_gives():
    """Shared items (the base's board built from the head's) are compared only where an
    unshared item has their coarse key; duplicates keep the same indices and order."""
    import random
    from types import SimpleNamespace

    from checker.board_diff import _difference, _match_by_key

    key, coarse = (lambda item: (item.net, item.at)), (lambda item: item.net)
    randomly = random.Random(30)
    for _ in range(300):
        pool = [SimpleNamespace(net=randomly.choice("AB"), at=randomly.choice((1, 2))) for _ in range(8)]
        shared = pool[:5]
        base = shared + [SimpleNamespace(net=randomly.choice("AB"), at=randomly.choice((1, 2))) for _ in range(2)]
        head = shared + pool[5:]
        randomly.shuffle(base)
        randomly.shuffle(head)
        expected = _difference(base, head, key)
        added, removed = _match_by_key(base, head, key, coarse)
        assert added == expected[0] and [id(item) for item in removed] == [id(item) for item in expected[1]]


# Projects whose boards between them have findings of most board rules (the planted
# defects), and schematics with the schematic, BOM, parity and ERC rules'.
RULE_PROJECTS = ([folder for folder in sorted(PLANTED.iterdir()) if folder.is_dir()]
                 + [PAIR / "head", FIXTURES / "kicad-multilayer" / "kit-dev-coldfire-xilinx_5213"]
                 + [folder for version in ("v6", "v9") for folder in sorted((KICAD / version).iterdir())
                    if folder.is_dir()]
                 + [FIXTURES / "kicad-planted-erc" / name for name in ("two-net-names", "wire-stub")])


@pytest.mark.parametrize("project", RULE_PROJECTS, ids=[p.name for p in RULE_PROJECTS])
def test_a_check_asked_for_one_rule_finds_every_finding_of_it_a_full_check_finds(project):
    """What the base's check relies on: a rule module asked for some rules
    (model.wants) still finds every finding of those, though it skips the rest."""
    from collections import defaultdict

    from checker.runner import ModelReaders, _check

    options = RunOptions(path=project, run_kicad_cli=False)
    full: dict[str, set[str]] = defaultdict(set)
    for finding in check(options).findings:
        if finding.source == "boardready":
            full[finding.rule_id].add(finding.fingerprint)
    assert full
    for rule, fingerprints in full.items():
        alone = _check(options, ModelReaders(rules=frozenset({rule})))
        assert {f.fingerprint for f in alone.findings if f.rule_id == rule} == fingerprints, rule


def test_a_check_asked_for_no_board_rule_builds_no_copper_and_runs_no_erc():
    from checker.runner import ModelReaders, _check

    project = KICAD / "v6" / "pic_programmer"
    outcome = _check(RunOptions(path=project, run_kicad_cli=False), ModelReaders(rules=frozenset({"bom.mpn-missing"})))
    assert outcome.models[0].copper is None
    assert "bom.mpn-missing" in {f.rule_id for f in outcome.findings}
    assert not [f for f in outcome.findings if f.rule_id.startswith(("erc.", "board."))]
    everything = check(RunOptions(path=project, run_kicad_cli=False))
    assert everything.models[0].copper is not None
    assert any(f.rule_id.startswith("erc.") for f in everything.findings)


def _rules_named(node: "ast.AST", namespace: dict, seen: set) -> set[str]:
    """The rule ids written in ``node`` and in every function of the checker it names
    (called or passed), and in what those name in turn."""
    import ast
    import inspect
    import textwrap
    import types

    from checker.rules.catalogue import RULES

    def resolve(name):
        if isinstance(name, ast.Name):
            return namespace.get(name.id)
        if isinstance(name, ast.Attribute):
            owner = resolve(name.value)
            return getattr(owner, name.attr, None) if isinstance(owner, types.ModuleType) else None
        return None

    found = {n.value for n in ast.walk(node) if isinstance(n, ast.Constant) and n.value in RULES}
    for name in ast.walk(node):
        function = resolve(name)
        if (isinstance(function, types.FunctionType) and function.__module__.startswith("checker.")
                and function not in seen):
            seen.add(function)
            tree = ast.parse(textwrap.dedent(inspect.getsource(function)))
            found |= _rules_named(tree, function.__globals__, seen)
    return found


@pytest.mark.parametrize("module", ["board_rules", "copper_rules"])
def test_each_part_of_a_rule_module_runs_when_any_rule_it_can_find_is_asked_for(module):
    """Statically: the rules a part of the module's check names in its model.wants(...)
    guard are every rule id its code, and the checker's functions it reaches, holds."""
    import ast
    import importlib
    import inspect

    rules = importlib.import_module(f"checker.rules.{module}")
    tree = ast.parse(inspect.getsource(rules.check))
    constants = {target.id: ast.literal_eval(node.value) for node in ast.walk(tree) if isinstance(node, ast.Assign)
                 for target in node.targets if isinstance(target, ast.Name) and isinstance(node.value, ast.Tuple)}

    def asked(test) -> set[str] | None:
        for call in ast.walk(test):
            if isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == "wants":
                named = set()
                for arg in call.args:
                    named |= set(constants[arg.value.id]) if isinstance(arg, ast.Starred) else {ast.literal_eval(arg)}
                return named
        return None

    guards = [node for node in ast.walk(tree) if isinstance(node, ast.If) and asked(node.test) is not None]
    assert len(guards) >= 8
    every = set()
    for guard in guards:
        reached = set()
        for statement in guard.body:
            reached |= _rules_named(statement, rules.__dict__, set())
        assert reached <= asked(guard.test), ast.unparse(guard.test)
        every |= reached
    assert every   # the walk finds rule ids at all


@pytest.mark.parametrize("inside", ["escaped quotes", "a line inside a string"])
def test_a_base_whose_new_text_could_hide_a_list_in_a_string_is_loaded_in_full(inside, tmp_path):
    """Only the base's lists the head lacks have their quotes counted: a string that opens
    in one of them and holds a line that is one of the head's lists is found there."""
    from checker.base_check import _board_from_heads
    from checker.project import InputReader

    base = tmp_path / "base"
    shutil.copytree(PAIR / "head", base)
    board = base / "ecc83-pp.kicad_pcb"
    content = board.read_text()
    segment = next(line for line in content.splitlines() if line.startswith("  (segment "))
    text = ('"a \\"quoted\\" b"' if inside == "escaped quotes"
            else f'"a\n{segment}\n  (via b"')   # the head's own segment, inside the text's string
    at = content.rindex(")")
    board.write_text(content[:at] + f'  (gr_text {text} (at 100 100) (layer "F.SilkS"))\n' + content[at:])
    head_board = check(RunOptions(path=PAIR / "head", run_kicad_cli=False)).models[0].board
    assert _board_from_heads(head_board, PAIR / "head", board, InputReader(base, DEFAULT_LIMITS)) is None


def test_a_pad_less_cluster_built_from_both_files_takes_the_net_a_full_load_gives(tmp_path):
    """Two crossing pad-less tracks of two nets take the net of the first in the file
    (propagate_nets): with the second one changed, the base's board takes it from its
    own list and the first from the head's, and still orders them as its file does."""
    base = tmp_path / "base"
    head = PLANTED / "ecc83-padless-crossings"
    shutil.copytree(head, base)
    board = base / "ecc83-pp.kicad_pcb"
    text = board.read_text()
    first, second = "df1c25c0-3077-44f7-8e24-9aca8fa8dd4e", "dfa66b85-1d94-4778-b5d3-19035504e0b0"   # at (135, 98)
    assert text.index(first) < text.index(second)
    board.write_text(text.replace(second, second[:-1] + "1"))
    from checker.base_check import BaseCheck
    from checker.runner import _check

    head_outcome = check(RunOptions(path=head, run_kicad_cli=False))
    root = Path(os.path.abspath(head))
    base_check = BaseCheck(_check, RunOptions(path=root, base=base, run_kicad_cli=False), root, root)
    built, full = (base_check._checked(head_outcome.models, reuse=reuse) for reuse in (True, False))
    assert sorted(built["fingerprints"]) == sorted(full["fingerprints"])
    restricted, full, marks, expected = _restricted_and_full(head, base)
    assert marks[0] == marks[1] == expected

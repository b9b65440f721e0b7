"""The checker against KiCad 6's own DRC on the planted-defect boards, without KiCad:
every board carries the report KiCad wrote for it (tests/fixtures/kicad-planted)."""
from __future__ import annotations

import json

import pytest

from checker.findings import Finding
from checker.runner import RunOptions, check
from checker_fixtures import FIXTURES
from contracts import run_result_validator
from tools.kicad_drc import GOAL_TYPES, matches, read_report

PLANTED = FIXTURES / "kicad-planted"
# The KiCad 6 plants (drc.rpt); test_kicad9_copper.py checks the KiCad 9 ones (kicad-drc.json only).
BOARDS = sorted(p.name for p in PLANTED.iterdir() if (p / "drc.rpt").is_file())
COPPER = ("board.short", "board.clearance", "board.unconnected", "board.track-width", "board.hole-clearance",
          "board.dangling-track")


def _copper_findings(name: str):
    outcome = check(RunOptions(path=PLANTED / name, run_kicad_cli=False))
    return [f for f in outcome.findings if f.rule_id in COPPER], outcome


def test_every_plant_is_listed_and_has_kicad_report():
    listed = json.loads((PLANTED / "plants.json").read_text())
    assert sorted(listed) == sorted(p.name for p in PLANTED.iterdir() if p.is_dir()) and len(BOARDS) >= 10
    for name in BOARDS:
        assert (PLANTED / name / "drc.rpt").read_text().startswith("** Drc report for ecc83-pp.kicad_pcb **")


@pytest.mark.parametrize("name", BOARDS)
def test_every_kicad_copper_error_is_found_and_no_short_or_clearance_is_invented(name):
    violations = read_report((PLANTED / name / "drc.rpt").read_text())
    findings, _ = _copper_findings(name)
    for violation in violations:
        if violation.type in GOAL_TYPES:
            assert any(matches(violation, f) for f in findings), f"{name}: missed {violation.type} {violation.items}"
    for finding in findings:
        if finding.rule_id in ("board.short", "board.clearance"):
            assert any(matches(v, finding) for v in violations), f"{name}: no KiCad counterpart: {finding.message}"


def _one(name: str, rule: str):
    findings, outcome = _copper_findings(name)
    hits = [f for f in findings if f.rule_id == rule]
    assert len(hits) >= 1, [f.message for f in findings]
    return hits, outcome


def test_clean_copy_has_no_copper_finding():
    findings, outcome = _copper_findings("clean")
    assert findings == []
    assert outcome.result["readiness"] != "blocked"


def test_track_clearance_reports_rule_required_actual_and_position():
    hits, outcome = _one("track-clearance", "board.clearance")
    worst = min(hits, key=lambda f: f.extra["actual_mm"])
    assert worst.severity == "error"
    assert worst.extra["actual_mm"] == pytest.approx(0.095, abs=1e-3)
    assert worst.extra["required_mm"] == pytest.approx(0.4)
    assert worst.extra["rule"] == "netclass 'Default'"
    assert (worst.extra["x"], worst.extra["y"], worst.extra["layer"]) == (pytest.approx(135.9565), pytest.approx(118.0), "B.Cu")
    assert "Net-(C2-Pad2)" in worst.message and "Net-(R1-Pad1)" in worst.message
    assert outcome.result["readiness"] == "blocked"
    as_json = worst.to_json()
    assert (as_json["x"], as_json["y"], as_json["layer"]) == (135.9565, 118.0, "B.Cu")
    assert as_json["startLine"] > 1
    located = [f for f in outcome.result["findings"] if f["ruleId"] == "board.clearance"]
    assert located and all({"x", "y", "layer"} <= f.keys() for f in located)
    assert list(run_result_validator().iter_errors(outcome.result)) == []


@pytest.mark.parametrize("change, valid", [
    ({}, True),
    ({"layer": None}, True),
    ({"y": None}, False),                   # x without y
    ({"x": None, "y": None}, False),        # a layer without a place
    ({"x": 2147.4837}, False),              # beyond KiCad's 32-bit nanometres
    ({"layer": ""}, False),
    ({"layer": "L" * 256}, False),
])
def test_the_contract_takes_board_coordinates_beside_the_line(change, valid):
    finding = {"ruleId": "board.short", "severity": "error", "message": "m", "fingerprint": "0" * 32,
               "x": 135.9565, "y": -118.0, "layer": "B.Cu"}
    finding.update(change)
    finding = {k: v for k, v in finding.items() if v is not None}
    result = {"schemaVersion": 1, "triggerKind": "manual", "readiness": "blocked", "score": 0,
              "tool": {"name": "boardready", "version": "1"}, "findings": [finding]}
    assert (list(run_result_validator().iter_errors(result)) == []) is valid


def test_a_place_off_any_board_is_left_out_of_the_json():
    far = Finding("board.short", "m", identity=("a",), severity="error", extra={"x": 1e9, "y": 1.0, "layer": "F.Cu"})
    assert not {"x", "y", "layer"} & far.to_json().keys()
    long_name = Finding("board.short", "m", identity=("a",), severity="error", extra={"x": 1.0, "y": 2.0, "layer": "L" * 300})
    assert len(long_name.to_json()["layer"]) == 255


@pytest.mark.parametrize("name, items", [
    ("tracks-crossing", ("track of net Net-(C2-Pad2)", "track of net Net-(R1-Pad1)")),
    ("via-on-pad", ("via of net Net-(R1-Pad1)", "pad 2 of C2 of net Net-(C2-Pad2)")),
    ("pads-overlap", ("pad 7 of U1 of net Net-(R1-Pad1)", "pad 8 of U1 of net Net-(C2-Pad2)")),
    ("track-through-zone", ("track of net Net-(C1-Pad1)", "zone fill of net GND")),
])
def test_shorts_name_both_items(name, items):
    hits, _ = _one(name, "board.short")
    assert any(all(item in f.message for item in items) for f in hits), [f.message for f in hits]
    assert all(f.severity == "error" and "x" in f.to_json() for f in hits)


def test_deleted_track_leaves_the_net_unconnected_with_nearest_points():
    hits, _ = _one("unrouted", "board.unconnected")
    (finding,) = hits
    assert "Net-(C2-Pad2)" in finding.message and "pad 8 of U1" in finding.message
    assert (finding.extra["x"], finding.extra["y"]) == (pytest.approx(143.4998, abs=1e-3), pytest.approx(115.57))
    assert (finding.extra["to_x"], finding.extra["to_y"]) == (pytest.approx(137.16), pytest.approx(115.57))


def test_narrow_track_is_below_the_board_minimum():
    (finding,), _ = _one("narrow-track", "board.track-width")
    assert finding.severity == "error" and finding.extra["actual_mm"] == 0.18 and finding.extra["required_mm"] == 0.2


def test_holes_too_close():
    (finding,), _ = _one("hole-near-hole", "board.hole-clearance")
    assert finding.extra["actual_mm"] == pytest.approx(0.0587, abs=1e-3) and finding.extra["required_mm"] == 0.25


def test_pad_clearance():
    hits, _ = _one("pad-clearance", "board.clearance")
    assert [f.extra["actual_mm"] for f in hits] == [pytest.approx(0.2)]
    assert "pad 2 of C2" in hits[0].message

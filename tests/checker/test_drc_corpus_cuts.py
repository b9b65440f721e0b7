"""DRC rules against kicad-cli 9.0.8 on pieces cut from real public boards (tests/fixtures/kicad-corpus-cuts).

Each folder holds the cut board (KiCad's own text, tools/kicad_cut.py), its project file and
``kicad9-drc.json``, kicad-cli 9.0.8's report on the cut (README.md beside each says from where and
why). The tests compare the KiCad types each case is about, item by item; they never run KiCad.
"""
from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from checker.findings import Finding
from checker.runner import RunOptions, check
from checker_fixtures import FIXTURES

CUTS = FIXTURES / "kicad-corpus-cuts"
NEAR_MM = 1.0


def _cut(name: str) -> tuple[list[dict], list[Finding]]:
    folder = CUTS / name
    report = json.loads((folder / "kicad9-drc.json").read_text())
    findings = check(RunOptions(path=folder, run_kicad_cli=False)).findings
    return report["violations"], findings


def _errors(violations: list[dict], kind: str, naming: tuple[str, ...] = ()) -> list[dict]:
    return [v for v in violations if v["type"] == kind and v["severity"] == "error"
            and (not naming or any(n in item["description"] for item in v["items"] for n in naming))]


def _blocking(findings: list[Finding], kind: str) -> list[Finding]:
    return [f for f in findings if f.kicad_type == kind and f.severity == "error"]


def _places(findings: list[Finding]) -> int:
    return sum(f.extra.get("count", 1) for f in findings)


def _names(violation: dict, finding: Finding) -> bool:
    """The finding names KiCad's items by uuid, or stands within NEAR_MM of one of them."""
    uuids = {item.get("uuid") for item in violation["items"]}
    if uuids <= set(finding.uuids):
        return True
    return any(math.hypot(location["x"] - item["pos"]["x"], location["y"] - item["pos"]["y"]) <= NEAR_MM
               for location in finding.all_locations() if location.get("x") is not None
               for item in violation["items"])


def _agree(kicad: list[dict], ours: list[Finding]) -> None:
    for violation in kicad:
        assert any(_names(violation, f) for f in ours), f"missed {violation['description']}"
    assert _places(ours) == len(kicad), [f.message for f in ours]


def test_a_rule_areas_second_polygon_is_a_cutout():
    """Glasgow's keepout is a 1.7 mm band along the edge: its outline's second polygon is a hole
    (ZONE::AddPolygon). kicad-cli reports no item in it; the checker reported 421 on this cut
    (5,002 on the whole board) when it read the second polygon as more keepout."""
    kicad, ours = _cut("keepout-cutout-glasgow")
    assert _errors(kicad, "items_not_allowed") == []
    assert _blocking(ours, "items_not_allowed") == []


def test_the_halves_of_a_diff_pair_are_held_to_its_gap():
    """Minino's /D+ and /D- (net class Default: clearance 0.2, diff-pair gap 0.1524): KiCad reports
    the one place below the gap ("netclass 'Default' (diff pair)"), not the 13 below the clearance."""
    kicad, ours = _cut("diff-pair-gap-minino")
    pair = _errors(kicad, "clearance", ("/D+", "/D-"))
    mine = [f for f in _blocking(ours, "clearance") if set(f.extra.get("nets", ())) == {"/D+", "/D-"}]
    assert len(pair) == 1 and "(diff pair)" in pair[0]["description"]
    _agree(pair, mine)
    assert "(diff pair)" in mine[0].extra["rule"]


def test_unnumbered_through_hole_pads_are_held_to_the_annular_width():
    """Minino's USB-C shield pads: 0.65 mm pads with a 0.65 mm drill and no number or net.
    kicad-cli: annular width -0.0028 mm against the board's 0.05 mm, twice."""
    kicad, ours = _cut("diff-pair-gap-minino")
    _agree(_errors(kicad, "annular_width"), _blocking(ours, "annular_width"))


def test_no_net_copper_over_a_pad_is_a_short():
    """CatSniffer's bridged solder jumper JP1: its no-net copper strip over pads of two nets is
    KiCad's shorting_items twice (testSingleLayerItemAgainstItem), not a clearance violation; and a
    track 0.1495 mm from a via under 0.15 mm is within KiCad's epsilon."""
    kicad, ours = _cut("no-net-copper-short-catsniffer")
    _agree(_errors(kicad, "shorting_items"), _blocking(ours, "shorting_items"))
    clearance = _blocking(ours, "clearance")
    assert not [f for f in clearance if "JP1" in f.message or "0.1495" in f.message]
    assert _places(clearance) <= len(_errors(kicad, "clearance"))


@pytest.mark.parametrize("name", sorted(p.name for p in CUTS.iterdir() if (p / "kicad9-drc.json").is_file()))
def test_every_cut_says_where_it_comes_from(name):
    readme = (CUTS / name / "README.md").read_text()
    assert "commit" in readme.lower() and "licence" in readme.lower()


def _pic_programmer_with(tmp_path, dru: str, min_clearance: float | None = None):
    import shutil

    from checker_fixtures import KICAD

    folder = tmp_path / "pic_programmer"
    shutil.copytree(KICAD / "v6" / "pic_programmer", folder)
    (folder / "pic_programmer.kicad_dru").write_text(dru)
    if min_clearance is not None:
        pro = folder / "pic_programmer.kicad_pro"
        data = json.loads(pro.read_text())
        data["board"]["design_settings"]["rules"]["min_clearance"] = min_clearance
        pro.write_text(json.dumps(data))
    return check(RunOptions(path=folder / "pic_programmer.kicad_pro", root=folder, run_kicad_cli=False)).findings


def test_a_custom_clearance_rule_is_not_floored_by_the_board_minimum(tmp_path):
    """DRC_ENGINE::loadImplicitRules floors only the net class clearances by the board minimum; a
    custom rule's own minimum stands (kicad-cli 9.0.8 on esp32-bus-pirate-dock: 0.1005 mm under a
    0.1 mm rule and a 0.1016 mm board minimum is silent). pic_programmer's tracks are 0.3 mm or more
    apart: a 0.01 mm rule with a 1 mm board minimum leaves no clearance violation."""
    ours = _pic_programmer_with(tmp_path, '(version 1)\n(rule "tight" (constraint clearance (min 0.01mm)))\n',
                                min_clearance=1.0)
    assert not [f for f in ours if f.rule_id == "board.clearance" and f.severity == "error"]


def test_a_rule_file_kicad_refuses_applies_no_rule(tmp_path):
    """A second (layer ...) in one rule makes KiCad 9's rule parser throw, and kicad-cli then applies
    none of the file's rules (measured on a board made for it: a 0.01 mm clearance rule beside such a
    rule leaves the net class violations reported)."""
    plain = _pic_programmer_with(tmp_path / "a", '(version 1)\n', min_clearance=1.0)
    refused = _pic_programmer_with(tmp_path / "b", '(version 1)\n(rule "tight" (constraint clearance (min 0.01mm)))\n'
                                   '(rule "silk" (constraint track_width (min 0.15mm))\n'
                                   '  (layer "F.Silkscreen") (layer "B.Silkscreen"))\n', min_clearance=1.0)
    blocking = [f for f in plain if f.rule_id == "board.clearance" and f.severity == "error"]
    assert blocking
    assert len([f for f in refused if f.rule_id == "board.clearance" and f.severity == "error"]) == len(blocking)
    assert [f for f in refused if f.rule_id == "rules.unsupported" and "refuses" in f.message]


def test_holes_of_one_footprint_are_held_to_the_hole_to_hole_minimum():
    """Lily58's J8: a row of unnumbered NPTH holes 0.1 mm apart. kicad-cli 9.0.8 reports the 8
    pairs (hole_to_hole compares every round drilled hole, a footprint's own too)."""
    kicad, ours = _cut("hole-to-hole-one-footprint-lily58")
    _agree(_errors(kicad, "hole_to_hole"), _blocking(ours, "hole_to_hole"))

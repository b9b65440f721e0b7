"""Planted schematic defects (tests/fixtures/kicad-planted-erc, made by tools/erc_planting.py):
each is in KiCad 9's committed report, the checker finds it as KiCad does, and it blocks
(the KiCad warnings among them make the project at-risk). The project's ERC settings apply."""
from __future__ import annotations

import json
import shutil

import pytest

from checker.runner import RunOptions, check
from tools import erc_compare

from checker_fixtures import FIXTURES, KICAD

PLANTED = FIXTURES / "kicad-planted-erc"
# plant -> (the KiCad type it makes, the source project it was planted in)
EXPECTED = {
    "power-not-driven": ("power_pin_not_driven", KICAD / "v6/ecc83/ecc83-pp.kicad_pro"),
    "unconnected-pin": ("pin_not_connected", KICAD / "v6/ecc83/ecc83-pp.kicad_pro"),
    "dangling-label": ("label_dangling", KICAD / "v6/ecc83/ecc83-pp.kicad_pro"),
    "wire-stub": ("wire_dangling", KICAD / "v6/ecc83/ecc83-pp.kicad_pro"),
    "two-net-names": ("multiple_net_names", KICAD / "v6/ecc83/ecc83-pp.kicad_pro"),
    "hier-label-without-pin": ("hier_label_mismatch", KICAD / "v6/complex_hierarchy/complex_hierarchy.kicad_pro"),
    "outputs-shorted": ("pin_to_pin",
                        KICAD / "v9/kicad_sch_api_reference_projects/multi_unit_7400/multi_unit_7400.kicad_pro"),
    "undefined-netclass": ("undefined_netclass",
                           KICAD / "v9/kicad_sch_api_reference_projects/resistor_divider/resistor_divider.kicad_pro"),
    "missing-unit": ("missing_unit", KICAD / "v6/ecc83/ecc83-pp.kicad_pro"),
    "no-connect-dangling": ("no_connect_dangling", KICAD / "v6/ecc83/ecc83-pp.kicad_pro"),
    "similar-labels": ("similar_labels", KICAD / "v6/ecc83/ecc83-pp.kicad_pro"),
    "duplicate-sheet-names": ("duplicate_sheet_names", KICAD / "v6/complex_hierarchy/complex_hierarchy.kicad_pro"),
    "power-unit-missing": ("missing_power_pin",
                           KICAD / "v9/kicad_sch_api_reference_projects/multi_unit_7400/multi_unit_7400.kicad_pro"),
    "net-label-on-bus": ("bus_to_net_conflict",
                         KICAD / "v9/kicad_sch_api_reference_projects/resistor_divider/resistor_divider.kicad_pro"),
    "bus-two-names": ("multiple_net_names",
                      KICAD / "v9/kicad_sch_api_reference_projects/resistor_divider/resistor_divider.kicad_pro"),
    "net-not-bus-member": ("net_not_bus_member",
                           KICAD / "v9/kicad_sch_api_reference_projects/resistor_divider/resistor_divider.kicad_pro"),
}
# KiCad 9 warnings: found, at-risk but not blocking. missing-unit blocks through the pins the
# deleted unit left unconnected (pin_not_connected), as in KiCad.
WARNINGS = {"two-net-names", "missing-unit", "no-connect-dangling", "similar-labels", "net-not-bus-member",
            "bus-two-names"}
AT_RISK = WARNINGS - {"missing-unit", "net-not-bus-member", "bus-two-names"}    # these leave pins or labels unconnected too


def _run(pro):
    return check(RunOptions(path=pro, root=pro.parent, run_kicad_cli=False))


def _of_type(outcome, kicad_type):
    return [f for f in outcome.findings if f.kicad_type == kicad_type and f.source == "boardready"]


def test_every_plant_is_committed():
    assert sorted(p.name for p in PLANTED.iterdir() if p.is_dir()) == sorted(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_planted_defect_is_found_as_kicad_finds_it_and_blocks(name):
    kicad_type, source = EXPECTED[name]
    folder = PLANTED / name
    pro = next(folder.glob("*.kicad_pro"))
    violations = erc_compare.read_violations(json.loads((folder / "kicad-erc.json").read_text(encoding="utf-8")))
    theirs = [v for v in violations if v.type == kicad_type]
    assert theirs, f"KiCad's report has no {kicad_type}"
    assert not _of_type(_run(source), kicad_type), "the source project already has it"
    result = erc_compare.compare(pro, violations)
    assert result.matched[kicad_type] == len(theirs)
    assert not result.missed, [(v.type, v.description) for v in result.missed]
    assert not [f for f in result.extra if f.severity == "error"]
    outcome = _run(pro)
    ours = _of_type(outcome, kicad_type)
    assert ours and all(f.uuids and f.line for f in ours)
    expected = "at-risk" if name in AT_RISK else "blocked"
    assert outcome.result["readiness"] == expected
    assert {f.severity for f in ours} == ({"medium"} if name in WARNINGS else {"error"})


def _copy(tmp_path, name):
    target = tmp_path / name
    shutil.copytree(PLANTED / name, target)
    return next(target.glob("*.kicad_pro"))


def _set_erc(pro, **erc):
    data = json.loads(pro.read_text(encoding="utf-8"))
    data.setdefault("erc", {}).update(erc)
    pro.write_text(json.dumps(data), encoding="utf-8")


def test_project_severity_makes_a_dangling_label_a_warning_or_nothing(tmp_path):
    pro = _copy(tmp_path, "dangling-label")
    _set_erc(pro, rule_severities={"label_dangling": "warning"})
    outcome = _run(pro)
    assert [f.severity for f in _of_type(outcome, "label_dangling")] == ["medium"]
    assert outcome.result["readiness"] == "at-risk"
    _set_erc(pro, rule_severities={"label_dangling": "ignore"})
    assert not _of_type(_run(pro), "label_dangling")


def test_project_exclusion_marks_the_finding_and_unblocks(tmp_path):
    pro = _copy(tmp_path, "dangling-label")
    label = _of_type(_run(pro), "label_dangling")[0]
    x, y = round(label.extra["x"] * 10_000), round(label.extra["y"] * 10_000)
    _set_erc(pro, erc_exclusions=[[f"label_dangling|{x}|{y}|{label.uuids[0]}|00000000-0000-0000-0000-000000000000"
                                   "|/|/|/", "planted on purpose"]])
    outcome = _run(pro)
    finding = _of_type(outcome, "label_dangling")[0]
    assert finding.excluded
    assert outcome.result["readiness"] != "blocked"


def test_project_pin_map_decides_an_output_to_output_conflict(tmp_path):
    pro = _copy(tmp_path, "outputs-shorted")
    pin_map = [[0] * 12 for _ in range(12)]
    _set_erc(pro, pin_map=pin_map)
    assert not _of_type(_run(pro), "pin_to_pin")
    pin_map[1][1] = 1
    _set_erc(pro, pin_map=pin_map)
    assert [f.severity for f in _of_type(_run(pro), "pin_to_pin")] == ["medium"]


def test_a_bus_member_through_a_bus_entry_is_no_conflict(tmp_path):
    # KiCad 9.0.8 reported nothing for this entry when its wire was labelled PLANTED.A, a member.
    pro = _copy(tmp_path, "net-not-bus-member")
    schematic = pro.with_suffix(".kicad_sch")
    text = schematic.read_text(encoding="utf-8")
    assert '(label "PLANTED.C"' in text
    schematic.write_text(text.replace('(label "PLANTED.C"', '(label "PLANTED.A"'), encoding="utf-8")
    assert not _of_type(_run(pro), "net_not_bus_member")
    _set_erc(pro, rule_severities={"net_not_bus_member": "ignore"})
    schematic.write_text(text, encoding="utf-8")
    assert not _of_type(_run(pro), "net_not_bus_member")


def test_two_names_on_one_bus_are_reported_even_when_one_contains_the_other(tmp_path):
    # KiCad 9.0.8 reported multiple_net_names for PLANTED[0..3] with PLANTED[0..7] on one bus too.
    pro = _copy(tmp_path, "bus-two-names")
    schematic = pro.with_suffix(".kicad_sch")
    text = schematic.read_text(encoding="utf-8")
    assert '"OTHER[0..3]"' in text
    schematic.write_text(text.replace('"OTHER[0..3]"', '"PLANTED[0..7]"'), encoding="utf-8")
    [finding] = _of_type(_run(pro), "multiple_net_names")
    assert "PLANTED[0..3]" in finding.message and "PLANTED[0..7]" in finding.message

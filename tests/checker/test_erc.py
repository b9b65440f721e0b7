"""The checker's own ERC against KiCad 9.0.8's, on the committed kicad-cli reports beside
every fixture project (bin/kicad-oracle wrote them; these tests never run kicad-cli)."""
from __future__ import annotations

from collections import Counter

import pytest

from checker.runner import RunOptions, check
from tools import erc_compare

from checker_fixtures import KICAD

ERROR_SHARE = 0.95          # of KiCad's ERC errors found, per type
WARNING_SHARE = 0.90        # of its warnings


def _with_reports():
    found = []
    for pro in erc_compare.projects():
        report = erc_compare.report_for(pro)
        if report is not None:
            found.append((pro, report))
    return found


PROJECTS = _with_reports()


@pytest.fixture(scope="module")
def results():
    import json

    return [erc_compare.compare(pro, erc_compare.read_violations(json.loads(report.read_text(encoding="utf-8"))))
            for pro, report in PROJECTS]


def test_there_are_committed_reports_to_compare_with():
    assert len(PROJECTS) >= 25


def test_found_share_per_kicad_type_meets_the_goal(results):
    kicad, matched, severity = Counter(), Counter(), {}
    for result in results:
        for kind, count in result.kicad.items():
            if kind in erc_compare.NOT_COMPARED:
                continue
            kicad[kind] += count
            severity.setdefault(kind, result.severity[kind])
        matched.update(result.matched)
    assert kicad["pin_not_connected"] > 50 and kicad["unconnected_wire_endpoint"] > 200   # the corpus is real
    short = {kind: f"{matched[kind]}/{kicad[kind]}" for kind in kicad
             if matched[kind] < kicad[kind] * (ERROR_SHARE if severity[kind] == "error" else WARNING_SHARE)}
    assert not short, f"below the goal: {short}"


def test_no_error_where_kicad_reports_none(results):
    for result in results:
        kicad_errors = sum(n for kind, n in result.kicad.items() if result.severity.get(kind) == "error")
        if kicad_errors:
            continue
        ours = [f for f in result.extra if f.severity == "error"]
        assert not ours, f"{result.project}: {[f.message for f in ours]}"


def test_a_finding_names_kicad_items_and_places_them():
    pro = KICAD / "v6/electric/electric.kicad_pro"
    outcome = check(RunOptions(path=pro, root=pro.parent, run_kicad_cli=False))
    dangling = [f for f in outcome.findings if f.rule_id == "erc.label-dangling"]
    assert len(dangling) == 33
    finding = dangling[0]
    assert finding.kicad_type == "label_dangling" and finding.severity == "error"
    assert finding.uuids and finding.path == "electric.kicad_sch" and finding.line > 1
    assert 0 < finding.extra["x"] < 1000 and 0 < finding.extra["y"] < 1000
    assert outcome.result["readiness"] == "blocked"


def test_a_sheet_used_twice_has_its_own_nets_per_instance():
    pro = KICAD / "v6/complex_hierarchy/complex_hierarchy.kicad_pro"
    outcome = check(RunOptions(path=pro, root=pro.parent, run_kicad_cli=False))
    graph = outcome.models[0].schematic.connectivity
    assert len({instance.screen.file for instance in graph.instances}) < len(graph.instances)
    assert not [f for f in outcome.findings if f.rule_id.startswith("erc.") and f.severity == "error"]


def _ecc83_with(tmp_path, replacements):
    import shutil

    source = KICAD / "v6/ecc83"
    for name in ("ecc83-pp.kicad_sch", "ecc83-pp.kicad_pro", "ecc83-pp.kicad_pcb"):
        shutil.copy2(source / name, tmp_path / name)
    schematic = tmp_path / "ecc83-pp.kicad_sch"
    text = schematic.read_text(encoding="utf-8")
    for old, new in replacements:
        assert old in text
        text = text.replace(old, new, 1)
    schematic.write_text(text, encoding="utf-8")
    return check(RunOptions(path=tmp_path / "ecc83-pp.kicad_pro", root=tmp_path, run_kicad_cli=False))


def test_a_unit_without_footprint_takes_the_parts_footprint(tmp_path):
    # U1's first unit placed with an empty Footprint field: KiCad takes the part's footprint
    # from the first unit that has one, so nothing is missing and nothing mismatches.
    outcome = _ecc83_with(tmp_path, [('(property "Footprint" "Valve:Valve_ECC-83-1" (id 2) (at 166.37 64.77 90)',
                                      '(property "Footprint" "" (id 2) (at 166.37 64.77 90)')])
    about_u1 = [f for f in outcome.findings if "U1" in f.message and f.rule_id.startswith(("parity.", "sch.", "erc."))]
    assert not about_u1, [f.message for f in about_u1]
    [line] = [line for line in outcome.result["bom"] if "U1" in line["references"]]
    assert line["footprint"] == "Valve:Valve_ECC-83-1"


def test_units_with_different_footprints_are_an_error(tmp_path):
    outcome = _ecc83_with(tmp_path, [('(property "Footprint" "Valve:Valve_ECC-83-1" (id 2) (at 162.56 118.11 0)',
                                      '(property "Footprint" "Valve:Valve_ECC-83-2" (id 2) (at 162.56 118.11 0)')])
    found = [f for f in outcome.findings if f.kicad_type == "different_unit_footprint"]
    assert len(found) == 1 and found[0].severity == "error" and "U1" in found[0].message


def test_a_symbol_places_the_unit_its_instance_names():
    # KiCad 6: complex_hierarchy's ampli_ht sheet has two LM358N symbols without a (unit); the root's
    # symbol_instances make one U3 unit 1 and the other unit 2, whose pins are 5, 6 and 7.
    pro = KICAD / "v6/complex_hierarchy/complex_hierarchy.kicad_pro"
    outcome = check(RunOptions(path=pro, root=pro.parent, run_kicad_cli=False))
    screen = outcome.models[0].schematic.screens["ampli_ht.kicad_sch"]
    units = sorted((p.unit, sorted(pin.number for pin in p.pins)) for p in screen.placements if p.lib_id.endswith("LM358N"))
    assert units == [(1, ["1", "2", "3", "4", "8"]), (2, ["4", "5", "6", "7", "8"])]
    assert not [f for f in outcome.findings if f.kicad_type == "different_unit_net"]

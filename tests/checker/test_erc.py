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

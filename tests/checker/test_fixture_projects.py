"""Every real fixture project checks cleanly against the contract; named ones
give the findings a KiCad user would expect."""
from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from checker.runner import RunOptions, check
from contracts import run_result_validator
from checker_fixtures import KICAD


def _project_folders() -> list[str]:
    folders = {p.parent for p in KICAD.rglob("*") if p.suffix in (".kicad_pro", ".kicad_pcb", ".kicad_sch")}
    return sorted(str(f.relative_to(KICAD)) for f in folders if ".pretty" not in str(f))


def _run(relative: str, **options):
    return check(RunOptions(path=KICAD / relative, run_kicad_cli=False, **options))


@pytest.mark.parametrize("relative", _project_folders())
def test_every_fixture_checks_and_validates(relative):
    outcome = _run(relative)
    errors = list(run_result_validator().iter_errors(outcome.result))
    assert errors == []
    assert outcome.result["readiness"] in ("ready", "at-risk", "blocked")


def _rules(outcome) -> Counter:
    return Counter(f.rule_id for f in outcome.findings)


def test_complex_hierarchy_reused_sheet_has_distinct_references():
    outcome = _run("v6/complex_hierarchy")
    schematic = outcome.models[0].schematic
    assert schematic.sheet_instances == 3
    # ampli_ht.kicad_sch is used twice; its symbols get different references per instance.
    by_file = [s for s in schematic.symbols if s.file == "ampli_ht.kicad_sch" and s.lib_id.endswith(":EF_2")
               or s.file == "ampli_ht.kicad_sch" and s.lib_id.endswith(":POT")]
    references = {(s.sheet_path, s.reference) for s in by_file}
    assert len(references) == len(by_file) and len({r for _, r in references}) == len(by_file)
    assert "sch.duplicate-reference" not in _rules(outcome)
    assert "sch.unannotated" not in _rules(outcome)
    assert "parity.missing-footprint" not in _rules(outcome)


def test_drc_violations_crossing_padless_tracks_share_a_net_and_its_edge_blocks():
    # No pad anywhere: KiCad 9 gives the touching tracks the first one's net (both "Track
    # [NET_A]" in kicad-cli 9.0.8's report), so there is no short; the edge clearance blocks.
    outcome = _run("v9/kicad_bot_examples/drc-violation")
    assert [f for f in outcome.findings if f.rule_id == "board.short"] == []
    [edge] = [f for f in outcome.findings if f.rule_id == "board.edge-clearance"]
    assert "net NET_A" in edge.message and edge.line == 116
    assert outcome.result["readiness"] == "blocked"


def test_kinet2pcb_has_no_outline_and_is_blocked():
    outcome = _run("v9/kinet2pcb_test")
    assert "board.outline-missing" in _rules(outcome)
    assert outcome.result["readiness"] == "blocked"


def test_microwave_is_legacy_and_read():
    outcome = _run("v6/microwave")
    assert "format.legacy" in _rules(outcome)
    assert outcome.models[0].board.legacy and len(outcome.models[0].board.footprints) == 4
    assert outcome.result["kicadVersion"] == "5"


def test_kicad9_multi_unit_parts_are_not_duplicates():
    outcome = _run("v9/kicad_sch_api_reference_projects/multi_unit_7400")
    units = sorted(s.unit for s in outcome.models[0].schematic.symbols if s.reference == "U1")
    assert units == [1, 2, 3, 4, 5]
    assert "sch.duplicate-reference" not in _rules(outcome)
    assert outcome.result["kicadVersion"] == "9"


def test_ecc83_folder_holds_two_projects():
    outcome = _run("v6/ecc83")
    assert sorted(m.files.name for m in outcome.models) == ["ecc83-pp", "ecc83-pp_v2"]


def test_subsheet_without_project_file_is_not_a_second_project():
    outcome = _run("v9/kicad_sch_api_reference_projects/sheet_pin_edges")
    assert [m.files.name for m in outcome.models] == ["sheet_pin_edges"]


def test_title_block_with_revision_and_date_is_clean():
    outcome = _run("v9/kicad_sch_api_reference_projects/sch_title")
    assert outcome.result["readiness"] == "ready" and outcome.result["score"] == 100


def test_stickhub_vias_below_generic_profile_but_fingerprints_are_stable():
    first = _run("v6/stickhub")
    second = _run("v6/stickhub")
    assert [f["fingerprint"] for f in first.result["findings"]] == [f["fingerprint"] for f in second.result["findings"]]
    assert "board.annular-ring" in _rules(first)


def test_kicad_default_rules_are_not_reported_below_fab():
    # complex_hierarchy keeps KiCad's default minimum via annular width (0.05 mm): the
    # designer never chose it, so it is not a finding against OSH Park's 0.127 mm.
    outcome = _run("v6/complex_hierarchy", profile="oshpark-2layer")
    assert outcome.models[0].pro["board"]["design_settings"]["rules"]["min_via_annular_width"] < 0.127
    assert [f.message for f in outcome.findings if f.rule_id == "rules.below-fab"] == []

"""The project's own KiCad settings (.kicad_pro) and the one verdict, on real fixtures."""
from __future__ import annotations

import json

import pytest

from checker import cli
from checker.project_settings import (DEFAULT_PIN_MAP, DRC_DEFAULTS, ERC_DEFAULTS, parse_exclusion,
                                      read_project_settings)
from checker.runner import RunOptions, check
from checker.sarif import to_sarif
from checker.verdict import headline, result_decision
from app.host.publication import check_run_output
from checker_fixtures import KICAD

# The edge line and the track KiCad 9 names in its copper_edge_clearance error (its default 0.5 mm).
EDGE = ("2f0c2a4e-0002-4000-8000-000000000001", "2f0c2a4e-0003-4000-8000-000000000002")
# Its only error: the crossing tracks have no pad, so KiCad gives them one net (no short).
ERRORS = ("copper_edge_clearance",)


def _run(folder, **kw):
    return check(RunOptions(path=folder, run_kicad_cli=False, **kw))


def _set_pro(folder, name, change):
    pro = folder / f"{name}.kicad_pro"
    data = json.loads(pro.read_text())
    change(data)
    pro.write_text(json.dumps(data, indent=2))


def test_a_new_kicad_9_projects_severities_are_the_defaults():
    pro = json.loads((KICAD / "v9/kicad_sch_api_reference_projects/blank_schematic/blank_schematic.kicad_pro")
                     .read_text())
    settings = read_project_settings(pro)
    assert {k: v for k, v in settings.erc_severities.items() if ERC_DEFAULTS.get(k) != v} == {}
    assert settings.pin_map == DEFAULT_PIN_MAP
    assert settings.pin_conflict("output", "output") == 2 and settings.pin_conflict("input", "passive") == 0
    assert DRC_DEFAULTS["clearance"] == "error" and DRC_DEFAULTS["track_dangling"] == "warning"


@pytest.mark.parametrize("domain, text, kicad_type, uuids, layer, x", [
    ("drc", "clearance|129540000|105410000|aaaa-1|bbbb-2", "clearance", {"aaaa-1", "bbbb-2"}, None, 129.54),
    ("drc", "copper_sliver|1000000|2000000|aaaa-1|In1.Cu", "copper_sliver", {"aaaa-1"}, "In1.Cu", 1.0),
    ("drc", "starved_thermal|0|0|aaaa-1|bbbb-2|B.Cu", "starved_thermal", {"aaaa-1", "bbbb-2"}, "B.Cu", 0.0),
    ("drc", "unconnected_items|5000000|0|F.Cu|2|aaaa-1|bbbb-2", "unconnected_items", {"aaaa-1", "bbbb-2"}, "F.Cu", 5.0),
    ("drc", "unconnected_items|5000000|0|aaaa-1|bbbb-2", "unconnected_items", {"aaaa-1", "bbbb-2"}, None, 5.0),
    ("drc", "via_dangling|0|0|aaaa-1|00000000-0000-0000-0000-000000000000", "via_dangling", {"aaaa-1"}, None, 0.0),
    ("erc", "pin_not_connected|1270000|0|aaaa-1|00000000-0000-0000-0000-000000000000|/s/|/s/|", "pin_not_connected",
     {"aaaa-1"}, None, 127.0),
])
def test_kicad_exclusion_strings_are_read_as_kicad_writes_them(domain, text, kicad_type, uuids, layer, x):
    exclusion = parse_exclusion(domain, [text, "checked by hand"])
    assert (exclusion.kicad_type, set(exclusion.uuids), exclusion.layer, exclusion.x, exclusion.comment) == (
        kicad_type, uuids, layer, x, "checked by hand")
    assert parse_exclusion(domain, text).text == text
    assert parse_exclusion(domain, 42) is None and parse_exclusion(domain, "no bars") is None


@pytest.mark.parametrize("level, readiness, severity", [("ignore", "at-risk", None), ("warning", "at-risk", "medium"),
                                                         ("error", "blocked", "error")])
def test_the_projects_rule_severities_decide_a_native_findings_severity(copy_project, level, readiness, severity):
    folder = copy_project("v9/kicad_bot_examples/drc-violation")
    _set_pro(folder, "drc-violation", lambda d: d["board"]["design_settings"].setdefault("rule_severities", {})
             .update({kicad_type: level for kicad_type in ERRORS}))
    outcome = _run(folder)
    errors = [f for f in outcome.findings if f.kicad_type in ERRORS]
    assert [f.severity for f in errors if f.kicad_type == "copper_edge_clearance"] == ([severity] if severity else [])
    assert {f.severity for f in errors} <= {severity}
    assert outcome.result["readiness"] == readiness


def test_an_exclusion_naming_the_items_excludes_the_finding_and_it_does_not_count(copy_project):
    folder = copy_project("v9/kicad_bot_examples/drc-violation")
    assert _run(folder).result["readiness"] == "blocked"
    edge = [f"copper_edge_clearance|10000000|0|{EDGE[0]}|{EDGE[1]}", "the track is a test coupon"]
    _set_pro(folder, "drc-violation", lambda d: d["board"]["design_settings"].update({"drc_exclusions": [edge]}))
    outcome = _run(folder)
    finding = next(f for f in outcome.findings if f.kicad_type == "copper_edge_clearance")
    assert finding.excluded and finding.severity == "info"      # as KiCad's "exclusion": no reader counts it
    assert outcome.result["readiness"] == "at-risk"            # the dangling tracks (warnings) are still there
    as_json = next(f for f in outcome.result["findings"] if f.get("kicadType") == "copper_edge_clearance")
    assert as_json["excluded"] is True and set(as_json["locations"][0]["uuids"]) == set(EDGE)
    sarif = next(r for r in to_sarif(outcome.result)["runs"][0]["results"] if r["ruleId"] == finding.rule_id)
    assert sarif["suppressions"][0]["justification"].startswith("excluded in the KiCad project")
    # Another item's exclusion covers nothing.
    edge[0] = edge[0].replace(EDGE[1], "2f0c2a4e-0003-4000-8000-00000000ffff")
    _set_pro(folder, "drc-violation", lambda d: d["board"]["design_settings"].update({"drc_exclusions": [edge]}))
    assert _run(folder).result["readiness"] == "blocked"


def test_imported_kicad_findings_keep_kicads_words_and_a_native_twin_is_one_finding():
    folder = KICAD / "v9/kicad_bot_examples/drc-violation"
    outcome = _run(folder, drc_report=folder / "kicad-drc.json", erc_report=folder / "kicad-erc.json")
    report = json.loads((folder / "kicad-drc.json").read_text())
    kicad = [f for f in outcome.findings if f.source == "kicad-drc"]
    assert all(f.rule_id == f"kicad.drc.{f.kicad_type}" for f in kicad)
    native = [f for f in outcome.findings if f.source == "boardready" and f.kicad_type]
    for violation in report["violations"] + report["unconnected_items"] + report["schematic_parity"]:
        uuids = {i["uuid"] for i in violation["items"]}
        imported = [f for f in kicad if f.kicad_type == violation["type"] and set(f.uuids) == uuids]
        twins = [f for f in native if f.kicad_type == violation["type"] and uuids & set(f.uuids)]
        # Reported once: by KiCad in its own words, or by the native finding that names its items.
        assert len(imported) + len(twins) == 1, violation
        assert all(f.message == violation["description"] for f in imported)
    sarif_ids = {r["ruleId"] for r in to_sarif(outcome.result)["runs"][0]["results"]}
    assert {f.rule_id for f in kicad} <= sarif_ids


def test_erc_positions_of_kicad_9_are_scaled_back_to_millimetres():
    folder = KICAD / "v6/ecc83"
    outcome = _run(folder / "ecc83-pp.kicad_pro", erc_report=folder / "ecc83-pp.kicad-erc.json")
    places = [loc for f in outcome.findings if f.source == "kicad-erc" for loc in f.locations if loc["x"] is not None]
    assert places and all(10 < loc["x"] < 300 and 10 < loc["y"] < 300 for loc in places)   # an A4 sheet


def test_a_finding_that_depends_on_the_machine_never_blocks(copy_project):
    folder = copy_project("v6/ecc83")
    (folder / ".boardready.toml").write_text('[severity]\n"sch.footprint-library-unknown" = "error"\n')
    outcome = _run(folder)
    unknown = [f for f in outcome.findings if f.rule_id == "sch.footprint-library-unknown"]
    assert unknown and {f.severity for f in unknown} == {"medium"}
    assert outcome.result["readiness"] == "at-risk"


def test_the_cli_fails_exactly_when_the_gate_would_and_says_the_check_runs_words(copy_project, capsys):
    folder = copy_project("v9/kicad_sch_api_reference_projects/blank_schematic")
    bom = folder / "bom.csv"
    bom.write_text("Reference,Value,MPN\nR99,1k,Y\n")        # a line the schematic does not have: high
    args = [str(folder), "--no-kicad-cli", "--bom", str(bom)]
    assert cli.main(args + ["--format", "json"]) == 1
    result = json.loads(capsys.readouterr().out)
    assert "bom.csv-mismatch" in {f["ruleId"] for f in result["findings"] if f["severity"] == "high"}
    assert result["readiness"] == "at-risk" and result_decision(result) == "FAIL"    # the gate fails a high finding
    assert cli.main(args + ["--fail-on", "blocked"]) == 0
    human = capsys.readouterr().out
    title = check_run_output({**result, "decision": result_decision(result), "tool_name": "t", "tool_version": "1"},
                             "https://review")["title"]
    assert title == headline("FAIL", result["score"]) and title in human and "(score 49)" in title


def test_kicads_own_library_findings_never_block_either(copy_project, tmp_path):
    folder = copy_project("v9/kicad_bot_examples/minimal")
    report = tmp_path / "erc.json"
    report.write_text(json.dumps({"kicad_version": "9.0.8", "sheets": [{"path": "/", "violations": [
        {"severity": "error", "type": "lib_symbol_issues", "description": "The symbol library was not found",
         "items": []}]}]}))
    outcome = _run(folder, erc_report=report)
    [finding] = [f for f in outcome.findings if f.source == "kicad-erc"]
    assert finding.rule_id == "kicad.erc.lib_symbol_issues" and finding.severity == "medium"
    assert outcome.result["readiness"] != "blocked"


def test_sarif_describes_an_imported_kicad_type_by_its_family(tmp_path):
    folder = KICAD / "v9/kicad_bot_examples/drc-violation"
    report = json.loads((folder / "kicad-drc.json").read_text())
    # A KiCad type the checker has no native twin for stays KiCad's own finding.
    report["violations"].append({"description": "Text height out of range", "severity": "warning",
                                 "type": "text_height", "items": [{"description": "Text", "pos": {"x": 1, "y": 1},
                                                                   "uuid": "2f0c2a4e-0009-4000-8000-000000000001"}]})
    (tmp_path / "drc.json").write_text(json.dumps(report))
    outcome = _run(folder, drc_report=tmp_path / "drc.json")
    rules = {r["id"]: r for r in to_sarif(outcome.result)["runs"][0]["tool"]["driver"]["rules"]}
    assert rules["kicad.drc.text_height"]["shortDescription"]["text"] == "KiCad DRC violation"


def test_a_project_that_never_set_an_edge_clearance_is_held_to_kicads_default(copy_project):
    folder = copy_project("v9/kicad_bot_examples/drc-violation")
    kicad = [v for v in json.loads((folder / "kicad-drc.json").read_text())["violations"]
             if v["type"] == "copper_edge_clearance"]
    assert "edge clearance 0.5000 mm" in kicad[0]["description"]
    [edge] = [f for f in _run(folder).findings if f.kicad_type == "copper_edge_clearance"]
    assert edge.severity == "error" and set(edge.uuids) == {i["uuid"] for i in kicad[0]["items"]}
    # The project's own value replaces the default; copper on the edge line collides even under
    # 0 mm (kicad-cli 9.0.8 still reports this track then), copper 0.3 mm inside it does not.
    _set_pro(folder, "drc-violation", lambda d: d["board"]["design_settings"]["rules"]
             .update({"min_copper_edge_clearance": 0.0}))
    [edge] = [f for f in _run(folder).findings if f.kicad_type == "copper_edge_clearance"]
    assert edge.severity == "error" and "on or over the board edge" in edge.message
    board = folder / "drc-violation.kicad_pcb"
    board.write_text(board.read_text().replace("(start 10 0)", "(start 10 0.425)"))
    assert not [f for f in _run(folder).findings if f.kicad_type == "copper_edge_clearance"]
    _set_pro(folder, "drc-violation", lambda d: d["board"]["design_settings"]["rules"].pop("min_copper_edge_clearance"))
    assert [f.kicad_type for f in _run(folder).findings if f.kicad_type == "copper_edge_clearance"] == [
        "copper_edge_clearance"]

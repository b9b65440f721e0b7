"""Never a traceback, never unbounded: real boards broken in hostile ways (tools/hostile_boards.py,
small sizes; bin/bench-hostile runs the full ones against the time and memory bounds) each get a
typed answer; a rule that fails costs that rule, blocks as "check incomplete" and exits 3; a rule
the project ignores does not run."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from checker import cli, geometry
from checker.ratsnest import tree_edges
from checker.rules import board_rules, footprint_rules
from checker.runner import RunOptions, check
from checker_fixtures import fixture_project
from tools.hostile_boards import mutate

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
CLEAN = FIXTURES / "kicad-planted/clean"          # ecc83-pp: two layers, zones, KiCad 6 format


def _answer(folder, capsys) -> tuple[int, dict]:
    code = cli.main([str(folder), "--format", "json", "--no-kicad-cli", "--fail-on", "gate"])
    out = capsys.readouterr()
    assert "Traceback" not in out.err
    return code, json.loads(out.out)


def _copy(tmp_path) -> Path:
    return Path(shutil.copytree(CLEAN, tmp_path / "clean", ignore=shutil.ignore_patterns("*.json", "*.rpt")))


def _broken(tmp_path, case: str, size: int | None = None):
    return mutate(CLEAN, case, tmp_path / case, size)


@pytest.mark.parametrize("case", ["ring3", "selfx", "degenerate", "huge", "zone"])
def test_malformed_geometry_is_checked(tmp_path, capsys, case):
    code, result = _answer(_broken(tmp_path, case, 3000 if case == "zone" else None), capsys)
    assert code in (0, 1) and result["readiness"] in ("ready", "at-risk", "blocked")
    assert not [f for f in result["findings"] if f["ruleId"] == "checker.rule-failed"]


def test_fill_of_three_points_near_the_edge_is_no_copper(tmp_path):
    # The real case: a fill ring of 3 coordinates stopped the edge-clearance rule in GEOS.
    # (kicad-cli 9.0.8 on it: zones_intersect and isolated_copper, no copper_edge_clearance.)
    outcome = check(RunOptions(path=_broken(tmp_path, "ring3"), run_kicad_cli=False))
    assert not [f for f in outcome.findings if f.rule_id in ("board.edge-clearance", "checker.rule-failed")]


def test_nan_and_infinite_coordinates_are_refused_as_kicad_refuses_the_board(tmp_path, capsys):
    # kicad-cli 9.0.8 on this board: "Failed to load board", exit 3.
    code, answer = _answer(_broken(tmp_path, "nan"), capsys)
    assert code == 3 and answer["code"] == "non_finite_coordinate"


def test_thousands_of_isolated_vias_are_one_missing_link_each(tmp_path):
    outcome = check(RunOptions(path=_broken(tmp_path, "vias", 400), run_kicad_cli=False))
    links = [f for f in outcome.findings if f.rule_id == "board.unconnected" and f.extra["nets"] == ["GND"]]
    # 400 vias, each an island of its own, joined with the net's routed copper: 400 links more.
    clean = check(RunOptions(path=CLEAN, run_kicad_cli=False))
    before = [f for f in clean.findings if f.rule_id == "board.unconnected" and f.extra["nets"] == ["GND"]]
    assert len(links) == len(before) + 400


def test_stacked_copper_beyond_the_pair_budget_is_refused(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(geometry, "PAIR_BUDGET", 20_000)    # 300 stacked segments: ~45,000 pairs
    code, answer = _answer(_broken(tmp_path, "segments", 300), capsys)
    assert code == 3 and answer["code"] == "copper_too_dense"


def test_stacked_copper_within_the_budget_is_checked(tmp_path, capsys):
    code, result = _answer(_broken(tmp_path, "segments", 300), capsys)
    assert code in (0, 1) and "readiness" in result


@pytest.mark.parametrize("case, size", [("toml-type", None), ("toml-deep", 5000)])
def test_hostile_config_is_a_typed_error(tmp_path, capsys, case, size):
    code, answer = _answer(_broken(tmp_path, case, size), capsys)
    assert code == 3 and answer["code"] == "malformed_config"


@pytest.mark.parametrize("text", ['severity = 3\n', 'profile = 3\n', '[severity]\n"board.clearance" = 3\n',
                                  'waivers = "x"\n', 'mpn_fields = {a = 1}\n',
                                  '[severity]\n"checker.rule-failed" = "info"\n'])
def test_config_of_the_wrong_type_is_a_typed_error(tmp_path, capsys, text):
    folder = _copy(tmp_path)
    (folder / ".boardready.toml").write_text(text)
    code, answer = _answer(folder, capsys)
    assert code == 3 and answer["code"] == "malformed_config"


def _explode(*_args, **_kwargs):
    raise ValueError("planted failure")


def test_a_failing_rule_blocks_as_incomplete_and_the_others_still_report(copy_project, capsys, monkeypatch):
    folder = copy_project("v9/kicad_bot_examples/drc-violation")
    whole = check(RunOptions(path=folder, run_kicad_cli=False)).findings
    monkeypatch.setattr(footprint_rules, "check", _explode)
    code, result = _answer(folder, capsys)
    assert code == 3                               # never 1: the gate did not fail, the check did not finish
    assert result["readiness"] == "blocked"
    failed = [f for f in result["findings"] if f["ruleId"] == "checker.rule-failed"]
    # footprint_type_mismatch is ignored by KiCad 9's default: not run, so it cannot fail.
    assert [f["message"].split()[0] for f in failed] == ["board.courtyards-overlap"]
    assert all(f["severity"] == "error" and "ValueError: planted failure" in f["message"] for f in failed)
    others = {f.fingerprint for f in whole if not f.rule_id.startswith(("board.courtyards", "board.footprint-type"))}
    assert others <= {f["fingerprint"] for f in result["findings"]}


def test_the_service_takes_an_incomplete_check_as_a_failed_gate(tmp_path, capsys, monkeypatch):
    from app.run_results import validate
    from checker.verdict import result_decision

    monkeypatch.setattr(footprint_rules, "check", _explode)
    code, result = _answer(_copy(tmp_path), capsys)
    assert code == 3
    accepted = validate(result)                    # the service's edge keeps the finding and the verdict
    assert accepted["readiness"] == "blocked" and result_decision(accepted) == "FAIL"
    assert "checker.rule-failed" in {f["ruleId"] for f in accepted["findings"]}


def test_a_failed_rule_cannot_be_waived(tmp_path, capsys, monkeypatch):
    folder = _copy(tmp_path)
    monkeypatch.setattr(footprint_rules, "check", _explode)
    _code, first = _answer(folder, capsys)
    prints = [f["fingerprint"] for f in first["findings"] if f["ruleId"] == "checker.rule-failed"]
    (folder / ".boardready.toml").write_text(f"[waivers]\nfingerprints = {json.dumps(prints)}\n")
    code, result = _answer(folder, capsys)
    assert code == 3 and result["readiness"] == "blocked"


def test_a_rule_the_project_ignores_does_not_run(tmp_path, monkeypatch):
    folder = _copy(tmp_path)
    pro = folder / "ecc83-pp.kicad_pro"
    settings = json.loads(pro.read_text())
    settings["board"]["design_settings"]["rule_severities"]["copper_edge_clearance"] = "ignore"
    pro.write_text(json.dumps(settings))
    monkeypatch.setattr(board_rules, "_edge_clearance", _explode)
    outcome = check(RunOptions(path=folder, run_kicad_cli=False))
    assert not [f for f in outcome.findings if f.rule_id == "checker.rule-failed"]


def test_a_rule_the_project_ignores_runs_for_the_fab_profile(tmp_path, monkeypatch):
    folder = _copy(tmp_path)
    pro = folder / "ecc83-pp.kicad_pro"
    settings = json.loads(pro.read_text())
    settings["board"]["design_settings"]["rule_severities"]["copper_edge_clearance"] = "ignore"
    pro.write_text(json.dumps(settings))
    (folder / ".boardready.toml").write_text('profile = "jlcpcb-2layer"\n')
    monkeypatch.setattr(board_rules, "_edge_clearance", _explode)
    outcome = check(RunOptions(path=folder, run_kicad_cli=False))
    assert [f.extra["rule"] for f in outcome.findings if f.rule_id == "checker.rule-failed"] == ["board.edge-clearance"]


def test_board_rule_findings_carry_the_kicad_types_the_skip_knows():
    # The skip (checker/isolation.py) drops a rule whose KiCad types are all ignored: every
    # finding a board rule makes must carry one of them, or none (beyond KiCad).
    from checker.isolation import kicad_types

    for project in (fixture_project("v9/kicad_bot_examples/drc-violation"), CLEAN,
                    FIXTURES / "kicad-planted/ecc83-track-over-edge", FIXTURES / "kicad-planted/narrow-track"):
        for finding in check(RunOptions(path=project, run_kicad_cli=False)).findings:
            types, _fab = kicad_types(finding.rule_id)
            if types and finding.kicad_type:
                assert finding.kicad_type in types, (project, finding.rule_id, finding.kicad_type)


def _dense_tree_length(points, island) -> float:
    count = island.max() + 1
    best = np.full((count, count), np.inf)
    for a in range(count):
        for b in range(a + 1, count):
            mine, theirs = np.flatnonzero(island == a), np.flatnonzero(island == b)
            gap = np.hypot(points[mine, None, 0] - points[None, theirs, 0], points[mine, None, 1] - points[None, theirs, 1])
            best[a, b] = best[b, a] = gap.min()
    joined, reach, total = np.zeros(count, bool), best[0].copy(), 0.0
    joined[0] = True
    for _ in range(count - 1):
        nearest = int(np.argmin(np.where(joined, np.inf, reach)))
        total += reach[nearest]
        joined[nearest] = True
        reach = np.minimum(reach, best[nearest])
    return total


def test_ratsnest_over_the_triangulation_is_the_minimum_tree():
    rng = np.random.default_rng(35)
    for trial in range(120):
        n = int(rng.integers(2, 50))
        k = int(rng.integers(2, min(n, 10) + 1))
        points = rng.integers(0, 6, size=(n, 2)).astype(float) if trial % 3 == 0 else rng.random((n, 2)) * 10
        if trial % 5 == 0:
            points[:, 1] = 2.0                      # collinear: no triangulation
        island = np.concatenate([np.arange(k), rng.integers(0, k, size=n - k)])
        edges = tree_edges(points, island)
        assert len(edges) == k - 1
        assert sum(e[2] for e in edges) == pytest.approx(_dense_tree_length(points, island), abs=1e-9)


def test_area_polygons_repairs_or_drops_outlines():
    assert geometry.area_polygons([(0, 0), (1, 0), (0, 0)]) == []
    assert geometry.area_polygons([(0, 0), (1, 1)]) == []
    assert len(geometry.area_polygons([(0, 0), (2, 2), (2, 0), (0, 2)])) == 2      # bow-tie: its two lobes
    fractured = [(0, 0), (10, 0), (10, 10), (0, 10), (0, 5), (3, 5), (3, 7), (7, 7), (7, 3), (3, 3), (3, 5), (0, 5)]
    (kept,) = geometry.area_polygons(fractured)                                    # a fill's slit is no damage
    assert kept.area == pytest.approx(100 - 16)


def test_custom_pad_polygon_of_under_three_points_is_its_stroke():
    from checker.board import Primitive
    from checker.copper import _primitive_shape

    stroke = _primitive_shape(Primitive(kind="poly", points=[(0, 0), (1, 0)], width=0.1, filled=True))
    assert stroke.area == pytest.approx(0.1 + 3.14159 * 0.05 ** 2, rel=0.01)
    assert _primitive_shape(Primitive(kind="poly", points=[(0, 0), (1, 0)], width=0, filled=True)) is None


def test_a_module_too_slow_to_rerun_rule_by_rule_fails_as_one(tmp_path, monkeypatch):
    from checker import isolation

    monkeypatch.setattr(isolation, "RERUN_BUDGET_S", 0.0)
    monkeypatch.setattr(footprint_rules, "check", _explode)
    outcome = check(RunOptions(path=_copy(tmp_path), run_kicad_cli=False))
    failed = [f for f in outcome.findings if f.rule_id == "checker.rule-failed"]
    assert [f.extra["rule"] for f in failed] == ["rules.board_rules"]
    assert outcome.result["readiness"] == "blocked"


def test_a_check_that_stops_outside_the_rules_is_a_blocked_result(tmp_path, capsys, monkeypatch):
    import checker.board

    monkeypatch.setattr(checker.board, "load_board", _explode)
    code, result = _answer(_copy(tmp_path), capsys)
    assert code == 3 and result["readiness"] == "blocked"
    (failed,) = result["findings"]
    assert failed["ruleId"] == "checker.rule-failed" and "ValueError: planted failure" in failed["message"]
    assert "test_never_a_traceback.py" not in failed["message"]        # where in the checker, not in the test

"""bin/drc-compare on the committed KiCad 9 reports (never runs kicad-cli here)."""
from __future__ import annotations

from checker_fixtures import FIXTURES
from tools import drc_compare, kicad_oracle


def test_planted_holes_too_close_are_matched_and_the_verdicts_agree():
    projects = kicad_oracle.find_projects([FIXTURES / "kicad-planted/hole-near-hole"])
    [result] = drc_compare.run(projects, cli=None)
    assert result.errors["hole_to_hole"] == 2 and result.matched["hole_to_hole"] == 2
    assert result.extra["hole_to_hole"] == 0
    assert result.source == "kicad-cli 9.0.8 (committed)"
    assert (result.kicad_verdict, result.checker_verdict) == ("blocked", "blocked")


def test_the_tables_name_every_type_and_project(capsys):
    folder = FIXTURES / "kicad/v9/kicad_bot_examples"
    assert drc_compare.main(["--no-kicad-cli", str(folder)]) == 0
    out = capsys.readouterr().out
    # KiCad 9's edge clearance error and dangling-track warnings, type by type.
    assert "| `copper_edge_clearance` | 1 | 0 |" in out and "| `track_dangling` | 0 | 2 | 2 | 0 |" in out
    assert "| `kicad/v9/kicad_bot_examples/minimal/minimal` | kicad-cli 9.0.8 (committed) | passes | ready | yes |" in out
    assert "Verdicts agreeing (blocked or not): 2 of 2" in out


def test_every_fixture_project_has_its_committed_kicad_reports():
    for project in kicad_oracle.find_projects([FIXTURES / "kicad", FIXTURES / "kicad-planted"]):
        if project.board is not None and project.name != "starter-board":   # KiCad 9 cannot load that one
            assert project.report("drc").is_file(), project
        if project.schematic is not None:
            assert project.report("erc").is_file(), project

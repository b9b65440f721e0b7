"""The run result's `bom` section: what the service tracks supply from."""
from __future__ import annotations

import dataclasses
import json
import pytest

from checker import cli
from checker.errors import BomTooLarge
from checker.limits import DEFAULT_LIMITS
from checker.runner import RunOptions, check
from checker_fixtures import KICAD
from contracts import run_result_validator
from tools import demo_board


def test_demo_board_bom_lines_carry_parts_and_locations(tmp_path):
    demo_board.write(tmp_path)
    result = check(RunOptions(path=tmp_path, run_kicad_cli=False)).result
    run_result_validator().validate(result)
    lines = {tuple(line["references"]): line for line in result["bom"]}
    assert set(lines) == {("R1",), ("D1",), ("J1",)}
    resistor = lines[("R1",)]
    assert resistor["mpn"] == "RC0603FR-07330RL" and resistor["quantity"] == 1 and resistor["dnp"] is False
    assert resistor["project"] == "hardware/blinky.kicad_pro"
    assert resistor["path"] == "hardware/blinky.kicad_sch" and resistor["line"] > 1
    assert "mpn" not in lines[("D1",)]     # a part without an MPN is listed, unkeyed


def test_real_project_groups_identical_parts():
    result = check(RunOptions(path=KICAD / "v6" / "stickhub", run_kicad_cli=False)).result
    run_result_validator().validate(result)
    by_mpn = {}
    for line in result["bom"]:
        if "mpn" in line:
            by_mpn.setdefault(line["mpn"], []).append(line)
        assert line["quantity"] == len(line["references"])
    capacitors = by_mpn["GRM188R61A226ME15D"]
    assert sum(line["quantity"] for line in capacitors) > 1
    references = [r for line in result["bom"] for r in line["references"]]
    assert len(references) == len(set(references))   # a multi-unit part is one entry


def test_cli_json_output_carries_the_bom(tmp_path, capsys):
    demo_board.write(tmp_path / "repo")
    code = cli.main([str(tmp_path / "repo"), "--format", "json", "--no-kicad-cli", "--fail-on", "never"])
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    assert len(out["bom"]) == 3


def test_bom_lines_are_bounded_by_the_row_guard(tmp_path):
    demo_board.write(tmp_path)
    limits = dataclasses.replace(DEFAULT_LIMITS, max_bom_rows=2)
    with pytest.raises(BomTooLarge):
        check(RunOptions(path=tmp_path, run_kicad_cli=False, limits=limits))

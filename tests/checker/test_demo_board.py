"""The demo board (tools/demo_board.py, in KiCad 10's format) as KiCad 10 sees it: its committed
kicad-cli 10.0.7 DRC (with schematic parity) and ERC reports find nothing, so
with kicad-cli installed bin/check reports what it reports without: the two
parts without a manufacturer part number, at risk. The reports are of exactly
this board (tests/fixtures/demo-board/README.md holds its digest)."""
from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

from checker.runner import RunOptions, check
from tools import demo_board

REPORTS = Path(__file__).resolve().parents[1] / "fixtures" / "demo-board"


def test_the_reports_are_of_this_board():
    digest = hashlib.sha256((demo_board.PRO + demo_board.schematic() + demo_board.board()).encode()).hexdigest()
    recorded = re.search(r"\b[0-9a-f]{64}\b", (REPORTS / "README.md").read_text()).group(0)
    assert digest == recorded, "the demo board changed: run kicad-cli again (tests/fixtures/demo-board/README.md)"


def test_kicad_finds_nothing_on_the_demo_board():
    drc = json.loads((REPORTS / "kicad10-drc.json").read_text())
    erc = json.loads((REPORTS / "kicad10-erc.json").read_text())
    assert drc["kicad_version"].startswith("10.")
    assert drc["violations"] == drc["unconnected_items"] == drc["schematic_parity"] == []
    assert [v for sheet in erc["sheets"] for v in sheet["violations"]] == []


def test_with_kicad_reports_the_demo_stays_at_risk_for_its_part_numbers(tmp_path):
    demo_board.write(tmp_path)
    without = check(RunOptions(path=tmp_path, run_kicad_cli=False)).result
    with_kicad = check(RunOptions(path=tmp_path, run_kicad_cli=False, drc_report=REPORTS / "kicad10-drc.json",
                                  erc_report=REPORTS / "kicad10-erc.json")).result
    for result in (without, with_kicad):
        assert result["readiness"] == "at-risk"
        assert sorted(f["ruleId"] for f in result["findings"]) == ["bom.mpn-missing", "bom.mpn-missing"]


def test_the_demo_board_is_in_kicad10s_format_and_read_natively(tmp_path):
    demo_board.write(tmp_path)
    board = (tmp_path / "hardware" / "blinky.kicad_pcb").read_text()
    assert "(version 20260206)" in board and '(net "/VIN")' in board and "(net 0 " not in board
    result = check(RunOptions(path=tmp_path, run_kicad_cli=False)).result
    assert not [f for f in result["findings"] if f["ruleId"].startswith(("format.", "board.", "parity."))]

"""KiCad 10's files read natively and judged as KiCad 10 judges them.

tests/fixtures/kicad10 holds the fixture projects saved by kicad-cli 10.0.7 (``bin/kicad-oracle
--kicad-cli 'chroot /opt/kicad10-sid kicad-cli' --upgrade-into tests/fixtures/kicad10
tests/fixtures/kicad tests/fixtures/kicad-multilayer``) with KiCad 10's own reports beside them
(``kicad10-drc.json``, ``kicad10-erc.json``); these tests read the reports and never run KiCad,
but for the last, which runs kicad-cli 10 when its chroot is there and says why it skips when not.
"""
from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from checker_fixtures import FIXTURES

from checker.board import load_board
from checker.limits import DEFAULT_LIMITS
from checker.project import InputReader
from checker.runner import RunOptions, check
from checker.versions import is_too_new, major_for
from tools import drc_compare, erc_compare, kicad_oracle
from tools.kicad_drc import KicadCli

KICAD10 = FIXTURES / "kicad10"
PROJECTS = [p for p in kicad_oracle.find_projects([KICAD10])]
CHROOT = Path("/opt/kicad10-sid")


def _target(project: kicad_oracle.KicadProject) -> Path:
    pro = project.folder / f"{project.name}.kicad_pro"
    return pro if pro.exists() else project.folder


def test_kicad10s_format_versions_are_kicad_10_and_not_too_new():
    # kicad-cli 10.0.7 writes these; KiCad's sources start 10.0 at 20250210 (board), 20250222 (schematic).
    assert major_for("board", 20260206) == 10 and major_for("schematic", 20260306) == 10
    assert major_for("board", 20241229) == 9 and major_for("schematic", 20250114) == 9
    assert not is_too_new("board", 20260206) and not is_too_new("schematic", 20260306)
    assert is_too_new("board", 20270110) and is_too_new("schematic", 20270110)


@pytest.mark.parametrize("project", PROJECTS, ids=lambda p: f"{p.folder.relative_to(KICAD10)}/{p.name}")
def test_every_kicad10_fixture_is_read_natively(project):
    # Every file but two was saved by KiCad 10: kicad-cli 10.0.7 cannot load fabgate's board (written
    # by another tool) nor coldfire's root sheet (French sheet field names), left as they were.
    outcome = check(RunOptions(path=_target(project), root=project.folder, run_kicad_cli=False))
    rules = {f.rule_id for f in outcome.findings}
    assert "format.too-new" not in rules and "checker.rule-failed" not in rules
    if project.board is not None and project.name != "starter-board":
        assert project.board.read_text(encoding="utf-8").split("(version ", 1)[1][:8] == "20260206"


def test_a_kicad10_board_names_its_nets_where_it_uses_them():
    board_file = KICAD10 / "kicad/v6/ecc83/ecc83-pp.kicad_pcb"
    text = board_file.read_text(encoding="utf-8")
    assert '(net "GND")' in text and "(net 1 " not in text        # KiCad 10 writes no net table
    board = load_board(board_file, InputReader(board_file.parent, DEFAULT_LIMITS))
    assert {"GND", "Net-(C1-Pad1)"} <= set(board.nets.values())
    assert {zone.net for zone in board.zones} == {"GND"}


def test_a_kicad10_zone_fill_is_the_copper_itself():
    # KiCad 7+ write no (filled_areas_thickness): the fill is the copper. Read as KiCad 5's pen-drawn
    # fill, ecc83's GND pour grew by half its 0.381 mm min_thickness: 58 clearance places KiCad 10
    # does not report.
    project = KICAD10 / "kicad/v6/ecc83/ecc83-pp.kicad_pro"
    outcome = check(RunOptions(path=project, root=project.parent, run_kicad_cli=False))
    report = json.loads((project.parent / "ecc83-pp.kicad10-drc.json").read_text(encoding="utf-8"))
    assert not [v for v in report["violations"] if v["type"] == "clearance"]
    assert not [f for f in outcome.findings if f.rule_id == "board.clearance"]


def test_kicad10s_drc_verdicts_and_errors_agree():
    results = drc_compare.run(kicad_oracle.find_projects([KICAD10]), cli=None, release=10)
    assert len(results) == 11            # fabgate's board and coldfire's schematic KiCad 10 cannot load
    for result in results:
        assert result.source == "kicad-cli 10.0.7 (committed)"
        assert (result.kicad_verdict == "blocked") == (result.checker_verdict == "blocked"), result.project
    errors = sum(sum(r.errors.values()) for r in results)
    found = sum(min(r.matched[k], r.errors[k]) for r in results for k in r.errors)
    assert errors >= 20 and found / errors >= 0.9


def test_a_label_on_one_pin_is_kicad10s_isolated_pin_label_and_kicad9s_label_dangling():
    # kicad-cli 10.0.7 reports 33 isolated_pin_label (warnings) on `electric`, kicad-cli 9.0.8 33
    # label_dangling (errors) on the same project as KiCad 6 saved it.
    for folder, release, kind in ((KICAD10 / "kicad/v6/electric", 10, "isolated_pin_label"),
                                  (FIXTURES / "kicad/v6/electric", 9, "label_dangling")):
        pro = folder / "electric.kicad_pro"
        report = json.loads(erc_compare.report_for(pro, release).read_text(encoding="utf-8"))
        kicad = [v for v in erc_compare.read_violations(report) if v.type in ("isolated_pin_label", "label_dangling")]
        assert {v.type for v in kicad} == {kind} and len(kicad) == 33
        result = erc_compare.compare(pro, erc_compare.read_violations(report))
        assert result.matched[kind] == 33 and not [f for f in result.extra if "label" in f.kicad_type]


def test_a_chroots_kicad_cli_sees_its_files_under_the_chroot(tmp_path):
    cli = KicadCli(("chroot", str(tmp_path), "kicad-cli"), tmp_path)
    assert KicadCli.parse(f"chroot {tmp_path} kicad-cli") == cli
    with cli.scratch("t-") as scratch:
        assert Path(scratch).parent == tmp_path / "tmp"
        board = Path(scratch) / "b.kicad_pcb"
        assert cli.command("pcb", "drc", board) == ["chroot", str(tmp_path), "kicad-cli", "pcb", "drc",
                                                    f"/tmp/{Path(scratch).name}/b.kicad_pcb"]
    with pytest.raises(ValueError):
        cli.seen(FIXTURES)
    assert kicad_oracle.KicadProject(tmp_path, "p", None, None, False).report("drc", 10).name == "kicad10-drc.json"
    assert kicad_oracle.KicadProject(tmp_path, "p", None, None, True).report("erc", 9).name == "p.kicad-erc.json"


@pytest.mark.skipif(shutil.which("chroot") is None or not (CHROOT / "usr/bin/kicad-cli").exists(),
                    reason=f"kicad-cli 10 is not installed in {CHROOT} (docs/kicad-oracles.md has the recipe)")
def test_kicad_cli_10_live_agrees_with_its_committed_report():
    cli = KicadCli.parse(f"chroot {CHROOT} kicad-cli")
    assert cli.major() == 10
    [project] = kicad_oracle.find_projects([KICAD10 / "kicad/v9/kicad_bot_examples/drc-violation"])
    [result] = drc_compare.run([project], cli=cli, release=10)
    assert result.source == "kicad-cli 10.0.7 (live)"
    assert (result.kicad_verdict, result.checker_verdict) == ("blocked", "blocked")
    assert not result.missed and not result.extra


def test_a_kicad_cli_older_than_the_files_is_not_run():
    # kicad-cli 9.0.8 exits 3 on a KiCad 10 board ("Failed to load board"): the checker says so once,
    # at info, as when kicad-cli is absent, instead of a blocking "unverified".
    from types import SimpleNamespace

    from checker import kicad_reports

    model = SimpleNamespace(board=SimpleNamespace(version=20260206), schematic=SimpleNamespace(versions={"a": 20260306}))
    assert "saved by KiCad 10" in kicad_reports.too_old_for(kicad_reports.KicadCli("kicad-cli", "9.0.8"), model)
    assert kicad_reports.too_old_for(kicad_reports.KicadCli("kicad-cli", "10.0.7"), model) is None
    model.board.version, model.schematic.versions = 20241229, {"a": 20250114}
    assert kicad_reports.too_old_for(kicad_reports.KicadCli("kicad-cli", "9.0.8"), model) is None


def test_a_pin_named_tilde_before_20250318_is_unnamed_as_kicad10_saves_it():
    # KiCad 10 saves sallen_key's "~" pin names (KiCad 6 files) as ""; its library, older, still says
    # "~", which before format 20250318 means no name: kicad-cli 10.0.7 finds no mismatch, nor may we.
    pro = KICAD10 / "kicad/v6/simulation/sallen_key/sallen_key.kicad_pro"
    outcome = check(RunOptions(path=pro, root=pro.parent, run_kicad_cli=False))
    mismatched = {f.message.split("'")[1] for f in outcome.findings if f.rule_id == "erc.lib-symbol-mismatch"}
    assert not mismatched & {"R", "C"}


_ONE_PAD_ONE_HOLE = """(kicad_pcb
	(version 20260206)
	(generator "pcbnew")
	(generator_version "10.0")
	(general (thickness 1.6))
	(paper "A4")
	(layers (0 "F.Cu" signal) (2 "B.Cu" signal) (25 "Edge.Cuts" user))
	(setup (pad_to_mask_clearance 0))
	(footprint "Connector:Test" (layer "F.Cu") (uuid "00000000-0000-0000-0000-0000000000f0") (at 30 30 90)
		(property "Reference" "J1" (at 0 -3 0) (layer "F.Fab") (uuid "00000000-0000-0000-0000-0000000000f1"))
		(attr smd)
		(pad "3" smd roundrect (at -21.59 2.85 180) (size 2 1.02) (layers "F.Cu" "F.Mask" "F.Paste")
			(roundrect_rratio 0.1) (net "A") (uuid "00000000-0000-0000-0000-0000000000f3"))
		(pad "" np_thru_hole circle (at -21.59 1.27 90) (size 1.02 1.02) (drill 1.02) (layers "*.Cu" "*.Mask")
			(uuid "00000000-0000-0000-0000-0000000000f4"))
	)
	(gr_rect (start 0 0) (end 60 60) (stroke (width 0.1) (type default)) (fill no) (layer "Edge.Cuts")
		(uuid "00000000-0000-0000-0000-0000000000e1"))
)
"""


def test_a_kicad10_board_tests_a_hole_against_its_own_footprints_pads(tmp_path):
    # A connector's pad 0.07 mm from the connector's own NPTH hole (the corpus's caravel breakout's
    # CON2 pad 3, redrawn): kicad-cli 10.0.7 reports hole_clearance, "actual 0.0700 mm".
    (tmp_path / "j.kicad_pcb").write_text(_ONE_PAD_ONE_HOLE, encoding="utf-8")
    outcome = check(RunOptions(path=tmp_path, run_kicad_cli=False))
    [finding] = [f for f in outcome.findings if f.kicad_type == "hole_clearance"]
    assert "0.07 mm" in finding.message and finding.severity == "error"


def test_a_kicad10_mounting_holes_pads_of_one_number_are_one_pad(tmp_path):
    # A mounting hole drawn as an NPTH pad "1" with a copper ring pad "1" round it (the corpus's
    # bms-c1 H2): one pad to KiCad, which reports nothing; the hole is not tested against its ring.
    board = _ONE_PAD_ONE_HOLE.replace('(pad "3" smd roundrect (at -21.59 2.85 180) (size 2 1.02)',
                                      '(pad "1" smd circle (at -21.59 1.27 90) (size 3 3)')
    board = board.replace('(pad "" np_thru_hole', '(pad "1" np_thru_hole')
    (tmp_path / "h.kicad_pcb").write_text(board, encoding="utf-8")
    outcome = check(RunOptions(path=tmp_path, run_kicad_cli=False))
    assert not [f for f in outcome.findings if f.kicad_type == "hole_clearance"]


def _block(text: str, start: int) -> str:
    """The balanced s-expression of ``text`` starting at ``start`` (strings skipped)."""
    depth, i = 0, start
    while i < len(text):
        if text[i] == '"':
            i = text.index('"', i + 1)
            while text[i - 1] == "\\":
                i = text.index('"', i + 1)
        elif text[i] == "(":
            depth += 1
        elif text[i] == ")":
            depth -= 1
            if depth == 0:
                return text[start:i + 1]
        i += 1
    raise ValueError("unbalanced")


def test_kicad10_marks_the_power_symbols_pin_of_an_undriven_power_net(tmp_path):
    # multi_unit_7400 as KiCad 10 saved it, with a GND power symbol whose pin is hidden (as older
    # power libraries draw it) placed on U1's GND pin. kicad-cli 10.0.7 marks "#PWR02 Hidden pin 1"
    # (KiCad 9 would mark U1's visible pin 7); the checker marks the pin of the release that wrote the file.

    folder = KICAD10 / "kicad/v9/kicad_sch_api_reference_projects"
    base = (folder / "multi_unit_7400/multi_unit_7400.kicad_sch").read_text(encoding="utf-8")
    power = (folder / "power_symbols/power_symbols.kicad_sch").read_text(encoding="utf-8")
    library = _block(power, power.index('(symbol "power:GND"')).replace("(pin power_in line",
                                                                        "(pin power_in line (hide yes)", 1)
    symbol = _block(power, power.rindex("(symbol", 0, power.index('(lib_id "power:GND")')))
    root, power_root = (re.search(r'\(uuid "([^"]+)"\)', t).group(1) for t in (base, power))
    symbol = (symbol.replace("(at 154.94 69.85 0)", "(at 111.76 124.46 0)", 1).replace(power_root, root)
              .replace('(project "power_symbols"', '(project "multi_unit_7400"'))
    text = base.replace("(lib_symbols", "(lib_symbols\n" + library, 1)
    (tmp_path / "multi_unit_7400.kicad_sch").write_text(text[:text.rindex(")")] + symbol + "\n)\n", encoding="utf-8")
    shutil.copy(folder / "multi_unit_7400/multi_unit_7400.kicad_pro", tmp_path)
    outcome = check(RunOptions(path=tmp_path / "multi_unit_7400.kicad_pro", root=tmp_path, run_kicad_cli=False))
    marked = sorted(f.message.split(": ", 1)[1] for f in outcome.findings if f.rule_id == "erc.power-pin-not-driven")
    assert marked == ["#PWR02 pin 1 [Power input] (sheet /)", "U1 pin 14 (VCC) [Power input] (sheet /)"]


def test_kicad10s_default_minimum_track_width_is_0_2_mm(tmp_path):
    # A board without a project file: kicad-cli 10.0.7 holds its 0.15 mm track to "board setup
    # constraints min width 0.2000 mm"; kicad-cli 9.0.8 (default 0) reports nothing of the same board
    # in KiCad 9's format.
    track = '(segment (start 5 5) (end 15 5) (width 0.15) (layer "F.Cu") {net} (uuid "00000000-0000-0000-0000-0000000000a1"))'
    kicad10 = _ONE_PAD_ONE_HOLE.split("\t(footprint")[0] + "\t" + track.format(net='(net "A")') + "\n)\n"
    kicad9 = (kicad10.replace("(version 20260206)", "(version 20241229)").replace('(net "A")', "(net 1)")
              .replace("(setup (pad_to_mask_clearance 0))", '(setup (pad_to_mask_clearance 0))\n\t(net 0 "")\n\t(net 1 "A")'))
    widths = {}
    for name, text in (("10", kicad10), ("9", kicad9)):
        folder = tmp_path / name
        folder.mkdir()
        (folder / "t.kicad_pcb").write_text(text, encoding="utf-8")
        outcome = check(RunOptions(path=folder, run_kicad_cli=False))
        widths[name] = [f.message for f in outcome.findings if f.rule_id == "board.track-width"]
    assert len(widths["10"]) == 1 and "0.2 mm" in widths["10"][0] and widths["9"] == []


def test_a_kicad10_buried_via_spans_only_its_layers(tmp_path):
    # KiCad 10's parser reads (via buried ...) since board format 20250926 (blind, buried and
    # through split); read as a through via it would be copper on every layer.
    text = _ONE_PAD_ONE_HOLE.split("\t(footprint")[0] + (
        '\t(via buried (at 5 5) (size 0.6) (drill 0.3) (layers "In1.Cu" "In2.Cu") (net "A")'
        ' (uuid "00000000-0000-0000-0000-0000000000b1"))\n)\n')
    (tmp_path / "v.kicad_pcb").write_text(text, encoding="utf-8")
    board = load_board(tmp_path / "v.kicad_pcb", InputReader(tmp_path, DEFAULT_LIMITS))
    assert [(via.via_type, via.layers) for via in board.vias] == [("blind", ["In1.Cu", "In2.Cu"])]


def test_kicad10s_floating_global_label_is_label_dangling(tmp_path):
    # The corpus cut of BlueSCSI's root sheet: kicad-cli 9.0.8 reports its floating global labels as
    # global_label_dangling (warnings), kicad-cli 10.0.7 as label_dangling (errors, "Label not
    # connected") and its one-pin ones as isolated_pin_label. The same sheet stamped as KiCad 10's
    # is judged as KiCad 10 judges it.
    cut = FIXTURES / "kicad-corpus-cuts/erc-global-label-floating"
    shutil.copytree(cut, tmp_path / "cut")
    sheet = tmp_path / "cut/Desktop_50_Pin_TopConn.kicad_sch"
    sheet.write_text(re.sub(r"\(version \d+\)", "(version 20260306)", sheet.read_text(encoding="utf-8"), count=1),
                     encoding="utf-8")
    report = json.loads((cut / "kicad10-erc.json").read_text(encoding="utf-8"))
    kicad = [v for v in erc_compare.read_violations(report) if "label" in v.type]
    result = erc_compare.compare(tmp_path / "cut/Desktop_50_Pin_TopConn.kicad_pro", kicad)
    assert result.kicad == {"label_dangling": 9, "isolated_pin_label": 11}
    assert result.matched == result.kicad and not [f for f in result.extra if "label" in f.kicad_type]

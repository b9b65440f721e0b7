"""Each guard refuses its hostile input with its typed error, and the CLI exits 3."""
from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from checker import cli, project
from checker.errors import (BomTooLarge, HostileInputError, InputTooLarge, NestingTooDeep, NotRegularFile,
                            PathEscape, SheetCycle, SymlinkEscape, TooManySheetInstances, InvalidUtf8, NulByte)
from checker.runner import RunOptions, check
from checker_fixtures import KICAD

SHEET = """  (sheet (at 10 10) (size 10 10) (uuid {uuid})
    (property "Sheet name" "{name}" (id 0) (at 0 0 0))
    (property "Sheet file" "{file}" (id 1) (at 0 0 0)))
"""


def _schematic(sheets: list[tuple[str, str]], uuid: str = "00000000-0000-0000-0000-000000000001") -> str:
    body = "".join(SHEET.format(uuid=f"{i:08x}-0000-0000-0000-000000000000", name=n, file=f) for i, (n, f) in enumerate(sheets))
    return f"(kicad_sch (version 20211123) (generator eeschema)\n  (uuid {uuid})\n{body})\n"


def _run(path: Path, **kw):
    return check(RunOptions(path=path, run_kicad_cli=False, **kw))


def test_65_mib_board_is_refused_before_it_is_read(tmp_path, monkeypatch):
    shutil.copy(KICAD / "v9/kicad_bot_examples/drc-violation/drc-violation.kicad_pro", tmp_path / "big.kicad_pro")
    big = tmp_path / "big.kicad_pcb"
    with open(big, "wb") as handle:
        handle.truncate(65 * 1024 * 1024)   # sparse: costs no disk, but stat says 65 MiB
    opened: list[str] = []
    real_read = project._bounded_read
    monkeypatch.setattr(project, "_bounded_read", lambda p, limit, shown: opened.append(str(p)) or real_read(p, limit, shown))
    with pytest.raises(InputTooLarge) as caught:
        _run(tmp_path)
    assert caught.value.code == "input_too_large"
    assert opened == []  # refused on sizes alone: not even the .kicad_pro was read


def test_5001_sheet_instances_made_by_reuse_are_refused(tmp_path):
    # Each level uses the next level's file twice: 2 + 4 + ... instances, past 5000 at level 12.
    levels = 13
    for level in range(levels):
        sheets = [] if level == levels - 1 else [(f"a{level}", f"level{level + 1}.kicad_sch"),
                                                  (f"b{level}", f"level{level + 1}.kicad_sch")]
        name = "deep.kicad_sch" if level == 0 else f"level{level}.kicad_sch"
        (tmp_path / name).write_text(_schematic(sheets))
    with pytest.raises(TooManySheetInstances) as caught:
        _run(tmp_path)
    assert caught.value.code == "too_many_sheet_instances"


def test_100001_row_bom_is_refused_while_streaming(copy_project):
    folder = copy_project("v9/kicad_sch_api_reference_projects/two_resistors")
    bom = folder / "bom.csv"
    with open(bom, "w") as handle:
        handle.write("Reference,Value,Footprint,MPN\n")
        for n in range(100_001):
            handle.write(f"R{n},10k,Resistor_SMD:R_0603_1608Metric,RC0603\n")
    with pytest.raises(BomTooLarge) as caught:
        _run(folder, bom=bom)
    assert caught.value.line == 100_002


def test_deep_nesting_in_a_schematic_is_refused(tmp_path):
    depth = 20_000
    (tmp_path / "nest.kicad_sch").write_text("(kicad_sch " + "(a " * depth + ")" * (depth + 1))
    with pytest.raises(NestingTooDeep):
        _run(tmp_path)


def test_sheet_cycle_is_refused(tmp_path):
    (tmp_path / "loop.kicad_sch").write_text(_schematic([("child", "child.kicad_sch")]))
    (tmp_path / "child.kicad_sch").write_text(_schematic([("back", "loop.kicad_sch")]))
    with pytest.raises(SheetCycle):
        _run(tmp_path)


@pytest.mark.parametrize("sheet_file", ["../outside.kicad_sch", "/etc/passwd", "sub/../../x.kicad_sch"])
def test_sheet_paths_escaping_the_project_are_refused(tmp_path, sheet_file):
    folder = tmp_path / "proj"
    folder.mkdir()
    (tmp_path / "outside.kicad_sch").write_text(_schematic([]))
    (folder / "root.kicad_sch").write_text(_schematic([("evil", sheet_file)]))
    with pytest.raises(PathEscape):
        _run(folder)


def test_symlink_leaving_the_project_is_refused(tmp_path):
    folder = tmp_path / "proj"
    folder.mkdir()
    secret = tmp_path / "secret.kicad_sch"
    secret.write_text(_schematic([]))
    (folder / "root.kicad_sch").write_text(_schematic([("s", "linked.kicad_sch")]))
    os.symlink(secret, folder / "linked.kicad_sch")
    with pytest.raises(SymlinkEscape):
        _run(folder)


def test_non_regular_file_is_refused(tmp_path):
    (tmp_path / "root.kicad_sch").write_text(_schematic([("s", "pipe.kicad_sch")]))
    os.mkfifo(tmp_path / "pipe.kicad_sch")
    with pytest.raises(NotRegularFile):
        _run(tmp_path)


def test_nul_bytes_and_invalid_utf8_are_refused(copy_project):
    folder = copy_project("v9/kicad_bot_examples/drc-violation")
    board = folder / "drc-violation.kicad_pcb"
    original = board.read_bytes()
    board.write_bytes(original.replace(b"NET_A", b"NET\x00A", 1))
    with pytest.raises(NulByte):
        _run(folder)
    board.write_bytes(original.replace(b"NET_A", b"NET\xc3A", 1))
    with pytest.raises(InvalidUtf8):
        _run(folder)


def test_every_refusal_is_one_hostile_input_error_with_a_code():
    for error in (InputTooLarge, TooManySheetInstances, BomTooLarge, NestingTooDeep, SheetCycle, PathEscape,
                  SymlinkEscape, NotRegularFile, NulByte, InvalidUtf8):
        assert issubclass(error, HostileInputError)
        assert error.code != HostileInputError.code


def test_cli_exits_3_with_the_code_in_json(tmp_path, capsys):
    (tmp_path / "loop.kicad_sch").write_text(_schematic([("self", "loop.kicad_sch")]))
    assert cli.main([str(tmp_path), "--format", "json", "--no-kicad-cli"]) == 3
    assert '"code": "sheet_cycle"' in capsys.readouterr().out


_BOARD = (KICAD / "v9/kicad_bot_examples/drc-violation/drc-violation.kicad_pcb").read_bytes()
_SCH = (KICAD / "v6/complex_hierarchy/complex_hierarchy.kicad_sch").read_bytes()[:20000]


def test_lists_where_numbers_belong_are_read_as_missing_numbers(tmp_path):
    # (start (x) 1 2): a list where a coordinate belongs once made float() raise TypeError.
    (tmp_path / "f.kicad_pcb").write_text(
        '(kicad_pcb (version 20211014) (generator pcbnew)\n'
        '  (layers (0 "F.Cu" signal) (31 "B.Cu" signal) (44 "Edge.Cuts" user))\n  (net 0 "")\n'
        '  (segment (start (x) 1 2) (end 3 4) (width 0.25) (layer "F.Cu") (net 0) (tstamp 1))\n'
        '  (segment (start 1 2) (end 3 4) (width (w)) (layer "F.Cu") (net 0) (tstamp 2))\n'
        '  (via (at (x) 1) (size 0.6) (drill (d)) (layers "F.Cu" "B.Cu") (net 0) (tstamp 3)))\n')
    from contracts import run_result_validator
    outcome = _run(tmp_path)
    assert list(run_result_validator().iter_errors(outcome.result)) == []


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(which=st.sampled_from(["board", "schematic"]),
       edits=st.lists(st.tuples(st.floats(0, 1), st.integers(0, 30),
                                st.sampled_from([b"(", b")", b'"', b"", b"(sheet (property \"Sheet file\" \"../x\" (id 1)))",
                                                 b"(footprint \"\" (layer F.Cu))", b"(segment (start a b))",
                                                 b"\xff", b"(version 99999999)", b"(gr_line (start 1 1))"])),
                      min_size=1, max_size=5))
def test_mutated_projects_raise_only_typed_errors(tmp_path_factory, which, edits):
    folder = tmp_path_factory.mktemp("fuzz")
    data = bytearray(_BOARD if which == "board" else _SCH)
    for where, cut, insert in edits:
        position = int(where * (len(data) - 1))
        data[position:position + cut] = insert
    (folder / ("f.kicad_pcb" if which == "board" else "f.kicad_sch")).write_bytes(bytes(data))
    try:
        outcome = _run(folder)
    except HostileInputError:
        return
    from contracts import run_result_validator
    assert list(run_result_validator().iter_errors(outcome.result)) == []


@pytest.mark.parametrize("version", ["\u00b2\u00b3", "\uff12\uff10\uff12\uff11"])
def test_a_file_version_of_unicode_digits_is_no_version_not_a_crash(tmp_path, version):
    """str.isdigit() admits these and int() refuses them."""
    shutil.copytree(KICAD / "v6/ecc83", tmp_path, dirs_exist_ok=True)
    board = tmp_path / "ecc83-pp.kicad_pcb"
    text = board.read_text(encoding="utf-8")
    start = text.index("(version ") + len("(version ")
    board.write_text(text[:start] + version + text[text.index(")", start):], encoding="utf-8")
    _run(tmp_path / "ecc83-pp.kicad_pro")   # ran to a report; the version reads as unknown

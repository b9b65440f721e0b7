"""The fabrication package (checker/fab_package.py): made by kicad-cli, checked with
gerbonara (an independent reader), signed as a release record's subjects and verified
by boardready-verify. Skipped, with the reason, where kicad-cli is absent."""
from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from app import attestation
from checker import fab_package
from checker.board import load_board
from checker.project import InputReader
from checker.verify import main as boardready_verify

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
BOARD = FIXTURES / "kicad-diff" / "base" / "ecc83-pp.kicad_pcb"
WITH_A_VIA_MORE = FIXTURES / "kicad-diff" / "head" / "ecc83-pp.kicad_pcb"
KICAD_CLI = shutil.which("kicad-cli")

pytestmark = pytest.mark.skipif(KICAD_CLI is None, reason="kicad-cli is not installed: the package is KiCad's export")


def _board(path: Path):
    return load_board(path, InputReader(path.parent))


@pytest.fixture(scope="module")
def package(tmp_path_factory):
    out = tmp_path_factory.mktemp("fab") / "package"
    manifest = fab_package.make_package(BOARD, _board(BOARD), out, KICAD_CLI)
    return out, manifest


def test_the_package_holds_every_output_with_its_manifest_and_an_independent_reader_accepts_it(package):
    out, manifest = package
    names = {f["path"] for f in manifest["files"]}
    assert {"gerbers/ecc83-pp-top_cu.gbr", "gerbers/ecc83-pp-bottom_cu.gbr", "gerbers/ecc83-pp-Edge_Cuts.gbr",
            "gerbers/ecc83-pp-job.gbrjob", "drill/ecc83-pp.drl", "drill/ecc83-pp-drl_map.gbr",
            "assembly/pick-and-place.csv", "ipc2581.xml"} <= names
    for entry in manifest["files"]:
        data = (out / entry["path"]).read_bytes()
        assert entry["size"] == len(data) and entry["sha256"] == hashlib.sha256(data).hexdigest()
    assert json.loads((out / fab_package.MANIFEST).read_text()) == manifest
    assert fab_package.check_package(out, _board(BOARD)) == []


def test_a_missing_copper_gerber_and_a_hole_more_on_the_board_are_refused(package, tmp_path):
    out, _ = package
    broken = tmp_path / "broken"
    shutil.copytree(out, broken)
    (broken / "gerbers" / "ecc83-pp-bottom_cu.gbr").unlink()
    assert fab_package.check_package(broken, _board(BOARD)) == ["no Gerber for copper layer(s) B.Cu"]
    # The head of kicad-diff has one via more than the package was made from.
    [problem] = fab_package.check_package(out, _board(WITH_A_VIA_MORE))
    assert problem == "the drill files have 33 hits, the board 34 holes"


def test_an_outline_moved_by_more_than_the_tolerance_is_refused(package, tmp_path):
    out, _ = package
    moved = tmp_path / "moved"
    shutil.copytree(out, moved)
    board = _board(BOARD)
    for edge in board.edges:
        edge.points = [(x + 0.02, y) for x, y in edge.points]
    [problem] = fab_package.check_package(moved, board)
    assert problem.startswith("the outline's extent (121.285, 90.17, 173.355, 136.525) differs from Edge.Cuts")


def test_the_signed_record_names_the_package_and_boardready_verify_checks_it(package, tmp_path, capsys):
    out, _ = package
    copy = tmp_path / "fab"
    shutil.copytree(out, copy)
    key = attestation.ensure_key(tmp_path / "key.pem")
    record = attestation.sign_release(key, copy, {"verdict": "ready"}, {"decision": "PASS"})
    (tmp_path / "record.json").write_text(json.dumps(record))
    (tmp_path / "keys.json").write_text(json.dumps(attestation.published_keys(key)))
    args = [str(tmp_path / "record.json"), "--keys", str(tmp_path / "keys.json"), "--package", str(copy)]
    assert boardready_verify(args) == 0
    (copy / "drill" / "ecc83-pp.drl").write_bytes((copy / "drill" / "ecc83-pp.drl").read_bytes() + b"\n")
    assert boardready_verify(args) == 1
    assert "drill/ecc83-pp.drl: SHA-256 differs" in capsys.readouterr().err


def test_bin_check_fab_package_makes_and_accepts_a_four_layer_boards_package_with_its_bom(tmp_path, capsys):
    from checker.cli import main as bin_check

    out = tmp_path / "fab"
    code = bin_check([str(FIXTURES / "kicad-multilayer"), "--no-kicad-cli", "--fail-on", "never", "--format", "json",
                      "-o", str(tmp_path / "result.json"), "--fab-package", str(out)])
    assert code == 0, capsys.readouterr().err
    assert "fab package" in capsys.readouterr().err and (out / "assembly" / "bom.csv").is_file()
    copper = sorted((out / "gerbers").glob("*_layer.gbr"))
    assert len(copper) == 4
    # A BOM line whose value is not the schematic's is refused.
    bom = out / "assembly" / "bom.csv"
    rows = bom.read_text().splitlines()
    first = rows[1].split('","')
    expected = {first[0].strip('"'): first[1]}
    assert fab_package.bom_problems(out, expected) == [
        f"BOM references differ from the schematic: missing [], extra {sorted(set(_refs(bom)) - set(expected))[:10]}"]
    bom.write_text("\n".join([rows[0], rows[1].replace(f'"{first[1]}"', '"10k"', 1)] + rows[2:]) + "\n")
    assert fab_package.bom_problems(out, {**{r: "x" for r in _refs(bom)}, **expected})[-1] \
        .startswith("BOM values differ from the schematic for")


def _refs(bom: Path) -> list[str]:
    import csv

    from checker.bom import split_references
    with bom.open(newline="") as handle:
        return [r for row in csv.DictReader(handle) for r in split_references(row["Refs"])]

"""The fabrication package (issue 38): the manufacturing outputs made by KiCad itself
from the checked commit, checked with an independent reader before they are accepted.

`make_package(board, out, kicad_cli)` runs kicad-cli: Gerbers (X2, with the job
file) of every copper layer and the mask, paste, silkscreen and Edge.Cuts layers,
Excellon drill files with a Gerber X2 map, a CSV pick-and-place, the BOM from the
schematic when there is one, and IPC-2581 where the kicad-cli offers it. File
names are KiCad's own, from the board's name, so the same board gives the same
names. `fab-manifest.json` lists each file with its SHA-256 and size.

`check_package(out, board)` reads the package with gerbonara (not our parser):
every copper layer of the board has its Gerber (by the X2 FileFunction), the
outline's extent matches the board's Edge.Cuts within 0.01 mm, the drill hits
match the board's holes (drilled pads and vias; an oval hole is one routed slot). It answers the problems found;
an empty list accepts the package. gerbonara is a dev and runner dependency,
imported only here.
"""
from __future__ import annotations

import hashlib
import json
import subprocess
import warnings
from pathlib import Path

from .board import Board

MANIFEST = "fab-manifest.json"
EXTENT_TOLERANCE_MM = 0.01
TECHNICAL_LAYERS = ("F.Mask", "B.Mask", "F.Paste", "B.Paste", "F.SilkS", "B.SilkS", "Edge.Cuts")


def _run(kicad_cli: str, *args: str) -> None:
    done = subprocess.run([kicad_cli, *args], capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        raise RuntimeError(f"kicad-cli {' '.join(args[:3])} failed: {(done.stderr or done.stdout).strip()[:500]}")


def make_package(board_file: Path, board: Board, out: Path, kicad_cli: str, schematic: Path | None = None) -> dict:
    """Make the package in ``out`` (created) and answer its manifest."""
    out.mkdir(parents=True, exist_ok=True)
    layers = ",".join(board.copper_order() + list(TECHNICAL_LAYERS))
    _run(kicad_cli, "pcb", "export", "gerbers", "-o", str(out / "gerbers"), "--no-protel-ext", "-l", layers,
         str(board_file))
    # Oval holes as routed slots (G00/M15/G01/M16), which every Excellon reader takes;
    # KiCad's default G85 form is one few read.
    _run(kicad_cli, "pcb", "export", "drill", "-o", str(out / "drill") + "/", "--format", "excellon",
         "--excellon-oval-format", "route", "--generate-map", "--map-format", "gerberx2", str(board_file))
    _run(kicad_cli, "pcb", "export", "pos", "-o", str(out / "assembly" / "pick-and-place.csv"), "--format", "csv",
         "--units", "mm", str(board_file))
    if schematic is not None:
        _run(kicad_cli, "sch", "export", "bom", "-o", str(out / "assembly" / "bom.csv"), str(schematic))
    try:
        _run(kicad_cli, "pcb", "export", "ipc2581", "-o", str(out / "ipc2581.xml"), str(board_file))
    except RuntimeError:
        pass   # a kicad-cli without IPC-2581 (before 8): the package goes without it
    return write_manifest(out)


def write_manifest(out: Path) -> dict:
    files = sorted(p for p in out.rglob("*") if p.is_file() and p.name != MANIFEST)
    manifest = {"files": [{"path": p.relative_to(out).as_posix(), "size": p.stat().st_size,
                           "sha256": hashlib.sha256(p.read_bytes()).hexdigest()} for p in files]}
    (out / MANIFEST).write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    return manifest


def _edge_extent(board: Board) -> tuple[float, float, float, float] | None:
    points = [p for edge in board.edges if edge.owner == "" for p in edge.points] or \
        [p for edge in board.edges for p in edge.points]
    if not points:
        return None
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    return min(xs), min(ys), max(xs), max(ys)


def _outline_extent(gerber) -> tuple[float, float, float, float] | None:
    """The outline's centre-line extent in KiCad's frame (Gerber Y is up: negated back)."""
    from gerbonara.utils import MM
    xs, ys = [], []
    for obj in gerber.objects:
        obj = obj.converted(MM) if hasattr(obj, "converted") else obj
        for x, y in ((getattr(obj, "x1", None), getattr(obj, "y1", None)),
                     (getattr(obj, "x2", None), getattr(obj, "y2", None))):
            if x is not None and y is not None:
                xs.append(x)
                ys.append(-y)
        if type(obj).__name__ == "Arc":
            for line in obj.approximate(max_error=0.001, unit=MM):
                xs += [line.x1, line.x2]
                ys += [-line.y1, -line.y2]
    return (min(xs), min(ys), max(xs), max(ys)) if xs else None


def bom_problems(out: Path, expected: dict[str, str]) -> list[str]:
    """KiCad's BOM (assembly/bom.csv) against the schematic as the checker read it
    (reference -> value, checker/bom_export.py): the same references, each with its value."""
    import csv

    from .bom import split_references

    path = out / "assembly" / "bom.csv"
    if not path.is_file():
        return ["no BOM (assembly/bom.csv) in the package"]
    exported: dict[str, str] = {}
    with path.open(newline="", encoding="utf-8") as handle:
        for row in csv.DictReader(handle):
            for reference in split_references(row.get("Refs") or row.get("Reference") or ""):
                exported[reference] = row.get("Value", "")
    problems = []
    if set(exported) != set(expected):
        missing, extra = sorted(set(expected) - set(exported)), sorted(set(exported) - set(expected))
        problems.append(f"BOM references differ from the schematic: missing {missing[:10]}, extra {extra[:10]}")
    wrong = sorted(r for r in set(exported) & set(expected) if exported[r] != expected[r])
    if wrong:
        problems.append(f"BOM values differ from the schematic for {wrong[:10]}")
    return problems


def check_package(out: Path, board: Board, expected_bom: dict[str, str] | None = None) -> list[str]:
    """The problems an independent reader (gerbonara) finds; empty when accepted. With
    ``expected_bom`` (reference -> value from the schematic) the BOM is compared too."""
    from gerbonara import ExcellonFile, GerberFile

    problems: list[str] = []
    copper, outline, hits = {}, None, 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            for path in sorted((out / "gerbers").glob("*.gbr")):
                gerber = GerberFile.open(path)
                function = gerber.file_attrs.get(".FileFunction", ())
                if function and function[0] == "Copper":
                    copper[function[1]] = path.name
                elif function and function[0] == "Profile":
                    outline = gerber
            for path in sorted((out / "drill").glob("*.drl")):
                # A hole is a flash, a routed slot one line.
                hits += sum(type(o).__name__ in ("Flash", "Line") for o in ExcellonFile.open(path).objects)
        except (SyntaxError, ValueError, OSError) as error:
            return [f"the independent reader cannot read the package: {error}"]
    wanted = [f"L{index + 1}" for index in range(len(board.copper_order()))]
    missing = [layer for layer, position in zip(board.copper_order(), wanted, strict=True) if position not in copper]
    if missing:
        problems.append("no Gerber for copper layer(s) " + ", ".join(missing))
    expected, found = _edge_extent(board), _outline_extent(outline) if outline is not None else None
    if expected is None or found is None:
        problems.append("no board outline (Edge.Cuts) to compare")
    elif max(abs(a - b) for a, b in zip(expected, found, strict=True)) > EXTENT_TOLERANCE_MM:
        problems.append(f"the outline's extent {tuple(round(v, 3) for v in found)} differs from Edge.Cuts "
                        f"{tuple(round(v, 3) for v in expected)} by more than {EXTENT_TOLERANCE_MM} mm")
    holes = sum(1 for f in board.footprints for pad in f.pads if pad.drill) + sum(1 for v in board.vias if v.drill)
    if hits != holes:
        problems.append(f"the drill files have {hits} hits, the board {holes} holes")
    if expected_bom is not None:
        problems += bom_problems(out, expected_bom)
    return problems

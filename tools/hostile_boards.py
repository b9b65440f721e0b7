"""Real KiCad projects broken the ways an attacker (or a broken exporter) breaks them.

Each mutation takes a project folder's text and writes a copy with one kind of damage,
in KiCad's own file format, so the checker reads it as it reads any board:

* ``ring3``: zone fills whose outlines have under four points (two points and back, a
  single point), where the board's edge is, as the real case that stopped the check;
* ``selfx``: a self-intersecting (bow-tie) zone fill and copper polygon;
* ``degenerate``: polygons of one and two points on copper, silk, mask and Edge.Cuts, a rule
  area and a zone outlined by two points, a track of length 0;
* ``nan``: NaN and infinite coordinates in a track, a via and a zone fill;
* ``huge``: coordinates of 1e300 and 1e12 mm;
* ``vias``: N isolated vias of one net (KiCad's ratsnest must join N islands);
* ``segments``: N track segments of one net lying on top of each other;
* ``zone``: one zone fill of N points;
* ``toml-type`` / ``toml-deep``: a ``.boardready.toml`` whose severity is a number, or
  whose tables nest N deep.

``bin/bench-hostile`` (tools/bench_hostile.py) runs the full sizes; the tests in
tests/checker/test_hostile_input.py run small ones and assert the typed answer.
"""
from __future__ import annotations

import math
import re
import shutil
from pathlib import Path

FULL_SIZES = {"vias": 3000, "segments": 30_000, "zone": 300_000, "toml-deep": 100_000}
CASES = ("ring3", "selfx", "degenerate", "nan", "huge", "vias", "segments", "zone", "toml-type", "toml-deep")

_EDGE_POINT = re.compile(r"\((?:gr_line|gr_rect)\s*\(start ([-\d.]+) ([-\d.]+)\)\s*\(end ([-\d.]+) ([-\d.]+)\)"
                         r"[^()]*(?:\([^()]*\)[^()]*)*?\(layer \"?Edge\.Cuts\"?\)")
_NET = re.compile(r"^\s*\(net (\d+) \"([^\"]+)\"\)", re.MULTILINE)


def _board(folder: Path) -> Path:
    boards = sorted(folder.glob("*.kicad_pcb"))
    if not boards:
        raise ValueError(f"{folder} has no .kicad_pcb")
    return boards[0]


def _edge_box(text: str) -> tuple[float, float, float, float]:
    """The Edge.Cuts lines' bounding box (the board's extent), else that of every point."""
    numbers = [tuple(map(float, m.groups())) for m in _EDGE_POINT.finditer(text)]
    if not numbers:
        numbers = [tuple(map(float, m.groups())) * 2 for m in
                   re.finditer(r"\((?:start|end|xy|at) (-?[\d.]+) (-?[\d.]+)[ )]", text)]
    if not numbers:
        return 0.0, 0.0, 100.0, 100.0
    xs = [v for n in numbers for v in (n[0], n[2])]
    ys = [v for n in numbers for v in (n[1], n[3])]
    return min(xs), min(ys), max(xs), max(ys)


def _net(text: str) -> tuple[str, str]:
    """A net with a name (the first after net 0)."""
    for number, name in _NET.findall(text):
        if number != "0":
            return number, name
    return "0", ""


def _uuid(index: int, kind: int) -> str:
    return f"{kind:08x}-dead-4bad-8bad-{index:012x}"


def _insert(text: str, items: str) -> str:
    end = text.rstrip().rfind(")")
    return text[:end] + items + "\n)\n"


def _zone(net: tuple[str, str], layer: str, outline: list[tuple[float, float]], fill: str, index: int) -> str:
    pts = " ".join(f"(xy {x:.6f} {y:.6f})" for x, y in outline)
    return (f"\n  (zone (net {net[0]}) (net_name \"{net[1]}\") (layer \"{layer}\") (uuid \"{_uuid(index, 1)}\")"
            f" (hatch edge 0.5) (connect_pads (clearance 0.5)) (min_thickness 0.25) (filled_areas_thickness no)"
            f" (fill yes (thermal_gap 0.5) (thermal_bridge_width 0.5))"
            f" (polygon (pts {pts}))"
            f" (filled_polygon (layer \"{layer}\") (pts {fill})))")


def _segment(x0, y0, x1, y1, net: tuple[str, str], index: int, layer: str = "F.Cu", width: float = 0.25) -> str:
    return (f"\n  (segment (start {x0} {y0}) (end {x1} {y1}) (width {width}) (layer \"{layer}\")"
            f" (net {net[0]}) (uuid \"{_uuid(index, 2)}\"))")


def _via(x, y, net: tuple[str, str], index: int) -> str:
    return (f"\n  (via (at {x} {y}) (size 0.6) (drill 0.3) (layers \"F.Cu\" \"B.Cu\")"
            f" (net {net[0]}) (uuid \"{_uuid(index, 3)}\"))")


def mutate(source: Path, case: str, destination: Path, size: int | None = None) -> Path:
    """A copy of the project folder ``source`` at ``destination`` with damage ``case``."""
    if destination.exists():
        shutil.rmtree(destination)
    shutil.copytree(source, destination, ignore=shutil.ignore_patterns("*.json", "*.rpt", "*-backups", "*.lck"))
    if case.startswith("toml-"):
        _toml(destination, case, size or FULL_SIZES.get(case, 0))
        return destination
    board = _board(destination)
    text = board.read_text(encoding="utf-8")
    x0, y0, x1, y1 = _edge_box(text)
    net = _net(text)
    if case == "ring3":
        # On the board's edge, where the edge-clearance rule measures fills.
        items = _zone(net, "F.Cu", [(x0, y0), (x0 + 2, y0), (x0 + 2, y0 + 2), (x0, y0 + 2)],
                      f"(xy {x0} {y0}) (xy {x0 + 1} {y0}) (xy {x0} {y0})", 1)
        items += _zone(net, "B.Cu", [(x0, y0), (x0 + 2, y0), (x0 + 2, y0 + 2), (x0, y0 + 2)],
                       f"(xy {x0} {y0 + 1}) (xy {x0} {y0 + 1})", 2)
        items += _zone(net, "F.Cu", [(x1, y1), (x1 - 2, y1), (x1 - 2, y1 - 2)],
                       f"(xy {x1} {y1}) (xy {x1 - 1} {y1}) (xy {x1 - 1} {y1}) (xy {x1} {y1})", 3)
    elif case == "selfx":
        cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
        bow = [(cx, cy), (cx + 3, cy + 3), (cx + 3, cy), (cx, cy + 3)]
        items = _zone(net, "F.Cu", bow, " ".join(f"(xy {x} {y})" for x, y in bow), 1)
        spike = [(x0, y0), (x0 + 4, y0 + 4), (x0 + 4, y0), (x0, y0 + 4), (x0 + 2, y0 - 1)]
        items += _zone(net, "B.Cu", spike, " ".join(f"(xy {x} {y})" for x, y in spike), 2)
        items += (f"\n  (gr_poly (pts {' '.join(f'(xy {x} {y})' for x, y in bow)}) (stroke (width 0.1) (type solid))"
                  f" (fill solid) (layer \"B.Cu\") (net {net[0]}) (uuid \"{_uuid(3, 4)}\"))")
    elif case == "degenerate":
        cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
        two = f"(pts (xy {cx} {cy}) (xy {cx + 1} {cy}))"
        one = f"(pts (xy {cx} {cy}))"
        items = "".join(
            f"\n  (gr_poly {pts} (stroke (width 0.1) (type solid)) (fill solid) (layer \"{layer}\")"
            f" (uuid \"{_uuid(i, 5)}\"))"
            for i, (pts, layer) in enumerate([(two, "F.Cu"), (one, "B.Cu"), (two, "F.SilkS"), (one, "F.SilkS"),
                                              (two, "Edge.Cuts"), (one, "F.Mask"), (two, "F.Mask")]))
        items += _segment(cx, cy, cx, cy, net, 1)
        items += (f"\n  (zone (net 0) (net_name \"\") (layer \"F.Cu\") (uuid \"{_uuid(2, 1)}\") (hatch edge 0.5)"
                  f" (connect_pads (clearance 0)) (min_thickness 0.25)"
                  f" (keepout (tracks not_allowed) (vias not_allowed) (pads allowed) (copperpour allowed)"
                  f" (footprints allowed)) (fill (thermal_gap 0.5) (thermal_bridge_width 0.5))"
                  f" (polygon {two}) (polygon {one}))")
        items += _zone(net, "B.Cu", [(cx, cy), (cx + 1, cy)], f"(xy {cx} {cy})", 3)
    elif case == "nan":
        cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
        items = _segment("nan", "nan", cx, cy, net, 1) + _segment(cx, cy, "inf", "-inf", net, 2)
        items += _via("nan", cy, net, 3) + _via("inf", "inf", net, 4)
        items += _zone(net, "F.Cu", [(cx, cy), (cx + 2, cy), (cx + 2, cy + 2)],
                       f"(xy {cx} {cy}) (xy nan {cy}) (xy {cx + 2} inf) (xy {cx} {cy + 2})", 5)
    elif case == "huge":
        cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
        items = _segment(cx, cy, "1e300", "1e300", net, 1) + _segment("-1e12", cy, "1e12", cy, net, 2)
        items += _via("1e300", "-1e300", net, 3)
        items += _zone(net, "F.Cu", [(cx, cy), (1e12, cy), (1e12, 1e12)],
                       f"(xy {cx} {cy}) (xy 1e12 {cy}) (xy 1e12 1e12) (xy {cx} 1e300)", 4)
    elif case == "vias":
        count = size or FULL_SIZES["vias"]
        side = math.ceil(math.sqrt(count))
        # Beside the board, where no copper joins them: each via an island of its own.
        items = "".join(_via(round(x1 + 5 + 1.0 * (i % side), 4), round(y0 + 1.0 * (i // side), 4), net, i)
                        for i in range(count))
    elif case == "segments":
        count = size or FULL_SIZES["segments"]
        cx, cy = round((x0 + x1) / 2, 4), round((y0 + y1) / 2, 4)
        items = "".join(_segment(cx, round(cy + 0.0001 * (i % 10), 4), cx + 5, round(cy + 0.0001 * (i % 7), 4), net, i)
                        for i in range(count))
    elif case == "zone":
        count = size or FULL_SIZES["zone"]
        cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
        radius = max(min(x1 - x0, y1 - y0) / 4, 1.0)
        ring = [(cx + radius * math.cos(2 * math.pi * i / count), cy + radius * math.sin(2 * math.pi * i / count))
                for i in range(count)]
        fill = " ".join(f"(xy {x:.6f} {y:.6f})" for x, y in ring)
        items = _zone(net, "F.Cu", ring[:: max(1, count // 64)], fill, 1)
    else:
        raise ValueError(f"unknown case {case!r}")
    board.write_text(_insert(text, items), encoding="utf-8")
    return destination


def _toml(folder: Path, case: str, depth: int) -> None:
    path = folder / ".boardready.toml"
    if case == "toml-type":
        path.write_text("severity = 3\n", encoding="utf-8")
    else:
        # Inline tables nested DEPTH deep: TOML allows it, Python's parser recurses on it.
        path.write_text("severity = " + "{a = " * depth + "1" + "}" * depth + "\n", encoding="utf-8")

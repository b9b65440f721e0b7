"""A compact description of a schematic sheet, for drawing it beside the board.

Built from the schematic model's connectable items (checker/connectivity.py):
wires and buses, junctions, no-connect flags, labels, each placed symbol as
its pins with its reference and value, and each sheet box as its pins. The
symbols' bodies (the rectangles, polylines, circles, arcs and pins of their
lib_symbols graphics, placed, rotated and mirrored as the sheet has them) are
read again from the sheet files when a sheet is drawn: the checker's model
keeps no graphics, and only the sheets a change touched are drawn. Millimetres rounded to 0.1 µm, like the board's
(checker/board_view.py). Symbols keep their uuids, so the diff marks the ones
that were added or changed.
"""
from __future__ import annotations

import math
from pathlib import Path

from .board_view import _flat, _r
from .connectivity import LABEL_KINDS, Screen, _transform, to_mm
from .errors import HostileInputError
from .geometry import arc_through
from .limits import DEFAULT_LIMITS
from .sexpr import Node, parse, to_float

MAX_SHEET_ITEMS = 20_000
# A sheet's symbol bodies are drawn while they take at most this many numbers (about
# 1 MB of JSON); beyond, its symbols are drawn as frames around their pins.
MAX_BODY_NUMBERS = 150_000
_FILLS = {"outline": 1, "background": 2}   # a body shape's fill: 0 none, 1 the line colour, 2 the body colour


def mm_point(point) -> list[float]:
    return [_r(to_mm(point[0])), _r(to_mm(point[1]))]


def mm_flat(points) -> list[float]:
    return _flat((to_mm(x), to_mm(y)) for x, y in points)


def _xy(node: Node | None, name: str) -> tuple[float, float] | None:
    child = node.first(name) if node is not None else None
    if child is None:
        return None
    x, y = to_float(child.atom(0)), to_float(child.atom(1))
    return (x, y) if x is not None and y is not None else None


def _shape(item: Node) -> tuple[str, int, list[tuple[float, float]], float] | None:
    """One library graphic in library millimetres (Y up): (kind, fill, points, radius),
    kind "p" an open polyline, "g" a closed polygon, "c" a circle (its centre)."""
    kind = item[0]
    fill = _FILLS.get((item.first("fill").value("type") if item.first("fill") is not None else None) or "", 0)
    if kind == "rectangle":
        start, end = _xy(item, "start"), _xy(item, "end")
        if start and end:
            return "g", fill, [start, (end[0], start[1]), end, (start[0], end[1])], 0.0
    elif kind == "polyline":
        pts = item.first("pts")
        points = [(to_float(xy.atom(0)), to_float(xy.atom(1))) for xy in pts.nodes("xy")] if pts is not None else []
        points = [p for p in points if p[0] is not None and p[1] is not None]
        if len(points) >= 2:
            return ("g" if fill and points[0] == points[-1] else "p"), fill, points, 0.0
    elif kind == "circle":
        centre, radius = _xy(item, "center"), item.number("radius")
        if centre and radius:
            return "c", fill, [centre], radius
    elif kind == "arc":
        start, mid, end = _xy(item, "start"), _xy(item, "mid"), _xy(item, "end")
        if start and mid and end:
            return "p", fill, arc_through(start, mid, end, pieces=12), 0.0
    elif kind == "pin" and not item.flag("hide"):
        at, length = item.first("at"), item.number("length")
        x, y, angle = (to_float(at.atom(i)) if at is not None else None for i in range(3))
        if x is not None and y is not None:
            turn = math.radians(angle or 0.0)
            reach = length or 0.0
            return "p", 0, [(x, y), (x + reach * math.cos(turn), y + reach * math.sin(turn))], 0.0
    return None


def _library_bodies(file_node: Node) -> dict[str, list[tuple[int, int, tuple]]]:
    """Each embedded library symbol's graphics: name -> [(unit, body style, shape)]."""
    bodies: dict[str, list] = {}
    block = file_node.first("lib_symbols")
    for definition in block.nodes("symbol") if block is not None else ():
        shapes = []
        for part in (definition, *definition.nodes("symbol")):
            pieces = (part.atom(0) or "").rsplit("_", 2) if part is not definition else []
            unit = int(pieces[1]) if len(pieces) == 3 and pieces[1].isdigit() else 0
            body = int(pieces[2]) if len(pieces) == 3 and pieces[2].isdigit() else 0
            for item in part.nodes():
                shape = _shape(item)
                if shape is not None:
                    shapes.append((unit, body, shape))
        bodies[definition.atom(0) or ""] = shapes
    return bodies


def symbol_bodies(path: Path) -> dict[str, list[list]]:
    """Each placed symbol's body on the sheet file at ``path``, by the symbol's uuid:
    [kind, fill, x0, y0, ...] (a circle: [kind, fill, x, y, radius]), sheet millimetres.
    Empty when the file cannot be read or its bodies exceed MAX_BODY_NUMBERS."""
    try:   # the check read the file within its limits; it is read again within them
        if path.stat().st_size > DEFAULT_LIMITS.max_total_bytes:
            return {}
        root = parse(path.read_text(encoding="utf-8"), path=path.name)
    except (OSError, UnicodeDecodeError, ValueError, HostileInputError):
        return {}
    libraries = _library_bodies(root)
    placed: dict[str, list[list]] = {}
    numbers = 0
    for node in root.nodes("symbol"):
        shapes = libraries.get(node.value("lib_name") or node.value("lib_id") or "") \
            or libraries.get(node.value("lib_id") or "") or []
        at = node.first("at")
        x, y, angle = (to_float(at.atom(i)) or 0.0 if at is not None else 0.0 for i in range(3))
        mirror = node.value("mirror")
        unit, body = int(to_float(node.value("unit")) or 1), int(to_float(node.value("body_style") or node.value("convert")) or 1)
        drawn = []
        for shape_unit, shape_body, (kind, fill, points, radius) in shapes:
            if shape_unit not in (0, unit) or shape_body not in (0, body):
                continue
            placed_points = [(x + dx, y + dy) for dx, dy in (_transform(px, py, round(angle), mirror) for px, py in points)]
            drawn.append([kind, fill, *_flat(placed_points), *([_r(radius)] if kind == "c" else [])])
            numbers += len(drawn[-1])
        if drawn:
            placed[node.value("uuid") or ""] = drawn
        if numbers > MAX_BODY_NUMBERS:
            return {}
    return placed


def sheet_view(screen: Screen, references: dict[str, str], bodies: dict[str, list[list]] | None = None) -> dict:
    """One sheet file's drawing; ``references`` names each symbol uuid as the BOM does,
    ``bodies`` gives the symbols' graphics (symbol_bodies)."""
    view: dict = {"file": screen.file, "wires": [], "buses": [], "junctions": [], "noConnects": [], "labels": [],
                  "symbols": [], "sheets": []}
    count = 0
    for item in screen.items:
        count += 1
        if item.kind == "wire" or item.kind == "bus":
            view["buses" if item.kind == "bus" else "wires"].append(mm_flat(item.points))
        elif item.kind == "junction":
            view["junctions"].append(mm_point(item.position))
        elif item.kind == "no_connect":
            view["noConnects"].append(mm_point(item.position))
        elif item.kind in LABEL_KINDS:
            view["labels"].append([*mm_point(item.position), item.text, item.kind])
    for placement in screen.placements:
        count += 1 + len(placement.pins)
        symbol = {"id": placement.uuid, "ref": references.get(placement.uuid, ""),
                  "value": placement.value, "lib": placement.lib_id, "at": mm_point(placement.at),
                  "pins": [[*mm_point(pin.position), pin.number] for pin in placement.pins]}
        if bodies and bodies.get(placement.uuid):
            symbol["body"] = bodies[placement.uuid]
        view["symbols"].append(symbol)
    for box in screen.sheets:
        count += 1 + len(box.pins)
        view["sheets"].append({"id": box.uuid, "name": box.name,
                               "pins": [[*mm_point(pin.position), pin.text] for pin in box.pins]})
    points = [(view["labels"][i][0], view["labels"][i][1]) for i in range(len(view["labels"]))]
    points += [(x, y) for flat in view["wires"] + view["buses"] for x, y in zip(flat[::2], flat[1::2])]
    points += [(p[0], p[1]) for s in view["symbols"] for p in s["pins"]] + [tuple(s["at"]) for s in view["symbols"]]
    points += [(p[0], p[1]) for s in view["sheets"] for p in s["pins"]]
    points += [(shape[i], shape[i + 1]) for s in view["symbols"] for shape in s.get("body", ())
               for i in range(2, len(shape) - 1 if shape[0] == "c" else len(shape), 2)]
    xs, ys = [p[0] for p in points] or [0, 10], [p[1] for p in points] or [0, 10]
    view["bounds"] = [min(xs), min(ys), max(xs), max(ys)]
    view["items"] = count
    if count > MAX_SHEET_ITEMS:
        return {"file": screen.file, "bounds": view["bounds"], "items": count, "tooLarge": True}
    return view


def changed_sheets(schematic, comparison: dict, root: Path | None = None) -> list[dict]:
    """The sheets whose files changed (or came with the change), drawn, with the
    symbols added or changed by this change marked by uuid; with ``root`` (the
    folder the sheet files are named from), with their symbols' bodies."""
    if schematic is None or not comparison:
        return []
    diff = comparison["schematic"]
    files = diff["sheets"]["changed"] + diff["sheets"]["added"]
    references: dict[str, str] = {}
    uuids_of: dict[str, list[str]] = {}
    for symbol in schematic.symbols:
        references.setdefault(symbol.uuid, symbol.reference)
        uuids_of.setdefault(symbol.reference, []).append(symbol.uuid)
    marks = {kind: sorted({u for s in diff["symbols"][kind] for u in uuids_of.get(s["ref"], [])})
             for kind in ("added", "changed")}
    sheets = []
    for name in files:
        screen = schematic.screens.get(name)
        if screen is not None:
            bodies = symbol_bodies(root / name) if root is not None else None
            sheets.append({"view": sheet_view(screen, references, bodies), "added": marks["added"],
                           "changed": marks["changed"],
                           "wiresAdded": diff["wires"]["added"].get(name, []),
                           "wiresRemoved": diff["wires"]["removed"].get(name, []),
                           "labelsAdded": diff["labels"]["added"].get(name, []),
                           "labelsRemoved": diff["labels"]["removed"].get(name, [])})
    return sheets

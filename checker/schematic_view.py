"""A compact description of a schematic sheet, for drawing it beside the board.

Built from the schematic model's connectable items (checker/connectivity.py):
wires and buses, junctions, no-connect flags, labels, each placed symbol as
its pins (the drawing frames them) with its reference and value, and each
sheet box as its pins. Millimetres rounded to 0.1 µm, like the board's
(checker/board_view.py). Symbols keep their uuids, so the diff marks the ones
that were added or changed.
"""
from __future__ import annotations

from .board_view import _flat, _r
from .connectivity import LABEL_KINDS, Screen, to_mm

MAX_SHEET_ITEMS = 20_000


def mm_point(point) -> list[float]:
    return [_r(to_mm(point[0])), _r(to_mm(point[1]))]


def mm_flat(points) -> list[float]:
    return _flat((to_mm(x), to_mm(y)) for x, y in points)


def sheet_view(screen: Screen, references: dict[str, str]) -> dict:
    """One sheet file's drawing; ``references`` names each symbol uuid as the BOM does."""
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
        view["symbols"].append({"id": placement.uuid, "ref": references.get(placement.uuid, ""),
                                "value": placement.value, "lib": placement.lib_id, "at": mm_point(placement.at),
                                "pins": [[*mm_point(pin.position), pin.number] for pin in placement.pins]})
    for box in screen.sheets:
        count += 1 + len(box.pins)
        view["sheets"].append({"id": box.uuid, "name": box.name,
                               "pins": [[*mm_point(pin.position), pin.text] for pin in box.pins]})
    points = [(view["labels"][i][0], view["labels"][i][1]) for i in range(len(view["labels"]))]
    points += [(x, y) for flat in view["wires"] + view["buses"] for x, y in zip(flat[::2], flat[1::2])]
    points += [(p[0], p[1]) for s in view["symbols"] for p in s["pins"]] + [tuple(s["at"]) for s in view["symbols"]]
    points += [(p[0], p[1]) for s in view["sheets"] for p in s["pins"]]
    xs, ys = [p[0] for p in points] or [0, 10], [p[1] for p in points] or [0, 10]
    view["bounds"] = [min(xs), min(ys), max(xs), max(ys)]
    view["items"] = count
    if count > MAX_SHEET_ITEMS:
        return {"file": screen.file, "bounds": view["bounds"], "items": count, "tooLarge": True}
    return view


def changed_sheets(schematic, comparison: dict) -> list[dict]:
    """The sheets whose files changed (or came with the change), drawn, with the
    symbols added or changed by this change marked by uuid."""
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
            sheets.append({"view": sheet_view(screen, references), "added": marks["added"],
                           "changed": marks["changed"],
                           "wiresAdded": diff["wires"]["added"].get(name, []),
                           "wiresRemoved": diff["wires"]["removed"].get(name, []),
                           "labelsAdded": diff["labels"]["added"].get(name, []),
                           "labelsRemoved": diff["labels"]["removed"].get(name, [])})
    return sheets

"""A compact description of a board's geometry, for drawing it in a browser.

Built from the checker's own board model (checker/board.py), not from images:
copper per layer (tracks with their widths, pads, vias, zone outlines and the
copper each zone's last fill poured), the board outline and each footprint's reference at its place. Coordinates are
millimetres rounded to 0.1 µm, flattened into number lists to keep the JSON
small; the drawing script (checker/templates/board_view.js) reads it back.
Items keep their KiCad uuids, so a finding that names items outlines them.

A board with more drawable items than MAX_ITEMS is described as too large
(its bounds and counts only): the page says so and still lists the findings.
"""
from __future__ import annotations

import numpy as np

from .board import Board, Footprint, Pad

GEOMETRY_VERSION = 1
# About 2 MB of JSON: the report artifact's upload cap (8 MiB) keeps room for the
# report itself and the base's changed items.
MAX_ITEMS = 60_000
# Zone fills are drawn while all of them have at most this many points (about 2 MB
# of JSON, within the drawing's 4 MiB); beyond, the zones are drawn as outlines.
MAX_FILL_POINTS = 200_000
_DIGITS = 4


def _r(value: float) -> float:
    rounded = round(float(value), _DIGITS)
    return int(rounded) if rounded.is_integer() else rounded


def _flat(points) -> list[float]:
    out: list[float] = []
    for x, y in points:
        out.append(_r(x))
        out.append(_r(y))
    return out


def _side(layers: list[str]) -> str:
    """F, B or * (every copper layer) for a pad's copper."""
    copper = [name for name in layers if name.endswith(".Cu")]
    if any(name.startswith("*") for name in copper) or len(copper) > 1:
        return "*"
    if copper and copper[0] == "B.Cu":
        return "B"
    return "F" if copper else ""


def pad_view(pad: Pad) -> list:
    """[x, y, width, height, rotation, shape, side, drill, number, net, uuid]."""
    return [_r(pad.x), _r(pad.y), _r(pad.width), _r(pad.height), _r(pad.rotation), pad.shape,
            _side(pad.layers), _r(pad.drill) if pad.drill else 0, pad.number, pad.net, pad.uuid]


def footprint_view(footprint: Footprint) -> dict:
    return {"ref": footprint.reference, "value": footprint.value, "lib": footprint.lib_id, "id": footprint.uuid,
            "layer": footprint.layer, "at": [_r(footprint.x), _r(footprint.y), _r(footprint.rotation)],
            "pads": [pad_view(pad) for pad in footprint.pads]}


def track_view(track) -> list:
    """[layer, width, net, uuid, x0, y0, x1, y1, ...]."""
    return [track.layer, _r(track.width), track.net, track.uuid, *_flat(track.points)]


def via_view(via) -> list:
    """[x, y, diameter, drill, net, uuid]."""
    return [_r(via.x), _r(via.y), _r(via.diameter or 0.6), _r(via.drill or 0), via.net, via.uuid]


def zone_view(zone, fills: bool = False) -> dict:
    """The outline; with ``fills``, the copper the last fill poured, per layer
    ([layer, x0, y0, x1, y1, ...] in whole micrometres: one fractured outline, holes
    joined by slits). Fills are drawn faded under the copper, so a micrometre is
    plenty, and whole numbers are written in a third of the time decimals take."""
    view = {"net": zone.net, "layers": list(zone.layers), "pts": _flat(zone.polygon), "id": zone.uuid}
    if fills and zone.fills:
        view["fills"] = [[layer, *np.rint(points * 1000).astype(np.int64).ravel().tolist()]
                         for layer, points in zone.fills]
    return view


def item_count(board: Board) -> int:
    return (sum(len(f.pads) + 1 for f in board.footprints) + len(board.tracks) + len(board.vias)
            + sum(len(z.polygon) for z in board.zones if not z.keepout) + len(board.edges))


def bounds(board: Board) -> list[float]:
    """The outline's box, else the copper's; a 10 mm square for an empty board."""
    points = [p for e in board.edges if not e.owner for p in e.points] or [p for e in board.edges for p in e.points]
    if not points:
        points = [p for t in board.tracks for p in t.points] + [(f.x, f.y) for f in board.footprints] \
            + [(v.x, v.y) for v in board.vias]
    if not points:
        return [0, 0, 10, 10]
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    return [_r(min(xs)), _r(min(ys)), _r(max(xs)), _r(max(ys))]


def too_large(view: dict) -> dict:
    """A board's view without its drawing: what it is, where and how many items."""
    return {key: view[key] for key in ("version", "file", "bounds", "layers", "items") if key in view} | \
        {"tooLarge": True}


def board_geometry(board: Board) -> dict:
    """The whole board, or its bounds and size when it is too large to draw."""
    count = item_count(board)
    view: dict = {"version": GEOMETRY_VERSION, "file": board.file, "bounds": bounds(board),
                  "layers": board.copper_order(), "items": count}
    if count > MAX_ITEMS:
        return too_large(view)
    fill_points = sum(len(points) for z in board.zones if not z.keepout for _, points in z.fills)
    view.update(
        outline=[_flat(edge.points) for edge in board.edges],   # closed shapes repeat their first point
        footprints=[footprint_view(f) for f in board.footprints],
        tracks=[track_view(t) for t in board.tracks],
        vias=[via_view(v) for v in board.vias],
        zones=[zone_view(z, fills=fill_points <= MAX_FILL_POINTS) for z in board.zones
               if not z.keepout and len(z.polygon) > 2],
    )
    return view

"""Solder mask apertures that bridge nets (KiCad's solder_mask_bridge).

A pad on a mask layer opens the mask over its copper grown by its solder mask margin (the
pad's, its footprint's, or the board setup's pad_to_mask_clearance). Where that opening
reaches copper of another net on the same side (a track, via, zone fill, another pad's
copper or opening), or comes nearer another opening than the board's minimum mask web, the
bare copper of two nets is bridged: reported once per side, as KiCad reports "Front/Rear
solder mask aperture bridges items with different nets". Pads of one footprint that allows
solder mask bridges are not compared with each other.

A shape drawn on F.Mask / B.Mask is an opening too (a solder jumper's window between its two
pads): copper of two nets under one such opening is bridged, as KiCad reports it, naming the
shape and the copper of the first net it met.
"""
from __future__ import annotations

import numpy as np
import shapely

from ..board import Board, CopperShape
from ..copper import PAD, Copper
from ..findings import Finding

EPSILON = 0.0005    # KiCad's DRC epsilon


def mask_bridge_findings(board: Board, copper: Copper, a: np.ndarray, b: np.ndarray, distance: np.ndarray,
                         tested: np.ndarray) -> list[Finding]:
    """``a``, ``b``, ``distance``: the copper's near pairs; ``tested``: the pairs of two nets
    (as the clearance test takes them)."""
    if not len(a) or not copper.layer_names:
        return []
    board_margin = board.setup.get("pad_to_mask_clearance", 0.0)
    min_web = board.setup.get("solder_mask_min_width", 0.0)
    sides = (("F", 1, "Front"), ("B", 1 << (len(copper.layer_names) - 1), "Rear"))
    findings = []
    for side, bit, word in sides:
        margin = _margins(copper, side, board_margin)            # NaN: no opening on this side
        on_side = ((copper.layers[a] & bit) != 0) & ((copper.layers[b] & bit) != 0) & tested
        opening_a, opening_b = ~np.isnan(margin[a]), ~np.isnan(margin[b])
        reach = np.where(opening_a, np.nan_to_num(margin[a]), 0.0) + np.where(opening_b, np.nan_to_num(margin[b]), 0.0)
        web = np.where(opening_a & opening_b, min_web, 0.0)
        # An opening exactly reaching copper (a fiducial's 0.5 mm opening, 0.5 mm from the pour)
        # does not bridge: KiCad's epsilon, as for clearance.
        bridged = on_side & (opening_a | opening_b) & (distance < reach + web - EPSILON)
        for k in np.flatnonzero(bridged).tolist():
            i, j = int(a[k]), int(b[k])
            if _bridges_allowed(copper, i, j):
                continue
            findings.append(_finding(board, copper, i, j, side, word))
    return findings



def _margins(copper: Copper, side: str, board_margin: float) -> np.ndarray:
    margin = np.full(len(copper), np.nan)
    mask_layer = f"{side}.Mask"
    for item in np.flatnonzero(copper.kind == PAD).tolist():
        footprint, pad = copper.owner[item]
        if mask_layer in pad.layers or "*.Mask" in pad.layers or "F&B.Mask" in pad.layers:
            value = pad.mask_margin if pad.mask_margin is not None else footprint.mask_margin
            margin[item] = value if value is not None else board_margin
    return margin


def _bridges_allowed(copper: Copper, i: int, j: int) -> bool:
    if copper.kind[i] != PAD or copper.kind[j] != PAD:
        return False
    (fp_i, _), (fp_j, _) = copper.owner[i], copper.owner[j]
    return fp_i is fp_j and "allow_soldermask_bridges" in fp_i.attributes


def _finding(board: Board, copper: Copper, i: int, j: int, side: str, word: str) -> Finding:
    pad, other = (i, j) if copper.kind[i] == PAD else (j, i)
    x, y = copper.anchor[pad]
    one, two = copper.label(pad), copper.label(other)
    nets = sorted({copper.net_names[copper.net[pad]] or "(no net)", copper.net_names[copper.net[other]] or "(no net)"})
    line, column = copper.where(pad)
    return Finding("board.mask-bridge",
                   f"{word.lower()} solder mask opening of {one} bridges it to {two} (nets {nets[0]} and {nets[-1]})",
                   identity=(board.file, "mask", side, *sorted((copper.identity(pad), copper.identity(other)))),
                   severity="error", path=board.file, line=line, column=column, kicad_type="solder_mask_bridge",
                   extra={"x": round(float(x), 4), "y": round(float(y), 4), "layer": f"{side}.Mask", "nets": nets,
                          "uuids": [u for u in (copper.uuid(pad), copper.uuid(other)) if u]})


def mask_shape_findings(board: Board, copper: Copper) -> list[Finding]:
    """Openings drawn on a mask layer that expose copper of two nets on their side."""
    if not board.mask_shapes or not len(copper) or not copper.layer_names:
        return []
    bits = {"F.Mask": 1, "B.Mask": 1 << (len(copper.layer_names) - 1)}
    tree = shapely.STRtree(copper.core)
    reach = float(copper.radius.max())
    findings = []
    for shape in board.mask_shapes:
        opening = _opening(shape)
        if opening is None:
            continue
        candidates = tree.query(opening, predicate="dwithin", distance=reach)
        candidates = candidates[(copper.layers[candidates] & bits[shape.layer]) != 0]
        if shape.footprint is not None and "allow_soldermask_bridges" in shape.footprint.attributes:
            candidates = np.array([i for i in candidates.tolist() if copper.kind[i] != PAD
                                   or copper.owner[i][0] is not shape.footprint], dtype=np.int64)
        # Only a real overlap bares copper (an opening that ends on a pad's edge does not).
        under = [int(i) for i in sorted(candidates.tolist())
                 if shapely.area(shapely.intersection(opening, _copper_of(copper, i))) > AREA_EPSILON]
        if len({int(copper.net[i]) for i in under}) < 2:
            continue
        first = under[0]
        others = [i for i in under if copper.net[i] != copper.net[first]]
        findings.append(_shape_finding(board, copper, shape, first, others))
    return findings


# An overlap smaller than this (mm²) is a shared edge, not bare copper.
AREA_EPSILON = 1e-6


def _copper_of(copper: Copper, item: int):
    core, radius = copper.core[item], float(copper.radius[item])
    return shapely.buffer(core, radius) if radius > 0 else core


def _opening(shape: CopperShape):
    if shape.filled and len(shape.points) >= 4:
        polygon = shapely.Polygon(shape.points)
        return polygon.buffer(shape.width / 2) if shape.width > 0 else polygon
    if len(shape.points) >= 2 and shape.width > 0:
        return shapely.LineString(shape.points).buffer(shape.width / 2)
    return None


def _shape_finding(board: Board, copper: Copper, shape: CopperShape, first: int, others: list[int]) -> Finding:
    side = shape.layer[0]
    word = "front" if side == "F" else "rear"
    owner = f" of {shape.footprint.reference}" if shape.footprint is not None and shape.footprint.reference else ""
    nets = sorted({copper.net_names[copper.net[i]] or "(no net)" for i in (first, *others)})
    x, y = shape.points[0]
    line, column = shape.location.line, shape.location.column
    return Finding("board.mask-bridge",
                   f"{word} solder mask opening ({shape.kind} on {shape.layer}{owner}) bares "
                   f"{copper.label(first)} and {copper.label(others[0])} (nets {', '.join(nets)})",
                   identity=(board.file, "mask-shape", shape.uuid or f"{shape.layer}@{x:g},{y:g}"),
                   severity="error", path=board.file, line=line, column=column, kicad_type="solder_mask_bridge",
                   extra={"x": round(float(x), 4), "y": round(float(y), 4), "layer": shape.layer, "nets": nets,
                          "uuids": [u for u in (shape.uuid, copper.uuid(first), *(copper.uuid(i) for i in others)) if u]})

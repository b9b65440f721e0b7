"""Solder mask apertures that bridge nets (KiCad's solder_mask_bridge).

A pad on a mask layer opens the mask over its copper grown by its solder mask margin (the
pad's, its footprint's, or the board setup's pad_to_mask_clearance). Where that opening
reaches copper of another net on the same side (a track, via, zone fill, another pad's
copper or opening), or comes nearer another opening than the board's minimum mask web, the
bare copper of two nets is bridged: reported once per side, as KiCad reports "Front/Rear
solder mask aperture bridges items with different nets". Pads of one footprint that allows
solder mask bridges are not compared with each other.
"""
from __future__ import annotations

import numpy as np

from ..board import Board
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

"""Silkscreen against the board edge (KiCad 9's ``silk_edge_clearance``) and against the
solder mask openings (``silk_over_copper``), both warnings.

What KiCad 9 does (pcbnew/drc/drc_test_provider_edge_clearance.cpp): every item on
F.SilkS or B.SilkS is collided with the Edge.Cuts items, the edges taken as their
centrelines (stroke width 0), with the board setup's silk clearance
(``rules.min_silk_clearance``, KiCad's default 0) less the DRC epsilon. A line, arc or
outline is its centreline grown by half its stroke; a filled shape its area. One
violation per silk item ("one is enough"), naming the edge and the item: "Silkscreen
clipped by board edge". Silk wholly outside the board is not reported.

Silk over the mask (drc_test_provider_solder_mask.cpp, testSilkToMaskClearance): a silk
item on F.SilkS (B.SilkS) touching, or nearer than the silk clearance to, an opening of
F.Mask (B.Mask): a pad's copper there grown by its solder mask margin (the pad's, its
footprint's or the board setup's pad_to_mask_clearance). One violation per silk item and
side, naming only the item: "Silkscreen clipped by solder mask". Vias (tented unless told
otherwise) and shapes drawn on a mask layer are not taken as openings here.

Texts (references, values) are drawn by KiCad's stroke font, which the checker does not
render: they are left out, so a reference field crossing the edge is not reported here.
"""
from __future__ import annotations

from collections import defaultdict

import numpy as np
import shapely

from ..board import Board, CopperShape
from ..copper import PAD, Copper
from ..findings import Finding

# KiCad's DRC epsilon (BOARD_DESIGN_SETTINGS::GetDRCEpsilon), as in copper_rules.
DRC_EPSILON = 0.0005
# The board's default maximum arc error (ARC_HIGH_DEF, 0.005 mm): KiCad's solder mask openings are
# polygons drawn that far outside a rounded pad's true outline (ERROR_OUTSIDE), so silk 1 um
# clear of a roundrect pad's corner (StickHub's D22, D23) is clipped in KiCad 9.
MASK_ARC_ERROR = 0.005


def min_silk_clearance(pro: dict) -> float:
    """The board setup's silk clearance (``board.design_settings.rules.min_silk_clearance``), 0 when unset."""
    board = pro.get("board") if isinstance(pro, dict) else None
    settings = board.get("design_settings") if isinstance(board, dict) else None
    rules = settings.get("rules") if isinstance(settings, dict) else None
    value = rules.get("min_silk_clearance") if isinstance(rules, dict) else None
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0 else 0.0


def _shape(item: CopperShape) -> shapely.Geometry:
    if item.filled and len(item.points) >= 4:
        return shapely.Polygon(item.points)
    return shapely.LineString(item.points)


def silk_edge_findings(board: Board, clearance: float = 0.0) -> list[Finding]:
    """One finding per footprint (or for the board's own silk) and side, listing every silk
    item that collides with the board edge, each with the first edge item it meets."""
    if not board.silk_shapes or not board.edges:
        return []
    edges = np.array([shapely.LineString(e.points) for e in board.edges], dtype=object)
    tree = shapely.STRtree(edges)
    silk = np.array([_shape(item) for item in board.silk_shapes], dtype=object)
    reach = np.array([item.width / 2 for item in board.silk_shapes]) + max(0.0, clearance - DRC_EPSILON)
    query_in, query_tree = tree.query(silk, predicate="dwithin", distance=float(reach.max()) + DRC_EPSILON)
    if not len(query_in):
        return []
    gap = shapely.distance(silk[query_in], edges[query_tree])
    hit = (gap < reach[query_in]) | (gap == 0)
    # KiCad names one edge per item, the first its search meets (in no order the file gives):
    # every edge the item meets is named, so KiCad's pair is among them.
    met: dict[int, list[int]] = defaultdict(list)
    for item, edge in zip(query_in[hit].tolist(), query_tree[hit].tolist()):
        met[item].append(edge)
    groups: dict[tuple[str, str], list[tuple[int, list[int]]]] = defaultdict(list)
    for item, edge in sorted(met.items()):
        shape = board.silk_shapes[item]
        owner = shape.footprint.reference if shape.footprint is not None else ""
        groups[(owner, shape.layer)].append((item, edge))
    findings = []
    for (owner, layer), hits in sorted(groups.items()):
        places = []
        for item, met_edges in hits:
            shape = board.silk_shapes[item]
            edge = min(met_edges)
            point = shapely.get_coordinates(shapely.shortest_line(silk[item], edges[edge]))[-1]
            uuids = [board.edges[e].uuid for e in sorted(met_edges)] + [shape.uuid]
            places.append({"x": round(float(point[0]), 4), "y": round(float(point[1]), 4), "layer": layer,
                           "uuids": [u for u in dict.fromkeys(uuids) if u]})
        shape = board.silk_shapes[hits[0][0]]
        whose = f"of {owner} " if owner else ""
        findings.append(Finding(
            "board.silk-edge-clearance",
            f"{len(hits)} silkscreen item(s) {whose}on {layer} clipped by the board edge; first at "
            f"({places[0]['x']:.4g}, {places[0]['y']:.4g})",
            identity=(board.file, owner, layer, *sorted(board.silk_shapes[i].uuid for i, _ in hits)),
            path=board.file, line=shape.line, column=shape.column, kicad_type="silk_edge_clearance",
            locations=places if len(places) > 1 else [],
            extra={"x": places[0]["x"], "y": places[0]["y"], "layer": layer, "count": len(hits),
                   "uuids": places[0]["uuids"]}))
    return findings


def silk_mask_findings(board: Board, copper: Copper, clearance: float = 0.0) -> list[Finding]:
    """One finding per footprint (or the board's own silk) and side, listing every silk item
    that reaches a pad's solder mask opening on its side."""
    if not board.silk_shapes or not copper.layer_names:
        return []
    board_margin = board.setup.get("pad_to_mask_clearance", 0.0)
    outer = {"F.SilkS": ("F.Mask", 1), "B.SilkS": ("B.Mask", 1 << (len(copper.layer_names) - 1))}
    pads = np.flatnonzero(copper.kind == PAD)
    groups: dict[tuple[str, str], list[tuple[int, int]]] = defaultdict(list)
    for side, (mask_layer, bit) in outer.items():
        silk_items = [i for i, shape in enumerate(board.silk_shapes) if shape.layer == side]
        openings, reach = [], []
        for item in pads[(copper.layers[pads] & bit) != 0].tolist():
            footprint, pad = copper.owner[item]
            if not (mask_layer in pad.layers or "*.Mask" in pad.layers or "F&B.Mask" in pad.layers):
                continue
            margin = pad.mask_margin if pad.mask_margin is not None else footprint.mask_margin
            openings.append(item)
            grown = copper.radius[item] + (margin if margin is not None else board_margin)
            # KiCad draws a rounded opening as a polygon up to its max error outside the arc.
            reach.append(grown + (MASK_ARC_ERROR if grown > 0 else 0.0))
        if not silk_items or not openings:
            continue
        opening = np.array(openings)
        opening_reach = np.array(reach) + max(0.0, clearance - DRC_EPSILON)
        silk = np.array([_shape(board.silk_shapes[i]) for i in silk_items], dtype=object)
        silk_half = np.array([board.silk_shapes[i].width / 2 for i in silk_items])
        tree = shapely.STRtree(copper.core[opening])
        query_in, query_tree = tree.query(silk, predicate="dwithin",
                                          distance=float(opening_reach.max() + silk_half.max()) + DRC_EPSILON)
        if not len(query_in):
            continue
        gap = shapely.distance(silk[query_in], copper.core[opening[query_tree]]) - silk_half[query_in] \
            - opening_reach[query_tree]
        first: dict[int, int] = {}
        for k in np.flatnonzero(gap < 0).tolist():
            first.setdefault(int(query_in[k]), int(opening[query_tree[k]]))
        for index, pad_item in sorted(first.items()):
            shape = board.silk_shapes[silk_items[index]]
            owner = shape.footprint.reference if shape.footprint is not None else ""
            groups[(owner, side)].append((silk_items[index], pad_item))
    findings = []
    for (owner, layer), hits in sorted(groups.items()):
        places = []
        for item, pad_item in hits:
            shape = board.silk_shapes[item]
            point = shapely.get_coordinates(shapely.shortest_line(_shape(shape), copper.core[pad_item]))[0]
            places.append({"x": round(float(point[0]), 4), "y": round(float(point[1]), 4), "layer": layer,
                           "uuids": [shape.uuid] if shape.uuid else []})
        shape = board.silk_shapes[hits[0][0]]
        whose = f"of {owner} " if owner else ""
        findings.append(Finding(
            "board.silk-over-mask",
            f"{len(hits)} silkscreen item(s) {whose}on {layer} reach a pad's solder mask opening (clipped "
            f"by the mask); first at ({places[0]['x']:.4g}, {places[0]['y']:.4g}), near {copper.label(hits[0][1])}",
            identity=(board.file, "mask", owner, layer, *sorted(board.silk_shapes[i].uuid for i, _ in hits)),
            path=board.file, line=shape.line, column=shape.column, kicad_type="silk_over_copper",
            locations=places if len(places) > 1 else [],
            extra={"x": places[0]["x"], "y": places[0]["y"], "layer": layer, "count": len(hits),
                   "uuids": places[0]["uuids"]}))
    return findings

"""Thermal reliefs with too few spokes (KiCad's starved_thermal), as KiCad 9's DRC counts them
(DRC_TEST_PROVIDER_ZONE_CONNECTIONS): for each pad of a zone's net flashed on the zone's layer
and connected to it by a thermal relief, the pad's outline grown by half the thermal gap is
crossed twice by every spoke of the fill as last saved; each fill outline the ring crosses
gives (its distinct crossing points) / 2 spokes. Spokes into an outline that connects nothing
but the pad (an isolated island) are not counted, unless they are all there is; a track of
the net from inside the ring to a point of the fill counts as one more (a track of any
layer: KiCad tests the connected tracks' ends against the layer's fill). Fewer than the board
setup's minimum (rules.min_resolved_spokes; KiCad's default 2) is an error; a pad the fill does not reach at all is not
reported here (it is unconnected, if anything).
"""
from __future__ import annotations

from collections import defaultdict

import numpy as np
import shapely

from ..board import Board, Zone
from ..copper import ARC, PAD, TRACK, ZONE, Copper
from ..findings import Finding

MIN_SPOKES = 2      # KiCad's default board setup minimum (rules.min_resolved_spokes)
THERMAL, SOLID, NONE_, THT_THERMAL = 1, 2, 0, 3
_ZONE_CONNECT = {"thermal": THERMAL, "yes": SOLID, "no": NONE_, "thru_hole_only": THT_THERMAL}


def min_resolved_spokes(pro: dict) -> int:
    """The board setup's minimum spokes (``board.design_settings.rules.min_resolved_spokes``)."""
    board = pro.get("board") if isinstance(pro, dict) else None
    settings = board.get("design_settings") if isinstance(board, dict) else None
    rules = settings.get("rules") if isinstance(settings, dict) else None
    value = rules.get("min_resolved_spokes") if isinstance(rules, dict) else None
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    return MIN_SPOKES


def starved_thermal_findings(board: Board, copper: Copper, touching_a: np.ndarray, touching_b: np.ndarray,
                             minimum: int = MIN_SPOKES) -> list[Finding]:
    """``touching_a``/``touching_b``: pairs of items of one net whose copper touches (the
    connectivity's), to tell the fill outlines that connect only one item."""
    fills = copper.fills
    if not len(fills) or minimum <= 0:
        return []
    # Items each fill outline touches (other than fills).
    solid = copper.kind != ZONE
    links: dict[int, set[int]] = defaultdict(set)
    is_fill = ~solid
    for a, b in zip(touching_a.tolist(), touching_b.tolist()):
        if is_fill[a] and solid[b]:
            links[a].add(b)
        elif is_fill[b] and solid[a]:
            links[b].add(a)
    hole_items = set(copper.hole_of[1].tolist())
    pads = np.array([i for i in np.flatnonzero((copper.kind == PAD) & (copper.net != 0)).tolist()
                     if i not in hole_items], dtype=np.int64)
    if not len(pads):
        return []
    # Fill outlines per (zone, layer) and the units (outline chains) of each fill item.
    by_zone_layer: dict[tuple[int, str], list[int]] = defaultdict(list)
    for fill in fills.tolist():
        zone, layer = copper.owner[fill]
        if not zone.teardrop and zone.net:
            by_zone_layer[(id(zone), layer)].append(fill)
    pad_bounds = shapely.bounds(copper.core[pads])
    findings = []
    tracks = np.flatnonzero(((copper.kind == TRACK) | (copper.kind == ARC)) & (copper.net != 0))
    for (_, layer), zone_fills in by_zone_layer.items():
        zone = copper.owner[zone_fills[0]][0]
        bit = 1 << copper.layer_names.index(layer)
        net = copper.net[zone_fills[0]]
        zone_bounds = shapely.bounds(shapely.union_all(copper.core[zone_fills]).envelope)
        mine = (copper.net[pads] == net) & ((copper.layers[pads] & bit) != 0)
        mine &= ((pad_bounds[:, 2] >= zone_bounds[0]) & (pad_bounds[:, 0] <= zone_bounds[2])
                 & (pad_bounds[:, 3] >= zone_bounds[1]) & (pad_bounds[:, 1] <= zone_bounds[3]))
        for pad_item in pads[mine].tolist():
            footprint, pad = copper.owner[pad_item]
            if _connection(zone, footprint, pad) != THERMAL:
                continue
            gap = pad.thermal_gap if pad.thermal_gap is not None else (
                footprint.thermal_gap if footprint.thermal_gap is not None else zone.thermal_gap)
            ring = shapely.buffer(copper.core[pad_item], copper.radius[pad_item] + gap / 2, quad_segs=8)
            outline = ring.exterior if ring.geom_type == "Polygon" else None
            if outline is None:
                continue
            spokes = ignored = 0
            ignored_at = None
            for fill in zone_fills:
                points = _crossings(copper.core[fill], outline)
                if len(points) < 2:
                    continue
                if links.get(fill, set()) <= {pad_item}:    # an island that connects only this pad
                    ignored += len(points) // 2
                    ignored_at = points[:2].mean(axis=0)
                else:
                    spokes += len(points) // 2
            if spokes == 0 and ignored == 0:
                continue
            if spokes >= minimum:
                continue
            spokes += _track_spokes(copper, tracks, net, bit, ring, zone_fills)
            if spokes == 0:
                spokes, ignored = ignored, 0
            if spokes < minimum:
                findings.append(_finding(board, copper, zone, layer, pad_item, spokes, ignored, ignored_at, minimum))
    return findings


def _connection(zone: Zone, footprint, pad) -> int:
    """KiCad's zone connection of the pad to the zone: the pad's, its footprint's, the zone's."""
    value = pad.zone_connect if pad.zone_connect is not None else footprint.zone_connect
    if value is None:
        value = _ZONE_CONNECT.get(zone.connect, THERMAL)
    if value == THT_THERMAL:
        return THERMAL if pad.kind == "thru_hole" else SOLID
    return value


def _crossings(polygon, outline) -> np.ndarray:
    """Distinct points where the fill's outline (holes and all) crosses the ring."""
    clipped = shapely.clip_by_rect(polygon.boundary, *outline.bounds)
    if clipped.is_empty:
        return np.empty((0, 2))
    points = shapely.get_coordinates(shapely.intersection(clipped, outline))
    if not len(points):
        return points
    return np.unique(np.round(points, 6), axis=0)


def _track_spokes(copper: Copper, tracks: np.ndarray, net: int, bit: int, ring, zone_fills: list[int]) -> int:
    """Tracks of the net from inside the ring to a point in the fill. Of any layer, as KiCad
    counts them (its connected tracks of the pad, their ends tested against this layer's fill)."""
    count = 0
    candidates = tracks[copper.net[tracks] == net]
    if not len(candidates):
        return 0
    x0, y0, x1, y1 = ring.bounds
    starts = copper.anchor[candidates]
    ends = shapely.get_coordinates(shapely.get_point(copper.core[candidates], -1))
    near = ((np.minimum(starts[:, 0], ends[:, 0]) <= x1) & (np.maximum(starts[:, 0], ends[:, 0]) >= x0)
            & (np.minimum(starts[:, 1], ends[:, 1]) <= y1) & (np.maximum(starts[:, 1], ends[:, 1]) >= y0))
    fill = shapely.union_all(copper.core[zone_fills])
    for start, end in zip(starts[near], ends[near]):
        if shapely.contains_xy(ring, *start):
            count += bool(shapely.intersects_xy(fill, *end))
        elif shapely.contains_xy(ring, *end):
            count += bool(shapely.intersects_xy(fill, *start))
    return count


def _finding(board: Board, copper: Copper, zone: Zone, layer: str, pad_item: int, spokes: int, ignored: int,
             ignored_at, minimum: int) -> Finding:
    footprint, pad = copper.owner[pad_item]
    where = footprint.reference or footprint.lib_id
    if ignored:
        detail = f"{ignored} spoke(s) reach only an isolated island of the fill"
        x, y = ignored_at
    else:
        detail = f"{spokes} spoke(s), the board needs {minimum}"
        x, y = pad.x, pad.y
    return Finding("board.starved-thermal",
                   f"pad {pad.number} of {where} (net {pad.net}) joins the {zone.net} zone on {layer} by too few "
                   f"thermal spokes: {detail}",
                   identity=(board.file, "thermal", f"{footprint.uuid or where}/pad {pad.number}", zone.uuid, layer),
                   severity="error", path=board.file, line=pad.line, column=pad.column,
                   kicad_type="starved_thermal",
                   extra={"x": round(float(x), 4), "y": round(float(y), 4), "layer": layer, "count": 1,
                          "actual": spokes, "required": minimum, "nets": [pad.net],
                          "uuids": [u for u in (zone.uuid, pad.uuid) if u]})

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
    # How many items (other than fills) each fill outline touches, and which when it is one.
    solid = copper.kind != ZONE
    fill_side = np.concatenate([touching_a[~solid[touching_a] & solid[touching_b]],
                                touching_b[~solid[touching_b] & solid[touching_a]]])
    item_side = np.concatenate([touching_b[~solid[touching_a] & solid[touching_b]],
                                touching_a[~solid[touching_b] & solid[touching_a]]])
    link_count = np.zeros(len(copper), dtype=np.int64)
    only_link = np.full(len(copper), -1, dtype=np.int64)
    if len(fill_side):
        pairs = np.unique(fill_side.astype(np.int64) * len(copper) + item_side)
        fills_linked, items_linked = pairs // len(copper), pairs % len(copper)
        np.add.at(link_count, fills_linked, 1)
        only_link[fills_linked] = items_linked
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
    # The fills' outlines as the copper's chains: a pad's ring meets a few of them.
    fill_units = np.flatnonzero(copper.kind[copper.unit_item] == ZONE)
    chain_tree = shapely.STRtree(copper.unit_geom[fill_units])
    findings = []
    tracks = np.flatnonzero(((copper.kind == TRACK) | (copper.kind == ARC)) & (copper.net != 0))
    track_ends = shapely.get_coordinates(shapely.get_point(copper.core[tracks], -1)).reshape(-1, 2)
    for (_, layer), zone_fills in by_zone_layer.items():
        zone = copper.owner[zone_fills[0]][0]
        zone_fill_set = set(zone_fills)
        bit = 1 << copper.layer_names.index(layer)
        net = copper.net[zone_fills[0]]
        fill_bounds = shapely.bounds(copper.core[zone_fills])
        zone_bounds = (fill_bounds[:, 0].min(), fill_bounds[:, 1].min(), fill_bounds[:, 2].max(),
                       fill_bounds[:, 3].max())
        mine = (copper.net[pads] == net) & ((copper.layers[pads] & bit) != 0)
        mine &= ((pad_bounds[:, 2] >= zone_bounds[0]) & (pad_bounds[:, 0] <= zone_bounds[2])
                 & (pad_bounds[:, 3] >= zone_bounds[1]) & (pad_bounds[:, 1] <= zone_bounds[3]))
        # Thermal pads only, their rings grown by half their gap in one call, and the fill
        # chains near each ring found in one query.
        thermal, gaps = [], []
        for pad_item in pads[mine].tolist():
            footprint, pad = copper.owner[pad_item]
            if _connection(zone, footprint, pad) != THERMAL:
                continue
            thermal.append(pad_item)
            gaps.append(pad.thermal_gap if pad.thermal_gap is not None else (
                footprint.thermal_gap if footprint.thermal_gap is not None else zone.thermal_gap))
        if not thermal:
            continue
        thermal_items = np.array(thermal, dtype=np.int64)
        rings = shapely.buffer(copper.core[thermal_items], copper.radius[thermal_items] + np.array(gaps) / 2,
                               quad_segs=8)
        ring_index, chain_index = chain_tree.query(rings, predicate="intersects")
        order = np.argsort(ring_index, kind="stable")
        ring_index, chain_index = ring_index[order], chain_index[order]
        has_chains = np.unique(ring_index)
        chains_of = np.split(chain_index, np.searchsorted(ring_index, has_chains[1:])) if len(has_chains) else []
        for k, near_units in zip(has_chains.tolist(), chains_of):
            pad_item = int(thermal_items[k])
            ring = rings[k]
            if ring.geom_type != "Polygon":
                continue
            outline = ring.exterior
            near = fill_units[near_units]
            near_fill = copper.unit_item[near]
            spokes = ignored = 0
            ignored_at = None
            for fill in set(near_fill.tolist()) & zone_fill_set:   # this zone's outlines near the ring
                chains = near[near_fill == fill]
                points = _crossings(copper.unit_geom[chains], outline)
                if len(points) < 2:
                    continue
                if link_count[fill] == 0 or (link_count[fill] == 1 and only_link[fill] == pad_item):
                    # an island that connects only this pad
                    ignored += len(points) // 2
                    ignored_at = points[:2].mean(axis=0)
                else:
                    spokes += len(points) // 2
            if spokes == 0 and ignored == 0:
                continue
            if spokes >= minimum:
                continue
            spokes += _track_spokes(copper, tracks, track_ends, net, bit, ring, zone_fills)
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


def _crossings(chains: np.ndarray, outline) -> np.ndarray:
    """Distinct points where the fill's outline (holes and all: the chains of it near the ring)
    crosses the ring: every segment of one against every segment of the other, in arrays."""
    coords, index = shapely.get_coordinates(chains, return_index=True)
    same = index[1:] == index[:-1]
    p, r = coords[:-1][same], (coords[1:] - coords[:-1])[same]          # fill segments: p + t r
    ring = shapely.get_coordinates(outline)
    q, s = ring[:-1], ring[1:] - ring[:-1]                               # ring segments: q + u s
    if not len(p) or not len(q):
        return np.empty((0, 2))
    cross = r[:, None, 0] * s[None, :, 1] - r[:, None, 1] * s[None, :, 0]
    qp_x, qp_y = q[None, :, 0] - p[:, None, 0], q[None, :, 1] - p[:, None, 1]
    with np.errstate(divide="ignore", invalid="ignore"):
        t = (qp_x * s[None, :, 1] - qp_y * s[None, :, 0]) / cross
        u = (qp_x * r[:, None, 1] - qp_y * r[:, None, 0]) / cross
    hit = (cross != 0) & (t >= 0) & (t <= 1) & (u >= 0) & (u <= 1)
    rows, _ = np.nonzero(hit)
    if not len(rows):
        return np.empty((0, 2))
    points = p[rows] + t[hit][:, None] * r[rows]
    distinct = dict.fromkeys(map(tuple, np.round(points, 6).tolist()))   # a handful: no np.unique
    return np.array(list(distinct), dtype=np.float64)


def _track_spokes(copper: Copper, tracks: np.ndarray, track_ends: np.ndarray, net: int, bit: int, ring,
                  zone_fills: list[int]) -> int:
    """Tracks of the net from inside the ring to a point in the fill. Of any layer, as KiCad
    counts them (its connected tracks of the pad, their ends tested against this layer's fill)."""
    count = 0
    mine = copper.net[tracks] == net
    candidates = tracks[mine]
    if not len(candidates):
        return 0
    x0, y0, x1, y1 = ring.bounds
    starts = copper.anchor[candidates]
    ends = track_ends[mine]
    near = ((np.minimum(starts[:, 0], ends[:, 0]) <= x1) & (np.maximum(starts[:, 0], ends[:, 0]) >= x0)
            & (np.minimum(starts[:, 1], ends[:, 1]) <= y1) & (np.maximum(starts[:, 1], ends[:, 1]) >= y0))
    fills = copper.core[zone_fills]
    for start, end in zip(starts[near], ends[near]):
        if shapely.contains_xy(ring, *start):
            count += bool(shapely.intersects_xy(fills, *end).any())
        elif shapely.contains_xy(ring, *end):
            count += bool(shapely.intersects_xy(fills, *start).any())
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

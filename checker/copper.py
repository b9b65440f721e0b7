"""The board's copper as GEOS geometry, for clearance, shorts, connectivity and edge checks.

Every copper item is a *core* geometry grown by a *radius*: a track is its
centreline (segment, or an arc as a polyline within 0.005 mm) grown by half
its width, a via its centre grown by half its diameter, a round or oval pad a
point or segment grown by half its width, a rounded rectangle the rectangle
shrunk by its corner radius and grown back; rectangles, chamfered and
trapezoid pads, custom pads (anchor plus primitives) and zone fills are
polygons with radius 0. The gap between two items is then the GEOS distance
between the cores minus both radii: exact for every round shape, with no
buffering.

A zone fill is one big polygon (thousands of points). For the pair search it
is represented by its outline cut into short chains ("units") in the same
STRtree as every other item, so a query costs the neighbourhood, not the
fill; copper lying wholly inside a fill is found with a prepared
point-in-polygon test of each item's anchor.

Everything is arrays (numpy) and vectorized shapely 2 calls; Python loops run
per footprint pad shape only where a pad needs its own polygon.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import chain

import numpy as np
import shapely

from .board import Board, Pad
from .geometry import area_polygons, box_pairs, rotate
from .sexpr import Location

TRACK, ARC, VIA, PAD, ZONE, SHAPE = range(6)
KIND_NAMES = ("Track", "Arc", "Via", "Pad", "Zone", "Shape")
FILL_CHAIN = 24          # points per outline chain of a zone fill in the STRtree


@dataclass
class Copper:
    """Copper items (tracks, arcs, vias, pads, zone fills) as parallel arrays.

    ``units`` are what the STRtree holds: one per item, except zone fills,
    which contribute their outline chains; ``unit_item`` maps a unit to its item.
    """

    layer_names: list[str]
    net_names: list[str]                       # index 0 is "" (no net)
    kind: np.ndarray                           # per item
    net: np.ndarray
    layers: np.ndarray                         # bit i = layer_names[i]
    core: np.ndarray                           # shapely geometry per item (fills: the polygon)
    radius: np.ndarray
    anchor: np.ndarray                         # N x 2: a point of the copper (pad centre, track start)
    local_clearance: np.ndarray                # 0: none
    footprint: np.ndarray                      # pads: index into board.footprints, else -1
    owner: list                                # Track, Via, (Footprint, Pad) or (Zone, layer)
    unit_geom: np.ndarray
    unit_item: np.ndarray
    unit_radius: np.ndarray
    fills: np.ndarray                          # item indices of zone fills
    # A via or pad that KiCad does not flash on some of its layers (remove unused layers) is
    # two items: its pad on the layers where it is flashed, and its hole (radius: half the
    # drill) on the others, which is what clearance is measured to there. ``grow`` is what
    # the hole item lacks of the full pad (connectivity still joins by the full pad, as
    # KiCad's does), ``hole_of`` pairs each such hole item with its pad item.
    grow: np.ndarray = field(default_factory=lambda: np.zeros(0))
    hole_of: tuple[np.ndarray, np.ndarray] = field(
        default_factory=lambda: (np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64)))
    _unit_bounds: np.ndarray | None = field(default=None, repr=False)
    offset_of: Callable[[Location], int] | None = field(default=None, repr=False)   # Board.offset_of

    @property
    def unit_bounds(self) -> np.ndarray:
        """Each unit's box (x0, y0, x1, y1): the pair and dangling-end searches both start from them."""
        if self._unit_bounds is None:
            self._unit_bounds = shapely.bounds(self.unit_geom)
        return self._unit_bounds

    def __len__(self) -> int:
        return len(self.kind)

    def layer_list(self, mask: int) -> list[str]:
        return [name for i, name in enumerate(self.layer_names) if mask >> i & 1]

    def first_layer(self, mask: int) -> str:
        for i, name in enumerate(self.layer_names):
            if mask >> i & 1:
                return name
        return ""

    def label(self, item: int) -> str:
        """How a person finds the item: "pad 3 of U1", "track", "via", "zone fill"."""
        kind = self.kind[item]
        owner = self.owner[item]
        if kind == PAD:
            footprint, pad = owner
            where = footprint.reference or footprint.lib_id
            return f"pad {pad.number} of {where}" if pad.number else f"a pad of {where}"
        if kind == SHAPE:
            return f"copper {owner.kind} of {owner.footprint.reference}" if owner.footprint is not None \
                else f"copper {owner.kind}"
        return {TRACK: "track", ARC: "arc track", VIA: "via", ZONE: "zone fill"}[int(kind)]

    def identity(self, item: int) -> str:
        """What stays the same when the item moves: uuid, or footprint and pad number."""
        kind = self.kind[item]
        owner = self.owner[item]
        if kind == PAD:
            footprint, pad = owner
            return f"{footprint.uuid or footprint.reference}/pad {pad.number}"
        if kind == ZONE:
            zone, layer = owner
            return f"zone {zone.uuid or zone.net}/{layer}"
        return owner.uuid or f"{KIND_NAMES[kind].lower()}@{self.anchor[item][0]:g},{self.anchor[item][1]:g}"

    def uuid(self, item: int) -> str:
        """The KiCad uuid of the item (a pad's own, a fill's zone), "" when the file has none."""
        owner = self.owner[item]
        if self.kind[item] == PAD:
            return owner[1].uuid
        if self.kind[item] == ZONE:
            return owner[0].uuid
        return owner.uuid

    def file_order(self, item: int) -> int:
        """Where the item's list (a pad's own, a fill's zone) starts in the board's file: items
        sort by it as KiCad saved them (a board built from two files' lists too: Board.offset_of)."""
        owner = self.owner[item]
        kind = self.kind[item]
        location = owner[1].location if kind == PAD else owner[0].location if kind == ZONE else owner.location
        if self.offset_of is not None:
            return self.offset_of(location)
        return location.source.offset(location.ordinal)

    def where(self, item: int) -> tuple[int, int]:
        """File line and column of the item (a pad's own line, a fill's zone)."""
        owner = self.owner[item]
        if self.kind[item] == PAD:
            return owner[1].line, owner[1].column
        if self.kind[item] == ZONE:
            return owner[0].line, owner[0].column
        return owner.line, owner.column


def layer_bits(names: list[str], order: list[str]) -> int:
    index = {name: i for i, name in enumerate(order)}
    every = (1 << len(order)) - 1
    outer = (1 << index[order[0]]) | (1 << index[order[-1]]) if order else 0
    mask = 0
    for name in names:
        if name == "*.Cu":
            mask |= every
        elif name == "*In.Cu":
            mask |= every & ~outer
        elif name == "F&B.Cu":   # KiCad 5
            mask |= outer
        elif name in index:
            mask |= 1 << index[name]
    return mask


def _span(names: list[str], order: list[str]) -> int:
    """Layers a via spans: everything between its two named layers."""
    ends = [order.index(name) for name in names if name in order]
    if len(ends) != 2:
        return (1 << len(order)) - 1
    low, high = min(ends), max(ends)
    return sum(1 << i for i in range(low, high + 1))


def pad_layers(pad: Pad, order: list[str]) -> int:
    """Every copper layer of the pad's layer list; where it is flashed is decided later
    (see _split_unflashed), once the tracks that may connect to it are known."""
    return layer_bits(pad.layers, order)


def _pad_polygon(pad: Pad) -> shapely.Geometry | None:
    """Pads that need their own polygon, in board coordinates: chamfered, trapezoid, custom."""
    half_w, half_h = pad.width / 2, pad.height / 2
    if pad.shape == "trapezoid":
        dx, dy = pad.delta[0] / 2, pad.delta[1] / 2
        local = [(-half_w - dy, half_h + dx), (half_w + dy, half_h - dx),
                 (half_w - dy, -half_h + dx), (-half_w + dy, -half_h - dx)]
        return shapely.Polygon([_placed(p, pad) for p in local])
    if pad.shape == "custom":
        parts = []
        if pad.anchor == "rect":
            parts.append(shapely.box(-half_w, -half_h, half_w, half_h))
        else:
            parts.append(shapely.Point(0, 0).buffer(min(half_w, half_h), quad_segs=16))
        for primitive in pad.primitives:
            parts.append(_primitive_shape(primitive))
        shape = shapely.union_all([p for p in parts if p is not None and not p.is_empty])
        coords = shapely.get_coordinates(shape)
        if not len(coords):
            return None
        return shapely.transform(shape, lambda xy: np.array([_placed(tuple(p), pad) for p in xy]).reshape(-1, 2))
    # chamfered (rounded) rectangle
    polygon = shapely.box(-half_w, -half_h, half_w, half_h)
    size = pad.chamfer_ratio * min(pad.width, pad.height)
    corners = {"top_left": (-half_w, -half_h), "top_right": (half_w, -half_h),
               "bottom_left": (-half_w, half_h), "bottom_right": (half_w, half_h)}
    for name in pad.chamfer:
        if name in corners and size > 0:
            cx, cy = corners[name]
            sx, sy = math.copysign(size, -cx), math.copysign(size, -cy)
            polygon = polygon.difference(shapely.Polygon([(cx, cy), (cx + sx, cy), (cx, cy + sy)]))
    radius = pad.corner_ratio * min(pad.width, pad.height) if pad.shape == "roundrect" else 0.0
    if radius > 0:
        polygon = polygon.buffer(-radius, join_style="mitre").buffer(radius, quad_segs=8)
    return shapely.transform(polygon, lambda xy: np.array([_placed(tuple(p), pad) for p in xy]).reshape(-1, 2))


def pad_outline(pad: Pad) -> shapely.Geometry | None:
    """A pad's whole copper as one polygon in board coordinates (arcs within a micrometre)."""
    shape = pad.shape
    chamfered = bool(pad.chamfer) and pad.chamfer_ratio > 0
    if shape in ("circle", "oval") or (shape == "roundrect" and pad.corner_ratio >= 0.5 and not chamfered):
        radius = pad.width / 2 if shape == "circle" else min(pad.width, pad.height) / 2
        reach = (pad.width / 2 - radius, pad.height / 2 - radius)
        if max(reach) <= 1e-9:
            core = shapely.Point(_placed((0.0, 0.0), pad))
        else:
            core = shapely.LineString([_placed((-reach[0], -reach[1]), pad), _placed(reach, pad)])
        return core.buffer(radius, quad_segs=64)
    if shape in ("rect", "roundrect") and not chamfered:
        half_w, half_h = pad.width / 2, pad.height / 2
        radius = pad.corner_ratio * min(pad.width, pad.height) if shape == "roundrect" else 0.0
        corners = [_placed((sx * (half_w - radius), sy * (half_h - radius)), pad)
                   for sx, sy in ((-1, -1), (1, -1), (1, 1), (-1, 1))]
        box = shapely.Polygon(corners)
        return box.buffer(radius, quad_segs=64) if radius > 0 else box
    return _pad_polygon(pad)


def _primitive_shape(primitive) -> shapely.Geometry | None:
    half = primitive.width / 2
    points = primitive.points
    if primitive.kind in ("poly", "rect"):
        if len(points) < 3:     # no area: at most its stroke (KiCad inflates the outline by it)
            if not points or half <= 0:
                return None
            core = shapely.LineString(points) if len(points) >= 2 else shapely.Point(points[0])
            return core.buffer(half, quad_segs=8)
        shape = shapely.Polygon(points)
        if not shape.is_valid:
            shape = shapely.make_valid(shape)
        if not primitive.filled:
            shape = shapely.LinearRing(points)
        return shape.buffer(half, quad_segs=8) if half > 0 else shape
    if primitive.kind == "circle":
        centre, rim = points
        radius = math.hypot(rim[0] - centre[0], rim[1] - centre[1])
        if primitive.filled:
            return shapely.Point(centre).buffer(radius + half, quad_segs=16)
        return shapely.Point(centre).buffer(radius + half, quad_segs=16).difference(
            shapely.Point(centre).buffer(max(0.0, radius - half), quad_segs=16))
    if primitive.kind in ("line", "arc") and len(points) >= 2:
        return shapely.LineString(points).buffer(max(half, 1e-6), quad_segs=8)
    return None


def _placed(point, pad: Pad) -> tuple[float, float]:
    """A point of the pad's copper, from the pad's frame to the board. KiCad's pad
    "offset" moves the copper away from the hole, which stays at the pad's position."""
    x, y = rotate((point[0] + pad.drill_offset[0], point[1] + pad.drill_offset[1]), pad.rotation)
    return (x + pad.x, y + pad.y)


def _hole_placed(point, pad: Pad) -> tuple[float, float]:
    x, y = rotate(point, pad.rotation)
    return (x + pad.x, y + pad.y)


class _Groups:
    """Items collected group by group (all segments, all vias, ...) before they become arrays."""

    def __init__(self):
        self.parts: list[dict] = []

    def add(self, kind, net, layers, core, radius, anchor, local, footprint, owner):
        count = len(owner)
        if not count:
            return
        kinds = np.asarray(kind, dtype=np.int8)
        self.parts.append(dict(
            kind=np.broadcast_to(kinds, (count,)), net=np.asarray(net, dtype=np.int32),
            layers=np.asarray(layers, dtype=np.int64), core=np.asarray(core, dtype=object).reshape(count),
            radius=np.asarray(radius, dtype=np.float64), anchor=np.asarray(anchor, dtype=np.float64).reshape(count, 2),
            local=np.broadcast_to(np.asarray(local, dtype=np.float64), (count,)),
            footprint=np.broadcast_to(np.asarray(footprint, dtype=np.int32), (count,)), owner=list(owner)))

    def column(self, key: str, dtype) -> np.ndarray:
        if not self.parts:
            return np.empty(0, dtype=dtype)
        return np.concatenate([np.asarray(part[key], dtype=dtype) for part in self.parts])


def build_copper(board: Board) -> Copper:
    order = board.copper_order()
    copper_set = set(order)
    net_index: dict[str, int] = {"": 0}

    def net_of(name: str) -> int:
        index = net_index.get(name)
        if index is None:
            index = net_index[name] = len(net_index)
        return index

    groups = _Groups()
    layer_index = {name: i for i, name in enumerate(order)}
    every = (1 << len(order)) - 1

    # Tracks: straight segments in one vectorized call, arcs as their polylines.
    segments = [t for t in board.tracks if t.layer in copper_set and len(t.points) == 2 and t.width > 0]
    if segments:
        coords = np.fromiter(chain.from_iterable(chain.from_iterable(t.points for t in segments)),
                             dtype=np.float64, count=4 * len(segments)).reshape(-1, 2, 2)
        groups.add(TRACK, [net_of(t.net) for t in segments], [1 << layer_index[t.layer] for t in segments],
                   shapely.linestrings(coords), [t.width / 2 for t in segments], coords[:, 0, :], 0.0, -1, segments)
    arcs = [t for t in board.tracks if t.layer in copper_set and len(t.points) > 2 and t.width > 0]
    if arcs:
        groups.add(ARC, [net_of(t.net) for t in arcs], [1 << layer_index[t.layer] for t in arcs],
                   [shapely.LineString(t.points) for t in arcs], [t.width / 2 for t in arcs],
                   [t.points[0] for t in arcs], 0.0, -1, arcs)
    # Vias: their centres.
    vias = [v for v in board.vias if v.diameter]
    if vias:
        centres = np.array([(v.x, v.y) for v in vias], dtype=np.float64)
        groups.add(VIA, [net_of(v.net) for v in vias],
                   [every if v.via_type == "through" else _span(v.layers, order) for v in vias],
                   shapely.points(centres), [v.diameter / 2 for v in vias], centres, 0.0, -1, vias)
    _add_pads(groups, board, order, net_of)
    _add_shapes(groups, board, layer_index, net_of)
    # Zone fills (as KiCad last saved them).
    fill_owners, fill_polygons, fill_anchors = [], [], []
    for zone in board.zones:
        if zone.keepout:
            continue
        for layer, points in zone.fills:
            if layer not in layer_index:
                continue
            # A degenerate outline is no copper, a crossing one its lobes (geometry.area_polygons).
            for lobe, polygon in enumerate(area_polygons(points)):
                fill_owners.append((zone, layer))
                fill_polygons.append(polygon)
                fill_anchors.append(points[0] if lobe == 0 and polygon.exterior.coords[0] == tuple(points[0])
                                    else polygon.exterior.coords[0])
    first_fill = sum(len(part["owner"]) for part in groups.parts)
    if fill_owners:
        groups.add(ZONE, [net_of(z.net) for z, _ in fill_owners], [1 << layer_index[l] for _, l in fill_owners],
                   fill_polygons, [z.min_thickness / 2 if z.outline_thickness else 0.0 for z, _ in fill_owners],
                   fill_anchors,
                   [z.clearance or 0.0 for z, _ in fill_owners], -1, fill_owners)
    holes = _split_unflashed(order, groups)
    kind = groups.column("kind", np.int8)
    core = groups.column("core", object)
    radius = groups.column("radius", np.float64)
    owner = [o for part in groups.parts for o in part["owner"]]
    fills = np.arange(first_fill, first_fill + len(fill_owners), dtype=np.int64)
    grow = np.zeros(len(kind))
    hole_of = (np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64))
    if holes is not None:
        pad_items, hole_grow = holes
        hole_items = np.arange(len(kind) - len(pad_items), len(kind))
        grow[hole_items] = hole_grow
        hole_of = (pad_items, hole_items)
    # Units for the STRtree: every item but fills as itself, fills as outline chains.
    solid = np.flatnonzero(kind != ZONE)
    unit_geom = [core[solid]]
    unit_item = [solid]
    for item in fills:
        chains = _outline_chains(core[item])
        unit_geom.append(chains)
        unit_item.append(np.full(len(chains), item, dtype=np.int64))
    unit_item_array = np.concatenate(unit_item)
    names = [""] * len(net_index)
    for name, index in net_index.items():
        names[index] = name
    copper = Copper(
        layer_names=order, net_names=names, kind=kind, net=groups.column("net", np.int32),
        layers=groups.column("layers", np.int64), core=core, radius=radius,
        anchor=groups.column("anchor", np.float64).reshape(-1, 2),
        local_clearance=groups.column("local", np.float64), footprint=groups.column("footprint", np.int32),
        owner=owner, unit_geom=np.concatenate(unit_geom), unit_item=unit_item_array,
        unit_radius=radius[unit_item_array], fills=fills, grow=grow, hole_of=hole_of, offset_of=board.offset_of)
    propagate_nets(copper)
    return copper


def propagate_nets(copper: Copper) -> None:
    """Give each cluster of touching copper one net, as KiCad 9 does when it loads a board
    (CONNECTIVITY_DATA::RecalculateRatsnest -> CN_CONNECTIVITY_ALGO::PropagateNets), so every
    check sees the nets KiCad's DRC sees.

    KiCad's rule (pcbnew/connectivity: SearchClusters(CSM_PROPAGATE), CN_CLUSTER::Add,
    propagateConnections): clusters are touching tracks, arcs, vias, pads and board copper
    shapes of any net, zones left out; two pads of different nets never join. A cluster whose
    pads (on a net, not "free") carry two nets is conflicting and left alone (its shorts are
    reported). Otherwise the cluster's origin net is its pads' net, or, with no pad, the net of
    its first item: the cluster is searched from its earliest item (tracks and vias in file
    order, then pads, then shapes) breadth first. Every track, arc, via and board shape then
    takes the origin net; pads and zones keep theirs. kicad-cli 9.0.8 names both crossing
    pad-less tracks of kicad_bot_examples/drc-violation "Track [NET_A]" and reports no short.
    """
    changeable = np.isin(copper.kind, (TRACK, ARC, VIA)) | ((copper.kind == SHAPE) & (copper.footprint < 0))
    members = np.flatnonzero(changeable | (copper.kind == PAD))
    if not changeable.any() or len(members) < 2:
        return
    grown = copper.radius[members] + copper.grow[members] + _ON_COPPER
    bounds = shapely.bounds(copper.core[members]) + np.outer(grown, (-1, -1, 1, 1))
    boxes = shapely.box(bounds[:, 0], bounds[:, 1], bounds[:, 2], bounds[:, 3])
    firsts, seconds = [], []
    for bit in range(len(copper.layer_names)):     # per layer: an envelope test in C
        on = np.flatnonzero((copper.layers[members] >> bit) & 1)
        if len(on) < 2:
            continue
        left, right = box_pairs(boxes[on])    # bounded: stacked copper is refused, not measured
        keep = left < right
        firsts.append(on[left[keep]])
        seconds.append(on[right[keep]])
    if not firsts:
        return
    key = np.unique(np.concatenate(firsts).astype(np.int64) * len(members) + np.concatenate(seconds))
    a, b = members[key // len(members)], members[key % len(members)]
    keep = np.ones(len(a), dtype=bool)
    # Two pads of different nets never join (neither can change its net).
    keep &= ~((copper.kind[a] == PAD) & (copper.kind[b] == PAD) & (copper.net[a] != copper.net[b]))
    a, b = a[keep], b[keep]

    def touching(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        gap = shapely.distance(copper.core[x], copper.core[y]) - copper.radius[x] - copper.radius[y] \
            - copper.grow[x] - copper.grow[y]
        return gap < _ON_COPPER

    # Only a cluster joining two nets (or no-net copper) can change: most boards have none.
    other = copper.net[a] != copper.net[b]
    if not touching(a[other], b[other]).any():
        return
    joined = touching(a, b)
    a, b = a[joined], b[joined]
    # A pad or via split into its pad and its hole item is one item.
    a = np.concatenate([a, copper.hole_of[0]])
    b = np.concatenate([b, copper.hole_of[1]])
    # A cluster of one net (or of no-net copper alone) keeps it: only those of two or more are searched.
    root = components(len(copper), a, b)
    lowest, highest = copper.net.copy(), copper.net.copy()
    np.minimum.at(lowest, root, copper.net)
    np.maximum.at(highest, root, copper.net)
    mixed = lowest[root[a]] != highest[root[a]]
    a, b = a[mixed], b[mixed]
    neighbours: dict[int, list[int]] = {}
    for x, y in zip(a.tolist(), b.tolist()):
        neighbours.setdefault(x, []).append(y)
        neighbours.setdefault(y, []).append(x)
    rank = {PAD: 1, SHAPE: 2}
    key = {item: (rank.get(int(copper.kind[item]), 0), copper.file_order(item)) for item in neighbours}
    seen: set[int] = set()
    net = copper.net.copy()
    for root in sorted(neighbours, key=key.__getitem__):
        if root in seen:
            continue
        seen.add(root)
        cluster, queue = [], [root]
        while queue:                       # breadth first, as KiCad's search
            item = queue.pop(0)
            cluster.append(item)
            for other in sorted(neighbours[item], key=key.__getitem__):
                if other not in seen:
                    seen.add(other)
                    queue.append(other)
        pad_nets = {int(copper.net[i]) for i in cluster
                    if copper.kind[i] == PAD and copper.net[i] > 0 and not _free_pad(copper, i)}
        if len(pad_nets) > 1:
            continue                       # conflicting: KiCad leaves it as drawn
        origin = next(iter(pad_nets), 0) or next((int(copper.net[i]) for i in cluster if copper.net[i] > 0), 0)
        if origin:
            for item in cluster:
                if changeable[item]:
                    net[item] = origin
    copper.net = net


def components(count: int, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """For each of ``count`` items, the smallest item joined to it through the pairs (a, b).

    Union-find in array operations: every pair pulls the larger of its two labels down
    to the smaller (labels are always roots after the jumps), then labels jump to their
    label's label until they stop changing; repeated until no pair joins two labels.
    """
    label = np.arange(count)
    while len(a):
        label_a, label_b = label[a], label[b]
        if (label_a == label_b).all():
            break
        lower = np.minimum(label_a, label_b)
        np.minimum.at(label, label_a, lower)
        np.minimum.at(label, label_b, lower)
        while True:
            jumped = label[label]
            if (jumped == label).all():
                break
            label = jumped
    return label


def _free_pad(copper: Copper, item: int) -> bool:
    """KiCad's PAD::IsFreePad: a pad on a net KiCad made for a no-connect pin ("unconnected-(...")."""
    return copper.net_names[copper.net[item]].startswith("unconnected-(") and \
        copper.owner[item][1].pin_type == "no_connect"


# Connectivity's own slack: an anchor this close to an item's copper is on it.
_ON_COPPER = 0.0005


def _split_unflashed(order: list[str], groups: _Groups):
    """Vias and through-hole pads with "remove unused layers": KiCad flashes them on a layer
    only when a track, arc, via or pad of their net connects there (PCB_VIA::FlashLayer,
    PAD::FlashLayer: an anchor of one lies on the other's copper), on their end layers when
    "keep end layers" is set, and on the layers KiCad 9's zone filler saved in
    (zone_layer_connections). Elsewhere only the plated hole is there.

    Takes the unflashed layers off each such item and adds its hole, as one more group, on
    those layers. Returns (the pad items that lost layers, what each hole lacks of the
    pad's radius) or None when every via and pad is flashed wherever it is.
    """
    if not groups.parts or not order:
        return None
    kind = groups.column("kind", np.int8)
    candidates = np.flatnonzero((kind == VIA) | (kind == PAD))
    owner = [o for part in groups.parts for o in part["owner"]]
    index = {name: i for i, name in enumerate(order)}
    outer = 1 | (1 << (len(order) - 1))
    layers = groups.column("layers", np.int64)
    conditional = np.zeros(len(kind), dtype=np.int64)
    for item in candidates.tolist():
        thing = owner[item]
        if kind[item] == VIA:
            if not thing.unused_layers_removed or not thing.drill:
                continue
            fixed = 0
            if thing.end_layers_kept:
                ends = [index[name] for name in thing.layers if name in index]
                fixed = (1 << ends[0]) | (1 << ends[-1]) if thing.via_type != "through" and len(ends) == 2 else outer
        else:
            pad = thing[1]
            if pad.kind != "thru_hole" or not pad.unused_layers_removed or not pad.drill_size:
                continue
            thing = pad
            fixed = outer if pad.end_layers_kept else 0
        conditional[item] = layers[item] & ~(fixed | layer_bits(thing.zone_layers, order))
    items = np.flatnonzero(conditional)
    if not len(items):
        return None
    net = groups.column("net", np.int32)
    core = groups.column("core", object)
    radius = groups.column("radius", np.float64)
    anchor = groups.column("anchor", np.float64).reshape(-1, 2)
    connected = _connected_layers(items, conditional, kind, net, layers, core, radius, anchor)
    unflashed = conditional[items] & ~connected
    keep = unflashed != 0
    items, unflashed = items[keep], unflashed[keep]
    if not len(items):
        return None
    layers[items] &= ~unflashed
    start = 0
    for part in groups.parts:   # the pads keep only their flashed layers
        end = start + len(part["owner"])
        part["layers"] = layers[start:end]
        start = end
    hole_core, hole_radius, hole_anchor, grow = [], [], [], []
    for item in items.tolist():
        thing = owner[item]
        if kind[item] == VIA:
            hole_core.append(shapely.Point(thing.x, thing.y))
            hole_radius.append(thing.drill / 2)
            hole_anchor.append((thing.x, thing.y))
            grow.append(max(0.0, radius[item] - thing.drill / 2))
        else:
            pad = thing[1]
            shape, r = _hole_shape(pad)
            hole_core.append(shape)
            hole_radius.append(r)
            hole_anchor.append((pad.x, pad.y))
            offset = pad.drill_offset != (0.0, 0.0)
            grow.append(0.0 if offset else max(0.0, min(pad.width, pad.height) / 2 - r))
    local = groups.column("local", np.float64)
    footprint = groups.column("footprint", np.int32)
    groups.add(kind[items], net[items], unflashed, hole_core, hole_radius, hole_anchor, local[items],
               footprint[items], [owner[i] for i in items.tolist()])
    return items, np.array(grow, dtype=np.float64)


def _connected_layers(items, conditional, kind, net, layers, core, radius, anchor) -> np.ndarray:
    """For each of ``items``, the layers of its ``conditional`` ones where a track, arc, via or pad
    of its net connects: one's anchor (a track's two ends, a via's or pad's centre) lies on the
    other's copper."""
    connectors = np.flatnonzero((net != 0) & (kind != ZONE))
    connected = np.zeros(len(items), dtype=np.int64)
    if not len(connectors):
        return connected
    # The connectors' own geometries in the tree (no boxes to make for thousands of them); the
    # items' boxes grown by their radius and the widest connector's.
    tree = shapely.STRtree(core[connectors])
    local, found = tree.query(_boxes(core[items], radius[items] + float(radius[connectors].max())))
    mine, other = items[local], connectors[found]
    keep = (net[mine] == net[other]) & (mine != other) & ((layers[other] & conditional[mine]) != 0)
    local, mine, other = local[keep], mine[keep], other[keep]
    if not len(local):
        return connected
    # The item's centre on the other's copper.
    touching = shapely.distance(core[other], shapely.points(anchor[mine])) <= radius[other] + _ON_COPPER
    # The other's anchors on the item's copper: a track's two ends, a via's or pad's centre.
    starts = anchor[other]   # a track's anchor is its start
    ends = starts.copy()
    tracks = np.flatnonzero((kind[other] == TRACK) | (kind[other] == ARC))
    if len(tracks):
        ends[tracks] = shapely.get_coordinates(shapely.get_point(core[other[tracks]], -1))
    reach = radius[mine] + _ON_COPPER
    touching |= shapely.distance(core[mine], shapely.points(starts)) <= reach
    touching |= shapely.distance(core[mine], shapely.points(ends)) <= reach
    np.bitwise_or.at(connected, local[touching], (layers[other] & conditional[mine])[touching])
    return connected


def _boxes(geometries: np.ndarray, margin: np.ndarray) -> np.ndarray:
    bounds = shapely.bounds(geometries)
    return shapely.box(bounds[:, 0] - margin, bounds[:, 1] - margin, bounds[:, 2] + margin, bounds[:, 3] + margin)


def _hole_shape(pad: Pad):
    """A pad's drilled hole as a core and a radius: its centre, or a slot's centre line."""
    w, h = pad.drill_size
    r = min(w, h) / 2
    reach_x, reach_y = w / 2 - r, h / 2 - r
    if reach_x > 1e-9 or reach_y > 1e-9:
        return shapely.LineString([_hole_placed((-reach_x, -reach_y), pad), _hole_placed((reach_x, reach_y), pad)]), r
    return shapely.Point(pad.x, pad.y), r


def _add_shapes(groups: _Groups, board: Board, layer_index: dict[str, int], net_of) -> None:
    """Shapes drawn on copper: filled ones as polygons grown by half their stroke, the others as
    their stroke's centre line."""
    shapes = [s for s in board.copper_shapes if s.layer in layer_index and len(s.points) >= 2]
    if not shapes:
        return
    footprint_index = {id(f): i for i, f in enumerate(board.footprints)}
    cores, kept = [], []
    for shape in shapes:
        if shape.filled and len(shape.points) >= 4:
            core = shapely.make_valid(shapely.Polygon(shape.points))
        else:
            core = shapely.LineString(shape.points)
        if core.is_empty:
            continue
        cores.append(core)
        kept.append(shape)
    if not kept:
        return
    groups.add(SHAPE, [net_of(s.net) for s in kept], [1 << layer_index[s.layer] for s in kept], cores,
               [s.width / 2 for s in kept], [s.points[0] for s in kept], 0.0,
               [footprint_index.get(id(s.footprint), -1) if s.footprint is not None else -1 for s in kept], kept)


def _outline_chains(polygon) -> np.ndarray:
    """The fill's outline cut into chains of FILL_CHAIN points (consecutive chains share an end)."""
    ring = shapely.get_coordinates(polygon.exterior)
    count = len(ring) - 1
    starts = np.arange(0, count, FILL_CHAIN - 1)
    index = (starts[:, None] + np.arange(FILL_CHAIN)[None, :])
    index = np.minimum(index, count)   # the last chain repeats the closing point
    coords = ring[index]
    return shapely.linestrings(coords)


def _add_pads(groups: _Groups, board: Board, order: list[str], net_of) -> None:
    """Round, oval and (rounded) rectangular pads in vectorized batches; the rest one by one."""
    round_pads, line_pads, box_pads, other_pads = [], [], [], []
    masks: dict[tuple, int] = {}   # pads repeat a handful of layer lists
    for index, footprint in enumerate(board.footprints):
        for pad in footprint.pads:
            key = (*pad.layers, pad.unused_layers_removed, pad.kind, pad.end_layers_kept)
            mask = masks.get(key)
            if mask is None:
                mask = masks[key] = pad_layers(pad, order)
            if not mask or pad.width <= 0 or pad.height <= 0:
                continue
            if pad.kind == "np_thru_hole" and pad.drill_size and max(pad.width, pad.height) <= max(pad.drill_size) + 1e-9:
                continue   # a bare non-plated hole: no copper
            half_w, half_h = pad.width / 2, pad.height / 2
            entry = (footprint, pad, index, mask)
            shape = pad.shape
            chamfered = bool(pad.chamfer) and pad.chamfer_ratio > 0
            if shape in ("circle", "oval") or (shape == "roundrect" and pad.corner_ratio >= 0.5 and not chamfered):
                radius = half_w if shape == "circle" else min(half_w, half_h)
                reach = (half_w - radius, half_h - radius)
                (line_pads if max(reach) > 1e-9 else round_pads).append((entry, radius, reach))
            elif shape in ("rect", "roundrect") and not chamfered:
                radius = pad.corner_ratio * min(pad.width, pad.height) if shape == "roundrect" else 0.0
                box_pads.append((entry, radius, (half_w - radius, half_h - radius)))
            else:
                other_pads.append(entry)

    def add(batch, cores, radii, anchors=None):
        entries = [b[0] for b in batch]
        # The anchor is the pad's copper centre: its position moved by the pad offset.
        groups.add(PAD, [net_of(e[1].net) for e in entries], [e[3] for e in entries], cores, radii,
                   anchors if anchors is not None else _place_many(np.zeros((len(entries), 1, 2)),
                                                                   [e[1] for e in entries])[:, 0, :],
                   [e[1].clearance if e[1].clearance else (e[0].clearance or 0.0) for e in entries],
                   [e[2] for e in entries], [(e[0], e[1]) for e in entries])

    if round_pads:
        centres = np.array([_placed((0.0, 0.0), b[0][1]) for b in round_pads])
        add(round_pads, shapely.points(centres), [b[1] for b in round_pads], centres)
    if line_pads:
        reach = np.array([b[2] for b in line_pads], dtype=np.float64)   # N x 2: half the straight part
        local = _CORNERS[[0, 2]][None, :, :] * reach[:, None, :]
        add(line_pads, shapely.linestrings(_place_many(local, [b[0][1] for b in line_pads])),
            [b[1] for b in line_pads])
    if box_pads:
        half = np.array([b[2] for b in box_pads], dtype=np.float64)
        local = _CORNERS[None, :, :] * half[:, None, :]
        add(box_pads, shapely.polygons(_place_many(local, [b[0][1] for b in box_pads])), [b[1] for b in box_pads])
    shaped = [(entry, _pad_polygon(entry[1])) for entry in other_pads]
    shaped = [(entry, core) for entry, core in shaped if core is not None and not core.is_empty]
    if shaped:
        add([(entry,) for entry, _ in shaped], [core for _, core in shaped], [0.0] * len(shaped))


# A rectangle's corners around its centre, closed, for N x 2 half sizes: (-x, -y), (x, -y), ...
_CORNERS = np.array([(-1.0, -1.0), (1.0, -1.0), (1.0, 1.0), (-1.0, 1.0), (-1.0, -1.0)])


def _place_many(local: np.ndarray, pads: list[Pad]) -> np.ndarray:
    """Rotate (KiCad's sense) and move N x K x 2 local points to each pad."""
    angles = np.radians(np.array([p.rotation for p in pads], dtype=np.float64))[:, None]
    cos, sin = np.cos(angles), np.sin(angles)
    offsets = np.array([p.drill_offset for p in pads], dtype=np.float64)
    x, y = local[..., 0] + offsets[:, 0:1], local[..., 1] + offsets[:, 1:2]
    out = np.empty_like(local, dtype=np.float64)
    out[..., 0] = x * cos + y * sin + np.array([p.x for p in pads])[:, None]
    out[..., 1] = -x * sin + y * cos + np.array([p.y for p in pads])[:, None]
    return out


@dataclass
class Holes:
    """Drilled holes (vias, plated and non-plated pad holes) as cores grown by a radius."""

    core: np.ndarray
    radius: np.ndarray
    owner: list                 # Via or (Footprint, Pad)
    footprint: np.ndarray       # -1 for vias
    anchor: np.ndarray


def build_holes(board: Board) -> Holes:
    """Via holes, then pad holes in footprint order; round holes as points made in one call."""
    radius, owner, footprint, anchor, slots = [], [], [], [], {}
    for via in board.vias:
        if via.drill:
            radius.append(via.drill / 2)
            owner.append(via)
            footprint.append(-1)
            anchor.append((via.x, via.y))
    for index, fp in enumerate(board.footprints):
        for pad in fp.pads:
            if not pad.drill_size or min(pad.drill_size) <= 0:
                continue
            w, h = pad.drill_size
            r = min(w, h) / 2
            reach_x, reach_y = w / 2 - r, h / 2 - r
            if reach_x > 1e-9 or reach_y > 1e-9:   # a slot: the segment between its two end centres
                slots[len(owner)] = shapely.LineString([_hole_placed((-reach_x, -reach_y), pad),
                                                        _hole_placed((reach_x, reach_y), pad)])
            radius.append(r)
            owner.append((fp, pad))
            footprint.append(index)
            anchor.append((pad.x, pad.y))
    anchor_array = np.array(anchor, dtype=np.float64).reshape(-1, 2)
    core = shapely.points(anchor_array)
    for index, slot in slots.items():
        core[index] = slot
    return Holes(core=core, radius=np.array(radius, dtype=np.float64), owner=owner,
                 footprint=np.array(footprint, dtype=np.int32), anchor=anchor_array)

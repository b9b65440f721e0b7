"""The board's copper as shapes with a layer set and a net, for short and edge checks.

Every piece of copper becomes a "rounded chain": a few points grown by a
radius. A via is one point grown by half its diameter, a track segment two
points grown by half its width, a round or oval pad likewise; a rectangular
pad or a zone fill is a closed ring (radius 0; a rounded rectangle is the ring
shrunk by its corner radius, grown back by it). One distance function then
serves every pair: the distance between chains minus the radius, and zero when
a segment reaches inside a ring.

Approximations, all on the side of reporting rather than missing: trapezoid,
chamfered and custom pads are taken as their bounding rectangle (custom pads
by their anchor pad only); zone copper is the fill KiCad saved with the board,
so a zone that was never filled has no copper here.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from .board import Board, Footprint, Pad, Track, Via, Zone
from .geometry import Point, SegmentGrid, rotate, segment_distance


@dataclass(frozen=True)
class CopperShape:
    kind: str                   # track, via, pad, zone
    points: tuple[Point, ...]   # one point, a chain, or a ring (closed implicitly)
    radius: float
    closed: bool
    layers: frozenset[str]
    net: str
    owner: Track | Via | Footprint | Zone
    label: str                  # how a person finds it: "pad 3 of U1", "via", "zone fill"

    def edges(self) -> list[tuple[Point, Point]]:
        points = self.points
        if len(points) == 1:
            return [(points[0], points[0])]
        pairs = list(zip(points, points[1:]))
        if self.closed and points[0] != points[-1]:
            pairs.append((points[-1], points[0]))
        return pairs

    def distance_to_segment(self, a: Point, b: Point) -> float:
        """Gap between this copper and the segment a-b; 0 or less when they touch."""
        if self.closed and (_inside(a, self.points) or _inside(b, self.points)):
            return -self.radius
        return min(segment_distance(c, d, a, b) for c, d in self.edges()) - self.radius

    def gap_to(self, grid: SegmentGrid, reach: float) -> float:
        """Smallest gap to the segments indexed in ``grid``, looking ``reach`` beyond the copper.

        Each edge of the shape queries the grid near itself, so a zone fill
        of thousands of points costs its local neighbourhood, not the board.
        """
        closest = math.inf
        items = grid.items
        for a, b in self.edges():
            for index in grid.near(a, b, reach + self.radius):
                c, d, _ = items[index]
                closest = min(closest, segment_distance(a, b, c, d))
        closest -= self.radius
        if self.closed and closest > 0:  # a segment wholly inside the ring touches it too
            low, high = bounding_box(self)
            for index in grid.near(low, high, 0.0):
                c, d, _ = items[index]
                if _inside(c, self.points) or _inside(d, self.points):
                    return -self.radius
        return closest


def _inside(point: Point, ring: tuple[Point, ...]) -> bool:
    """Even-odd rule; a point exactly on an edge counts either way (its distance is 0 anyway)."""
    x, y = point
    inside = False
    previous = ring[-1]
    for current in ring:
        (x1, y1), (x2, y2) = previous, current
        if (y1 > y) != (y2 > y) and x < x1 + (y - y1) * (x2 - x1) / (y2 - y1):
            inside = not inside
        previous = current
    return inside


def copper_order(board: Board) -> list[str]:
    """Copper layers from top to bottom, as the board's layer table lists them."""
    copper = board.copper_layers()
    return [name for name in board.layers if name in copper] or sorted(copper)


def _pad_layers(pad: Pad, order: list[str]) -> frozenset[str]:
    layers: set[str] = set()
    for name in pad.layers:
        if name == "*.Cu":
            layers.update(order)
        elif name == "F&B.Cu":  # KiCad 5
            layers.update(order[:1] + order[-1:])
        elif name in order:
            layers.add(name)
    return frozenset(layers)


def pad_shape(pad: Pad, footprint: Footprint, order: list[str]) -> CopperShape | None:
    """None for pads without copper: non-plated holes and pads on no copper layer."""
    layers = _pad_layers(pad, order)
    if pad.kind == "np_thru_hole" or not layers or pad.width <= 0 or pad.height <= 0:
        return None
    half_w, half_h = pad.width / 2, pad.height / 2
    if pad.shape in ("circle", "oval"):
        radius = min(half_w, half_h)
        reach_x, reach_y = half_w - radius, half_h - radius
        local = [(-reach_x, -reach_y), (reach_x, reach_y)] if reach_x or reach_y else [(0.0, 0.0)]
        closed = False
    else:
        radius = pad.corner_ratio * min(pad.width, pad.height) if pad.shape == "roundrect" else 0.0
        sx, sy = half_w - radius, half_h - radius
        local = [(-sx, -sy), (sx, -sy), (sx, sy), (-sx, sy)]
        closed = True
    points = tuple(_placed(p, pad) for p in local)
    where = footprint.reference or footprint.lib_id
    return CopperShape("pad", points, radius, closed, layers, pad.net, footprint,
                       f"pad {pad.number} of {where}" if pad.number else f"a pad of {where}")


def _placed(point: Point, pad: Pad) -> Point:
    x, y = rotate(point, pad.rotation)
    return (x + pad.x, y + pad.y)


def via_shape(via: Via, order: list[str]) -> CopperShape | None:
    """A via spans the copper layers between its two named ones (all of them for a through via)."""
    if not via.diameter:
        return None
    ends = [order.index(name) for name in via.layers if name in order]
    layers = frozenset(order[min(ends):max(ends) + 1]) if len(ends) == 2 else frozenset(order)
    return CopperShape("via", ((via.x, via.y),), via.diameter / 2, False, layers, via.net, via, "via")


def track_shape(track: Track) -> CopperShape:
    return CopperShape("track", tuple(track.points), track.width / 2, False, frozenset((track.layer,)),
                       track.net, track, "track")


def zone_fill_shapes(zone: Zone, copper: set[str]) -> list[CopperShape]:
    return [CopperShape("zone", tuple(points), 0.0, True, frozenset((layer,)), zone.net, zone, "zone fill")
            for layer, points in zone.fills if layer in copper]


def bounding_box(shape: CopperShape) -> tuple[Point, Point]:
    """Corners of the box around the shape's points (pad it by ``radius`` for the copper)."""
    xs = [p[0] for p in shape.points]
    ys = [p[1] for p in shape.points]
    return (min(xs), min(ys)), (max(xs), max(ys))


def board_copper(board: Board, *, tracks: bool = True) -> list[CopperShape]:
    """Every copper shape of the board on a copper layer."""
    copper = board.copper_layers()
    order = copper_order(board)
    shapes: list[CopperShape] = []
    if tracks:
        shapes += [track_shape(t) for t in board.tracks if t.layer in copper and len(t.points) >= 2]
    shapes += [s for s in (via_shape(v, order) for v in board.vias) if s is not None]
    for footprint in board.footprints:
        shapes += [s for s in (pad_shape(p, footprint, order) for p in footprint.pads) if s is not None]
    for zone in board.zones:
        shapes += zone_fill_shapes(zone, copper)
    return shapes

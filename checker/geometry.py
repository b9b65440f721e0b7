"""Plane geometry for board rules: segment distances, arcs, a uniform grid index."""
from __future__ import annotations

import math
from collections import defaultdict
from typing import Iterable, Iterator

Point = tuple[float, float]


def point_segment_distance(p: Point, a: Point, b: Point) -> float:
    ax, ay = a
    dx, dy = b[0] - ax, b[1] - ay
    length2 = dx * dx + dy * dy
    if length2 == 0:
        return math.hypot(p[0] - ax, p[1] - ay)
    t = max(0.0, min(1.0, ((p[0] - ax) * dx + (p[1] - ay) * dy) / length2))
    return math.hypot(p[0] - (ax + t * dx), p[1] - (ay + t * dy))


def _orientation(a: Point, b: Point, c: Point) -> float:
    return (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0])


def segments_intersect(a: Point, b: Point, c: Point, d: Point) -> bool:
    d1, d2 = _orientation(c, d, a), _orientation(c, d, b)
    d3, d4 = _orientation(a, b, c), _orientation(a, b, d)
    return ((d1 > 0) != (d2 > 0)) and ((d3 > 0) != (d4 > 0)) and d1 != 0 and d2 != 0 and d3 != 0 and d4 != 0


def segment_distance(a: Point, b: Point, c: Point, d: Point) -> float:
    if segments_intersect(a, b, c, d):
        return 0.0
    return min(point_segment_distance(a, c, d), point_segment_distance(b, c, d),
               point_segment_distance(c, a, b), point_segment_distance(d, a, b))


def arc_through(start: Point, mid: Point, end: Point, pieces: int = 8) -> list[Point]:
    """Polyline approximating the circular arc through three points."""
    (x1, y1), (x2, y2), (x3, y3) = start, mid, end
    det = 2 * (x1 * (y2 - y3) + x2 * (y3 - y1) + x3 * (y1 - y2))
    if abs(det) < 1e-12:
        return [start, end]
    s1, s2, s3 = x1 * x1 + y1 * y1, x2 * x2 + y2 * y2, x3 * x3 + y3 * y3
    cx = (s1 * (y2 - y3) + s2 * (y3 - y1) + s3 * (y1 - y2)) / det
    cy = (s1 * (x3 - x2) + s2 * (x1 - x3) + s3 * (x2 - x1)) / det
    radius = math.hypot(x1 - cx, y1 - cy)
    a1 = math.atan2(y1 - cy, x1 - cx)
    a2 = math.atan2(y2 - cy, x2 - cx)
    a3 = math.atan2(y3 - cy, x3 - cx)
    sweep = (a3 - a1) % (2 * math.pi)
    if (a2 - a1) % (2 * math.pi) > sweep:  # the arc goes the other way round
        sweep -= 2 * math.pi
    return [start] + [(cx + radius * math.cos(a1 + sweep * i / pieces), cy + radius * math.sin(a1 + sweep * i / pieces))
                      for i in range(1, pieces)] + [end]


def arc_from_center(center: Point, start: Point, angle_degrees: float, pieces: int = 8) -> list[Point]:
    """KiCad 5 arcs: centre, start point and a sweep angle."""
    cx, cy = center
    radius = math.hypot(start[0] - cx, start[1] - cy)
    a1 = math.atan2(start[1] - cy, start[0] - cx)
    sweep = math.radians(angle_degrees)
    return [(cx + radius * math.cos(a1 + sweep * i / pieces), cy + radius * math.sin(a1 + sweep * i / pieces))
            for i in range(pieces + 1)]


def rotate(point: Point, degrees: float) -> Point:
    """KiCad rotation: positive angles turn counter-clockwise on screen (Y down)."""
    if not degrees:
        return point
    r = math.radians(degrees)
    c, s = math.cos(r), math.sin(r)
    x, y = point
    return (x * c + y * s, -x * s + y * c)


class SegmentGrid:
    """Buckets segments by the grid cells their padded bounding box touches,
    so neighbour queries cost the local density, not the board size."""

    def __init__(self, cell: float = 2.0):
        self.cell = cell
        self.cells: dict[tuple[int, int], list[int]] = defaultdict(list)
        self.items: list[tuple[Point, Point, object]] = []

    def _cells(self, a: Point, b: Point, pad: float) -> Iterator[tuple[int, int]]:
        cell = self.cell
        x0, x1 = sorted((a[0], b[0]))
        y0, y1 = sorted((a[1], b[1]))
        ix0, ix1 = math.floor((x0 - pad) / cell), math.floor((x1 + pad) / cell)
        iy0, iy1 = math.floor((y0 - pad) / cell), math.floor((y1 + pad) / cell)
        if (ix1 - ix0 + 1) * (iy1 - iy0 + 1) > 100_000:  # absurd coordinates: one coarse bucket
            yield (0, 0)
            return
        for ix in range(ix0, ix1 + 1):
            for iy in range(iy0, iy1 + 1):
                yield (ix, iy)

    def add(self, a: Point, b: Point, payload: object, pad: float = 0.0) -> int:
        index = len(self.items)
        self.items.append((a, b, payload))
        for key in self._cells(a, b, pad):
            self.cells[key].append(index)
        return index

    def near(self, a: Point, b: Point, pad: float) -> Iterable[int]:
        found: set[int] = set()
        for key in self._cells(a, b, pad):
            found.update(self.cells.get(key, ()))
        return sorted(found)

"""Plane helpers that are not GEOS's job: KiCad rotation and arcs as polylines.

Arcs become polylines whose chords stay within ``ARC_TOLERANCE_MM`` of the
true arc, so a distance measured on the polyline is off by at most that much.
It is KiCad's DRC epsilon (0.5 um), not KiCad's drawing tolerance (5 um):
routers keep arcs at exactly the clearance, and a coarser polyline would
put them a few micrometres inside it.
"""
from __future__ import annotations

import math

Point = tuple[float, float]

ARC_TOLERANCE_MM = 0.0005
_MAX_PIECES = 2048


def _pieces(radius: float, sweep: float, tolerance: float) -> int:
    """Chords needed so that the sagitta stays below ``tolerance``."""
    if radius <= tolerance:
        return max(1, min(_MAX_PIECES, int(abs(sweep) / (math.pi / 2)) + 1))
    step = 2 * math.acos(1 - tolerance / radius)
    return max(1, min(_MAX_PIECES, math.ceil(abs(sweep) / step)))


def arc_through(start: Point, mid: Point, end: Point, pieces: int | None = None,
                tolerance: float = ARC_TOLERANCE_MM) -> list[Point]:
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
    count = pieces or _pieces(radius, sweep, tolerance)
    return [start] + [(cx + radius * math.cos(a1 + sweep * i / count), cy + radius * math.sin(a1 + sweep * i / count))
                      for i in range(1, count)] + [end]


def arc_from_center(center: Point, start: Point, angle_degrees: float, pieces: int | None = None,
                    tolerance: float = ARC_TOLERANCE_MM) -> list[Point]:
    """KiCad 5 arcs (and circles): centre, start point and a sweep angle."""
    cx, cy = center
    radius = math.hypot(start[0] - cx, start[1] - cy)
    a1 = math.atan2(start[1] - cy, start[0] - cx)
    sweep = math.radians(angle_degrees)
    count = pieces or _pieces(radius, sweep, tolerance)
    return [(cx + radius * math.cos(a1 + sweep * i / count), cy + radius * math.sin(a1 + sweep * i / count))
            for i in range(count + 1)]


def rotate(point: Point, degrees: float) -> Point:
    """KiCad rotation: positive angles turn counter-clockwise on screen (Y down)."""
    if not degrees:
        return point
    r = math.radians(degrees)
    c, s = math.cos(r), math.sin(r)
    x, y = point
    return (x * c + y * s, -x * s + y * c)

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


# -- file data into geometry -----------------------------------------------------------

def area_polygons(points) -> list:
    """The polygons a filled outline from the file covers: none when it covers nothing.

    An outline of under three distinct points (KiCad's fill never writes one, a broken
    exporter does) has no area: GEOS cannot clip or overlay it (``Invalid number of
    points in LinearRing found 3``), and in KiCad it is no copper. A self-intersecting
    one is made valid, one polygon per lobe (GEOS make_valid keeps every lobe, as KiCad's
    even-odd fill draws them); a valid one, fractured fills included, is returned unchanged.
    """
    import numpy as np
    import shapely

    array = np.asarray(points, dtype=np.float64)
    if len(array) < 3:
        return []
    try:
        polygon = shapely.polygons(array)
    except shapely.errors.GEOSException:
        return []
    polygons = [polygon]
    if not shapely.is_valid(polygon) and _crosses_itself(polygon):
        fixed = shapely.make_valid(polygon)
        parts = [g for g in getattr(fixed, "geoms", [fixed]) if g.geom_type in ("Polygon", "MultiPolygon")]
        polygons = [p for g in parts for p in getattr(g, "geoms", [g])]
    return [p for p in polygons if shapely.area(p) > 0]


def _crosses_itself(polygon) -> bool:
    """Whether the ring truly crosses itself: a fractured fill's slits only touch (GEOS calls
    both invalid; only a crossing is damage)."""
    import shapely

    reason = shapely.is_valid_reason(polygon)
    return reason.startswith("Self-intersection") and not _slit_only(polygon)


def _slit_only(polygon) -> bool:
    """A fractured fill (holes joined to the outline by zero-width slits) is made valid into
    polygons of the same area; a crossing ring's make_valid changes the area."""
    import shapely

    fixed = shapely.make_valid(polygon)
    return abs(shapely.area(fixed) - shapely.area(polygon)) <= 1e-9 * max(1.0, shapely.area(polygon))


# -- bounded candidate searches ---------------------------------------------------------

# Pairs of boxes one search may return. A real board's densest search returns tens of
# thousands (kit-dev-coldfire, four layers) to a few hundred thousand; pairs cost about
# 100 bytes each by the time they are measured, so this keeps one search under ~500 MB.
PAIR_BUDGET = 5_000_000
_CHUNK_PAIRS = 1_000_000


def box_pairs(boxes, query=None, budget: int | None = None):
    """``STRtree(boxes).query(query)`` (``query`` defaults to ``boxes``): the (query index,
    tree index) pairs whose boxes overlap, queried in chunks so that copper stacked in one
    place is refused (CopperTooDense) before the pairs fill the memory."""
    import numpy as np
    import shapely

    from .errors import CopperTooDense

    query = boxes if query is None else query
    budget = PAIR_BUDGET if budget is None else budget
    tree = shapely.STRtree(boxes)
    if not len(query) or not len(boxes):
        return np.empty(0, dtype=np.intp), np.empty(0, dtype=np.intp)
    chunk = max(1, _CHUNK_PAIRS // max(1, len(boxes)))
    firsts, seconds, total = [], [], 0
    for start in range(0, len(query), chunk):
        first, second = tree.query(query[start:start + chunk])
        total += len(first)
        if total > budget:
            raise CopperTooDense(f"more than {budget:,} pairs of copper items overlap one another "
                                 f"({len(boxes):,} items): too dense to measure within the check's bounds")
        firsts.append(first + start)
        seconds.append(second)
    return np.concatenate(firsts), np.concatenate(seconds)

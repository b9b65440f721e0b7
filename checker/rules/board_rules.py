"""Board rules: outline, vias against the board's rules and the fab's capability,
copper-to-edge clearance (tracks, vias, pads, zone fills), references.

Copper against copper (shorts, clearance, connectivity, track width, holes)
is in copper_rules.
"""
from __future__ import annotations

import re
from collections import Counter, defaultdict

import numpy as np
import shapely

from ..board import Board, Footprint, Pad
from ..copper import PAD, ZONE, Copper, build_copper
from ..dru_checks import custom_item_findings
from ..findings import Finding, where_in
from ..model import ProjectModel
from . import footprint_rules, keepout_rules
from .copper_rules import grown_boxes
from .schematic_rules import is_unannotated
from .silk_rules import min_silk_clearance, silk_edge_findings, silk_mask_findings
from .text_rules import text_dims_findings

# KiCad chains outline items whose ends are within a few micrometres; we use
# 10 um so hand-drawn outlines that KiCad accepts are not reported as open.
OUTLINE_TOLERANCE_MM = 0.01
# Widths are stored as decimal text; compare with a small slack so 0.127 in a
# file is not "below" 0.127 in a profile after float rounding.
EPSILON = 1e-6
# How far our polygons of a pad's arcs (64 segments a quarter) may lie inside the arcs, and more.
ARC_SLACK = 5e-5


def check(model: ProjectModel) -> list[Finding]:
    board = model.board
    if board is None:
        return []
    # Each part runs when findings of a rule it makes are asked for (model.wants).
    wants = model.wants
    findings: list[Finding] = []
    if wants("board.outline-missing", "board.outline-open"):
        findings += _outline(board)
    if wants("board.via-drill", "board.via-diameter", "board.annular-ring"):
        findings += _vias(board, model)
    if wants("board.annular-ring"):
        findings += _pad_annular(board, model)
    if wants("board.hole-size", "board.via-diameter", "board.annular-ring"):
        findings += custom_item_findings(board, model)      # .kicad_dru rules' sizes (checker/dru_checks.py)
    if model.copper is None and wants("board.edge-clearance", "board.item-in-keepout", "board.silk-over-mask"):
        model.copper = build_copper(board)
    if wants("board.edge-clearance"):
        findings += _edge_clearance(board, model.copper, model)
    if wants("board.duplicate-reference", "board.unannotated"):
        findings += _references(board)
    if wants("board.courtyards-overlap", "board.footprint-type-mismatch"):
        findings += footprint_rules.check(board)
    if wants("board.item-in-keepout"):
        findings += keepout_rules.check(board, model.copper)
    if wants("board.zones-intersect"):
        findings += keepout_rules.zones_intersect(board)
    if wants("board.silk-edge-clearance"):
        findings += silk_edge_findings(board, min_silk_clearance(model.pro))
    if wants("board.silk-over-mask"):
        findings += silk_mask_findings(board, model.copper, min_silk_clearance(model.pro))
    if wants("board.text-height", "board.text-thickness"):
        findings += text_dims_findings(board, model.pro)
    return findings


def _outline(board: Board) -> list[Finding]:
    if not board.edges:
        # KiCad 9 reports "Board has malformed outline (no edges found on Edge.Cuts layer)"
        # (invalid_outline) naming the board itself, whose position is the origin.
        return [Finding("board.outline-missing", "nothing is drawn on Edge.Cuts: the board has no outline",
                        identity=(board.file,), path=board.file, line=1, column=1,
                        extra={"x": 0.0, "y": 0.0, "layer": "Edge.Cuts"})]
    cell = OUTLINE_TOLERANCE_MM
    ends: dict[tuple[int, int], int] = defaultdict(int)
    open_items = [edge for edge in board.edges if not edge.closed]
    for edge in open_items:
        for point in (edge.points[0], edge.points[-1]):
            ends[(round(point[0] / cell), round(point[1] / cell))] += 1

    def partners(point) -> int:
        kx, ky = round(point[0] / cell), round(point[1] / cell)
        return sum(ends.get((kx + dx, ky + dy), 0) for dx in (-1, 0, 1) for dy in (-1, 0, 1))

    findings = []
    for index, edge in enumerate(open_items):
        dangling = [p for p in (edge.points[0], edge.points[-1]) if partners(p) < 2]
        if dangling:
            x, y = dangling[0]
            findings.append(Finding("board.outline-open",
                                    f"Edge.Cuts {edge.kind} ends at ({x:g}, {y:g}) where no other outline item starts",
                                    identity=(board.file, edge.uuid or f"{edge.owner}#{edge.kind}#{index}"),
                                    extra={"x": x, "y": y}, **where_in(board.file, edge)))
    return findings


def _vias(board: Board, model: ProjectModel) -> list[Finding]:
    """Via drill, diameter and annular ring against the board's own rules (an error, as in KiCad's
    DRC) and the fab's capability (high when the project chose the fab, else medium). Vias are
    grouped by size: forty identical vias are one decision to make. Microvias have their own
    (much smaller) limits and are not held to these."""
    profile, rules = model.profile, model.rules
    checks = (
        ("board.via-drill", "drill", rules.min_through_hole, profile.minimum("via_drill_mm"),
         lambda d, h: h),
        ("board.via-diameter", "diameter", rules.min_via_diameter, profile.minimum("via_diameter_mm"),
         lambda d, h: d),
        ("board.annular-ring", "annular ring", rules.min_via_annular, profile.minimum("annular_ring_mm"),
         lambda d, h: (d - h) / 2 if d is not None and h is not None else None),
    )
    # A via a .kicad_dru rule holds to a size is held to that rule alone (checker/dru_checks.py).
    from ..dru_checks import governed

    ruled = {rule_id: governed(board, model, kind) if model.rules.custom else set()
             for rule_id, kind in (("board.via-drill", "hole_size"), ("board.via-diameter", "via_diameter"),
                                   ("board.annular-ring", "annular_width"))}
    groups: dict[tuple, list] = defaultdict(list)
    for via in board.vias:
        if via.via_type != "micro":
            groups[(via.diameter, via.drill, *(id(via) in ids for ids in ruled.values()))].append(via)
    findings = []
    for (diameter, drill, *free), vias in sorted(groups.items(), key=lambda item: (item[0][0] or 0, item[0][1] or 0)):
        by_rule = dict(zip(ruled, free))
        first = vias[0]
        size = f"{diameter:g}/{drill:g} mm" if diameter is not None and drill is not None else "unsized"
        marker = {"x": first.x, "y": first.y, "layer": "", "count": len(vias)}
        count = f"{len(vias)} via(s) of {size} (diameter/drill)"
        for rule_id, what, board_min, fab_min, measure in checks:
            value = measure(diameter, drill)
            if value is None:
                continue
            if by_rule[rule_id]:
                board_min = 0.0      # a custom rule governs it
            if board_min and value < board_min - EPSILON:
                severity, limit, source = "error", board_min, "the board's own minimum"
            elif fab_min is not None and value < fab_min - EPSILON:
                severity, limit, source = model.fab_severity, fab_min, f"{profile.name}'s minimum"
            else:
                continue
            findings.append(Finding(rule_id, f"{count}: {what} {value:.4g} mm, below {source} of {limit:g} mm",
                                    identity=(board.file, size, *(("ruled", *("1" if f else "0" for f in free)) if any(free) else ())),
                                    severity=severity,
                                    extra={**marker, "uuids": [first.uuid] if first.uuid else []},
                                    kicad_type=_VIA_TYPES[rule_id] if severity == "error" else "",
                                    locations=[{"x": v.x, "y": v.y, "layer": "", "uuids": [v.uuid] if v.uuid else []}
                                               for v in vias] if len(vias) > 1 else [],
                                    **where_in(board.file, first)))
    return findings


def _pad_annular(board: Board, model: ProjectModel) -> list[Finding]:
    """The annular width of plated through-hole pads against the board's minimum annular width
    (KiCad 9: DRC_TEST_PROVIDER_ANNULAR_WIDTH, the same constraint as vias; a pad without a net is
    held to it too). A round, oval or (rounded) rectangular pad with no offset and no other pad of
    its number: the smaller of (size - drill) / 2 along each axis; else the distance from the hole
    to the pad's outline (0 when the hole's centre is outside the pad), and a hole lying inside
    another pad of the same number takes that pad's copper around it when that is wider."""
    minimum = model.rules.min_via_annular
    from ..dru_checks import governed

    ruled = governed(board, model, "annular_width") if model.rules.custom else set()
    findings = []
    for footprint in board.footprints:
        for pad in footprint.pads:
            if pad.kind != "thru_hole" or not pad.drill_size or min(pad.drill_size) <= 0 or id(pad) in ruled:
                continue
            same_number = [other for other in footprint.pads if other is not pad and other.number == pad.number]
            width = _annular_width(pad, same_number, minimum)
            # Pad outlines are polygons within 0.02 um of their arcs: so much short of the minimum passes.
            if width is None or width >= minimum - ARC_SLACK or (minimum <= 0 and width > -ARC_SLACK):
                continue
            name = f"pad {pad.number} of {footprint.reference}" if pad.number else f"a pad of {footprint.reference}"
            findings.append(Finding(
                "board.annular-ring", f"{name}: annular width {width:.4g} mm, below the board's own minimum of "
                f"{minimum:g} mm", identity=(board.file, "pad-annular", footprint.uuid or footprint.reference,
                                            pad.uuid or pad.number),
                severity="error", kicad_type="annular_width",
                extra={"x": pad.x, "y": pad.y, "layer": "", "actual_mm": round(width, 4), "required_mm": minimum,
                       "uuids": [pad.uuid] if pad.uuid else []},
                **where_in(board.file, pad)))
    return findings


def _annular_width(pad: Pad, same_number: list[Pad], minimum: float) -> float | None:
    """As kicad-cli 9.0.8 measures it (DRC_TEST_PROVIDER_ANNULAR_WIDTH): a round, oval or (rounded)
    rectangular pad with no offset and no other pad of its number (unnumbered pads share the number
    ""), the smaller of (size - drill) / 2; any other, the distance from the hole to the pad's outline
    (0 when the hole's centre is outside it); then, below the minimum, the copper of the pad and of the
    pads of its number that touch it, as one, when the hole is farther from that edge. Measured on
    boards made for it: two unnumbered 0.65/0.65 mm pads 5.8 mm apart are reported (-0.0028 mm, KiCad's
    polygon of the circle), a 0.75/0.65 mm pad inside a 2 mm SMD pad of its number is not, beside one
    3 mm away it is; on the corpus, icebreaker's 0.5/0.3 mm pads 65 at the corners of U4's exposed pad
    65 are not."""
    from ..copper import _hole_shape, pad_outline

    drill_x, drill_y = pad.drill_size
    # KiCad: a chamfered rectangle is a simple shape up to a chamfer ratio of 0.3.
    chamfered = bool(pad.chamfer) and pad.chamfer_ratio > 0
    simple = tuple(pad.drill_offset) == (0.0, 0.0) and pad.shape in ("circle", "oval", "rect", "roundrect") and (
        not chamfered or pad.chamfer_ratio <= 0.30)
    hole, radius = _hole_shape(pad)
    outline = pad_outline(pad)
    if simple:
        # Exact (a polygon of the arcs would lie up to 0.02 um inside them).
        width = (pad.width - drill_x) / 2 if pad.shape == "circle" else \
            min(pad.width - drill_x, pad.height - drill_y) / 2
        if not same_number:
            return width
    if outline is None:
        return None
    if not simple:
        width = shapely.distance(outline.boundary, hole) - radius \
            if outline.covers(shapely.Point(pad.x, pad.y)) else 0.0
    if width >= minimum or not same_number:
        return width
    # The copper of the pad and of the pads of its number that touch it, as one: the hole's
    # distance to its edge.
    touching = [o for o in map(pad_outline, same_number) if o is not None and o.intersects(outline)]
    if touching:
        copper = shapely.union_all([outline, *touching])
        if copper.covers(shapely.Point(pad.x, pad.y)):
            width = max(width, shapely.distance(copper.boundary, hole) - radius)
    return width


# KiCad's types for the via checks against the board's own rules.
_VIA_TYPES = {"board.via-drill": "drill_out_of_range", "board.via-diameter": "via_diameter",
              "board.annular-ring": "annular_width"}


# Footprints whose copper is meant to reach the board edge: edge-mount connectors
# (SMA, USB, card-edge) say so in their name, description or keywords.
_EDGE_MOUNT = re.compile(r"edge[\s_-]?mount|edgemount|edge[\s_-]?launch|card[\s_-]?edge", re.I)


def edge_exempt(board: Board, footprint: Footprint, pad: Pad) -> bool:
    """Copper meant to reach the edge: edge-connector pads (pad type "connect", or the board's
    edge-connector setting for surface pads), castellated pads and edge-mount footprints."""
    if pad.kind == "connect" or pad.castellated:
        return True
    if board.edge_connector in ("yes", "bevelled") and pad.kind == "smd":
        return True
    if board.castellated_pads and pad.kind == "thru_hole":
        return True
    return bool(_EDGE_MOUNT.search(" ".join((footprint.lib_id, footprint.description, footprint.tags))))


def _edge_clearance(board: Board, copper: Copper, model: ProjectModel) -> list[Finding]:
    """Copper closer to Edge.Cuts (outline or cutouts) than the board's rule or the fab allows,
    one finding per net. Zone fills are measured as KiCad last saved them."""
    if not board.edges or not len(copper):
        return []
    board_min = model.rules.min_copper_edge_clearance
    fab_min = model.profile.minimum("copper_edge_clearance_mm") or 0.0
    # Copper on or over the edge line is an error in KiCad even under a 0 mm rule (it collides).
    required = max(board_min, fab_min, 0.0)
    lines = np.array([shapely.LineString(e.points) for e in board.edges], dtype=object)
    tree = shapely.STRtree(lines)
    # Every item by its core: fills by their whole polygon, so a cutout inside a fill is inside it.
    # Candidates by their boxes grown by the reach (an envelope test in C; a "dwithin" query
    # prepares every item, 8 ms on the video demo): the gaps below keep only the near ones.
    query_in, query_tree = tree.query(grown_boxes(copper.core, copper.radius + required))
    if not len(query_in):
        return []
    gap = _gaps(copper, query_in, lines, query_tree, copper.radius + required)
    closest: dict[int, tuple[float, int]] = {}
    for item, edge, value in zip(query_in.tolist(), query_tree.tolist(), gap.tolist()):
        if (value < required - EPSILON or value <= EPSILON) and (item not in closest or value < closest[item][0]):
            closest[item] = (value, edge)
    # A via or pad split into its pad and its hole (layers where KiCad does not flash it) is one item.
    nearest: dict[str, tuple[float, int, int]] = {}
    for item, (value, edge) in closest.items():
        key = copper.identity(item)
        if key not in nearest or value < nearest[key][0]:
            nearest[key] = (value, item, edge)
    closest = {item: (value, edge) for value, item, edge in nearest.values()}
    by_net: dict[str, list[tuple[float, int, int]]] = defaultdict(list)
    for item, (value, edge) in closest.items():
        if copper.kind[item] == PAD:
            footprint, pad = copper.owner[item]
            if edge_exempt(board, footprint, pad):
                continue
        by_net[copper.net_names[copper.net[item]] or "(no net)"].append((value, item, edge))
    findings = []
    for net, hits in sorted(by_net.items()):
        hits.sort()
        # Below the board's own minimum it is KiCad's copper_edge_clearance (an error there), one
        # finding with every such item; below the fab's only, it goes beyond KiCad (another one).
        # Zone fills are never KiCad's: DRC_TEST_PROVIDER_EDGE_CLEARANCE walks
        # s_allBasicItemsButZones (its filler clips fills to the edge clearance); kicad-cli 9.0.8 is
        # silent on a fill drawn over the edge. A fill is held to the fab's minimum only.
        board_hits = [hit for hit in hits if (hit[0] < board_min - EPSILON or hit[0] <= EPSILON)
                      and copper.kind[hit[1]] != ZONE]
        fab_hits = [hit for hit in hits if hit not in board_hits and hit[0] < fab_min - EPSILON]
        if board_hits:
            findings.append(_edge_finding(board, copper, net, board_hits, lines, "high", board_min,
                                          "the board's own minimum", "copper_edge_clearance", "edge"))
        if fab_hits:
            findings.append(_edge_finding(board, copper, net, fab_hits, lines,
                                          "high" if model.profile_chosen else "medium", fab_min,
                                          f"{model.profile.name}'s minimum", "",
                                          "edge-fab" if board_hits else "edge"))
    return findings


def _gaps(copper: Copper, items: np.ndarray, lines: np.ndarray, edges: np.ndarray, reach: np.ndarray) -> np.ndarray:
    """Each item's copper to its edge line, less the item's radius.

    A zone fill is first clipped to the line's box grown by the item's reach: its part
    farther away cannot be nearest when the gap counts, and GEOS measures every segment
    pair (a fill against the board outline: 10 ms of the video demo's check, 3 clipped).
    An empty clip is nothing that near, measured whole all the same."""
    cores = copper.core[items]
    fills = np.flatnonzero(copper.kind[items] == ZONE)
    if len(fills):
        cores = cores.copy()
        box = shapely.bounds(lines[edges[fills]])
        margin = reach[items[fills]]
        # One call a fill: clip_by_rect takes one rectangle (scalars) per call.
        clipped = np.array([shapely.clip_by_rect(core, x0 - m, y0 - m, x1 + m, y1 + m) for core, (x0, y0, x1, y1), m
                            in zip(cores[fills], box.tolist(), margin.tolist())], dtype=object)
        kept = ~shapely.is_empty(clipped)
        cores[fills[kept]] = clipped[kept]
    return shapely.distance(cores, lines[edges]) - copper.radius[items]


def _edge_finding(board: Board, copper: Copper, net: str, hits: list, lines: np.ndarray, severity: str,
                  limit: float, source: str, kicad_type: str, key: str) -> Finding:
    value, item, edge = hits[0]
    gap_value = max(0.0, value)
    line, column = copper.where(item)
    kinds = sorted({"pad" if copper.kind[i] == PAD else copper.label(i) for _, i, _ in hits})
    places = []
    for _, hit_item, hit_edge in hits:
        (px, py) = shapely.get_coordinates(shapely.shortest_line(copper.core[hit_item], lines[hit_edge]))[-1]
        places.append({"x": round(float(px), 4), "y": round(float(py), 4),
                       "layer": copper.first_layer(int(copper.layers[hit_item])),
                       "uuids": [u for u in (copper.uuid(hit_item), board.edges[hit_edge].uuid) if u]})
    refill = " (refill the zone, or widen its clearance)" if copper.kind[item] == ZONE else ""
    layer = copper.first_layer(int(copper.layers[item]))
    return Finding(
        "board.edge-clearance",
        f"{len(hits)} copper item(s) of net {net} ({', '.join(kinds)}) "
        f"{f'closer to the board edge than {limit:g} mm' if limit > 0 else 'on or over the board edge'} "
        f"({source}); closest: {copper.label(item)} at "
        f"{gap_value:.3g} mm on {layer}{refill}",
        identity=(board.file, key, net), severity=severity, path=board.file, line=line, column=column,
        kicad_type=kicad_type, locations=places if len(places) > 1 else [],
        extra={"x": places[0]["x"], "y": places[0]["y"], "layer": layer, "actual_mm": round(gap_value, 4),
               "required_mm": limit, "count": len(hits), "uuids": places[0]["uuids"],
               "nets": [copper.net_names[copper.net[item]]]})


def _references(board: Board) -> list[Finding]:
    findings = []
    counts = Counter(f.reference for f in board.footprints)
    reported: set[str] = set()
    for footprint in board.footprints:
        reference = footprint.reference
        marker = {"x": footprint.x, "y": footprint.y}
        if "board_only" in footprint.attributes:
            continue
        if is_unannotated(reference):
            if reference.startswith("REF**") or reference.startswith("#"):
                continue  # KiCad's own placeholder for board-only graphics
            if not footprint.pads:
                continue  # graphics (a logo, a pasted drawing): nothing to place or order
            findings.append(Finding("board.unannotated", f"footprint {footprint.lib_id} has reference {reference!r}",
                                    identity=(board.file, footprint.uuid or footprint.lib_id), extra=marker,
                                    **where_in(board.file, footprint)))
        elif counts[reference] > 1 and reference not in reported:
            reported.add(reference)
            findings.append(Finding("board.duplicate-reference",
                                    f"{counts[reference]} footprints are called {reference}",
                                    identity=(board.file, reference), extra=marker, **where_in(board.file, footprint)))
    return findings

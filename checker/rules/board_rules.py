"""Board rules: outline, fab minimums for tracks and vias, shorts (tracks against tracks, vias
and pads), copper-to-edge clearance (tracks, vias, pads, zone fills), references."""
from __future__ import annotations

import math
from collections import Counter, defaultdict

from ..board import Board
from ..copper import CopperShape, board_copper, bounding_box
from ..findings import Finding
from ..geometry import SegmentGrid, segment_distance
from ..model import ProjectModel
from .schematic_rules import is_unannotated

# KiCad chains outline items whose ends are within a few micrometres; we use
# 10 um so hand-drawn outlines that KiCad accepts are not reported as open.
OUTLINE_TOLERANCE_MM = 0.01
# Widths are stored as decimal text; compare with a small slack so 0.127 in a
# file is not "below" 0.127 in a profile after float rounding.
EPSILON = 1e-6


def check(model: ProjectModel) -> list[Finding]:
    board = model.board
    if board is None:
        return []
    findings: list[Finding] = []
    findings += _outline(board)
    findings += _fab_minimums(board, model)
    findings += _crossing_tracks(board)
    findings += _tracks_touching_vias_and_pads(board)
    findings += _edge_clearance(board, model.profile.minimum("copper_edge_clearance_mm"))
    findings += _references(board)
    return findings


def _where(board: Board, item) -> dict:
    return dict(path=board.file, line=item.line, column=item.column)


def _outline(board: Board) -> list[Finding]:
    if not board.edges:
        return [Finding("board.outline-missing", "nothing is drawn on Edge.Cuts: the board has no outline",
                        identity=(board.file,), path=board.file, line=1, column=1)]
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
                                    extra={"x": x, "y": y}, **_where(board, edge)))
    return findings


def _fab_minimums(board: Board, model: ProjectModel) -> list[Finding]:
    profile = model.profile
    min_track = profile.minimum("track_width_mm")
    min_drill = profile.minimum("via_drill_mm")
    min_diameter = profile.minimum("via_diameter_mm")
    min_ring = profile.minimum("annular_ring_mm")
    findings = []
    copper = board.copper_layers()
    narrow: dict[tuple[str, float], list] = defaultdict(list)
    for track in board.tracks:
        if track.layer in copper and 0 < track.width < min_track - EPSILON:
            narrow[(track.net, track.width)].append(track)
    # One finding per net and width: a hundred segments of one thin net are one decision.
    for (net, width), tracks in sorted(narrow.items()):
        first = tracks[0]
        findings.append(Finding("board.track-width",
                                f"{len(tracks)} track segment(s) on net {net or '(none)'} are {width:g} mm wide, "
                                f"below {profile.name}'s {min_track:g} mm",
                                identity=(board.file, net, f"{width:g}"),
                                extra={"x": first.points[0][0], "y": first.points[0][1]}, **_where(board, first)))
    # Vias are grouped by size: forty identical vias are one decision to make.
    groups: dict[tuple[float | None, float | None], list] = defaultdict(list)
    for via in board.vias:
        groups[(via.diameter, via.drill)].append(via)
    for (diameter, drill), vias in sorted(groups.items(), key=lambda item: (item[0][0] or 0, item[0][1] or 0)):
        first = vias[0]
        size = f"{diameter:g}/{drill:g} mm" if diameter is not None and drill is not None else "unsized"
        ident = (board.file, size)
        marker = {"x": first.x, "y": first.y}
        count = f"{len(vias)} via(s) of {size} (diameter/drill)"
        if drill is not None and drill < min_drill - EPSILON:
            findings.append(Finding("board.via-drill", f"{count}: drill below {profile.name}'s {min_drill:g} mm",
                                    identity=ident, extra=marker, **_where(board, first)))
        if diameter is not None and diameter < min_diameter - EPSILON:
            findings.append(Finding("board.via-diameter", f"{count}: diameter below {profile.name}'s "
                                    f"{min_diameter:g} mm", identity=ident, extra=marker, **_where(board, first)))
        if diameter is not None and drill is not None and (diameter - drill) / 2 < min_ring - EPSILON:
            findings.append(Finding("board.annular-ring", f"{count}: annular ring {(diameter - drill) / 2:.3g} mm, "
                                    f"below {profile.name}'s {min_ring:g} mm", identity=ident, extra=marker,
                                    **_where(board, first)))
    return findings


def _crossing_tracks(board: Board) -> list[Finding]:
    grid = SegmentGrid(cell=2.0)
    copper = board.copper_layers()
    owners = []
    for track in board.tracks:
        if track.layer not in copper:
            continue
        for a, b in zip(track.points, track.points[1:]):
            grid.add(a, b, track, pad=track.width / 2)
            owners.append(track)
    findings = []
    seen: set[tuple[str, str]] = set()
    for index, (a, b, track) in enumerate(grid.items):
        for other_index in grid.near(a, b, track.width / 2):
            if other_index <= index:
                continue
            c, d, other = grid.items[other_index]
            if other is track or other.layer != track.layer or other.net == track.net:
                continue
            if segment_distance(a, b, c, d) < (track.width + other.width) / 2 - EPSILON:
                key = tuple(sorted((track.uuid or str(id(track)), other.uuid or str(id(other)))))
                if key in seen:
                    continue
                seen.add(key)
                nets = sorted((track.net or "(none)", other.net or "(none)"))
                findings.append(Finding("board.crossing-tracks",
                                        f"tracks of nets {nets[0]} and {nets[1]} touch on {track.layer}",
                                        identity=(board.file, track.layer, *nets, *key),
                                        extra={"x": (a[0] + b[0]) / 2, "y": (a[1] + b[1]) / 2},
                                        **_where(board, track)))
    return findings


def _edge_clearance(board: Board, minimum: float) -> list[Finding]:
    """Tracks, vias, pads and zone fills closer to Edge.Cuts than the profile allows."""
    if not board.edges:
        return []
    grid = SegmentGrid(cell=2.0)
    for edge in board.edges:
        for a, b in zip(edge.points, edge.points[1:]):
            grid.add(a, b, edge)
    findings = []
    too_close_pads: dict[int, list[tuple[CopperShape, float]]] = defaultdict(list)
    for shape in board_copper(board):
        gap = shape.gap_to(grid, minimum)
        if gap >= minimum - EPSILON:
            continue
        gap = max(0.0, gap)
        owner = shape.owner
        if shape.kind == "track":
            findings.append(Finding("board.edge-clearance",
                                    f"track on net {owner.net or '(none)'} is {gap:.3g} mm from the board edge, "
                                    f"below {minimum:g} mm", identity=(board.file, owner.uuid or owner.net),
                                    extra={"x": owner.points[0][0], "y": owner.points[0][1]}, **_where(board, owner)))
        elif shape.kind == "via":
            findings.append(Finding("board.edge-clearance",
                                    f"via on net {owner.net or '(none)'} is {gap:.3g} mm from the "
                                    f"board edge, below {minimum:g} mm", identity=(board.file, owner.uuid or owner.net),
                                    extra={"x": owner.x, "y": owner.y}, **_where(board, owner)))
        elif shape.kind == "pad":
            too_close_pads[id(owner)].append((shape, gap))
        else:
            layer = next(iter(shape.layers))
            x, y = shape.points[0]
            findings.append(Finding("board.edge-clearance",
                                    f"zone fill of net {owner.net or '(none)'} on {layer} is {gap:.3g} mm from the "
                                    f"board edge, below {minimum:g} mm (refill the zone, or widen its clearance)",
                                    identity=(board.file, "zone", owner.uuid or owner.net, layer),
                                    extra={"x": x, "y": y}, path=board.file, line=owner.line, column=owner.column))
    # One finding per footprint: the four pads of an edge connector are one decision.
    for pads in too_close_pads.values():
        footprint = pads[0][0].owner
        closest = min(gap for _, gap in pads)
        findings.append(Finding("board.edge-clearance",
                                f"{len(pads)} pad(s) of {footprint.reference or footprint.lib_id} are {closest:.3g} mm "
                                f"from the board edge, below {minimum:g} mm",
                                identity=(board.file, "pads", footprint.uuid or footprint.reference),
                                extra={"x": footprint.x, "y": footprint.y}, **_where(board, footprint)))
    return findings


def _tracks_touching_vias_and_pads(board: Board) -> list[Finding]:
    """A track over a via or pad of another net on its layer: a short, like two crossing tracks."""
    grid = SegmentGrid(cell=2.0)
    for shape in board_copper(board, tracks=False):
        if shape.kind in ("via", "pad"):
            low, high = bounding_box(shape)
            grid.add(low, high, shape, pad=shape.radius)
    findings = []
    seen: set[tuple[int, int]] = set()
    copper = board.copper_layers()
    for track in board.tracks:
        if track.layer not in copper:
            continue
        half = track.width / 2
        for a, b in zip(track.points, track.points[1:]):
            for index in grid.near(a, b, half):
                shape: CopperShape = grid.items[index][2]
                key = (id(track), id(shape))
                if (key in seen or track.layer not in shape.layers or shape.net == track.net
                        or shape.distance_to_segment(a, b) >= half - EPSILON):
                    continue
                seen.add(key)
                x, y = shape.points[0]
                nets = sorted((track.net or "(none)", shape.net or "(none)"))
                findings.append(Finding("board.crossing-tracks",
                                        f"track of net {track.net or '(none)'} touches {shape.label} of net "
                                        f"{shape.net or '(none)'} on {track.layer}",
                                        identity=(board.file, track.layer, *nets, track.uuid or str(id(track)),
                                                  _shape_identity(shape)),
                                        extra={"x": x, "y": y}, **_where(board, track)))
    return findings


def _shape_identity(shape: CopperShape) -> str:
    owner = shape.owner
    if shape.kind == "via":
        return owner.uuid or f"via@{owner.x:g},{owner.y:g}"
    return f"{owner.uuid or owner.reference}/{shape.label}"


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
            findings.append(Finding("board.unannotated", f"footprint {footprint.lib_id} has reference {reference!r}",
                                    identity=(board.file, footprint.uuid or footprint.lib_id), extra=marker,
                                    **_where(board, footprint)))
        elif counts[reference] > 1 and reference not in reported:
            reported.add(reference)
            findings.append(Finding("board.duplicate-reference",
                                    f"{counts[reference]} footprints are called {reference}",
                                    identity=(board.file, reference), extra=marker, **_where(board, footprint)))
    return findings

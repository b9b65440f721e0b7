"""Board rules: outline, fab minimums for tracks and vias, shorts, edge clearance, references."""
from __future__ import annotations

import math
from collections import Counter, defaultdict

from ..board import Board
from ..findings import Finding
from ..geometry import SegmentGrid, point_segment_distance, segment_distance
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
    if not board.edges:
        return []
    grid = SegmentGrid(cell=2.0)
    for edge in board.edges:
        for a, b in zip(edge.points, edge.points[1:]):
            grid.add(a, b, edge)
    findings = []
    copper = board.copper_layers()
    for track in board.tracks:
        if track.layer not in copper:
            continue
        reach = minimum + track.width / 2
        closest = math.inf
        for a, b in zip(track.points, track.points[1:]):
            for index in grid.near(a, b, reach):
                c, d, _ = grid.items[index]
                closest = min(closest, segment_distance(a, b, c, d))
        if closest - track.width / 2 < minimum - EPSILON:
            gap = max(0.0, closest - track.width / 2)
            findings.append(Finding("board.edge-clearance",
                                    f"track on net {track.net or '(none)'} is {gap:.3g} mm from the board edge, "
                                    f"below {minimum:g} mm", identity=(board.file, track.uuid or track.net),
                                    extra={"x": track.points[0][0], "y": track.points[0][1]}, **_where(board, track)))
    for via in board.vias:
        radius = (via.diameter or 0) / 2
        closest = min((point_segment_distance((via.x, via.y), c, d)
                       for c, d, _ in (grid.items[i] for i in grid.near((via.x, via.y), (via.x, via.y), minimum + radius))),
                      default=math.inf)
        if closest - radius < minimum - EPSILON:
            findings.append(Finding("board.edge-clearance",
                                    f"via on net {via.net or '(none)'} is {max(0.0, closest - radius):.3g} mm from the "
                                    f"board edge, below {minimum:g} mm", identity=(board.file, via.uuid or via.net),
                                    extra={"x": via.x, "y": via.y}, **_where(board, via)))
    return findings


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

"""Copper against drilled holes (KiCad's hole_clearance): every track, arc, via, pad and zone
fill against every via hole, plated and non-plated pad hole whose layers it shares, at the
board setup's minimum hole clearance.

As in KiCad 9's DRC (DRC_TEST_PROVIDER_COPPER_CLEARANCE): a track, arc or via is never tested
against an item of its own net, and two items without a net are one net there
(testTrackClearances' filter compares net codes), so a no-net track joining the no-net pads of
a prototyping strip is no violation; a pad or a zone is tested against the hole of anything
not of its own *defined* net (testPadAgainstItem: "other objects of the same (defined) net get a
waiver"; a non-plated hole has no net). A hole is never tested against its own pad or via, nor
against the pads of its own footprint (the footprint's design). With a minimum of 0 only
tracks, vias and copper shapes are tested, for overlapping the hole
(testSingleLayerItemAgainstItem tests "even if clearance is 0, because the item cannot be inside
the hole"; pads and zones need a clearance above 0).
"""
from __future__ import annotations

from collections import defaultdict

import numpy as np
import shapely

from ..board import Board
from ..copper import ARC, PAD, SHAPE, TRACK, VIA, ZONE, Copper, Holes, layer_bits
from ..findings import Finding
from ..model import ProjectModel
from ..versions import major_for

DRC_EPSILON = 0.0005
GROUP_AFTER = 3
# With a minimum of 0 KiCad reports copper that touches or enters a hole (a collision at
# clearance 0 on its nanometre grid); this is that grid's float noise.
TOUCHING_HOLE = 1e-6
# KiCad 9's default minimum hole clearance (BOARD_DESIGN_SETTINGS) when the project sets none.
DEFAULT_HOLE_CLEARANCE = 0.25


def min_hole_clearance(model: ProjectModel) -> float:
    board = model.pro.get("board") if isinstance(model.pro, dict) else None
    settings = board.get("design_settings") if isinstance(board, dict) else None
    values = settings.get("rules") if isinstance(settings, dict) else None
    value = values.get("min_hole_clearance") if isinstance(values, dict) else None
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0:
        return float(value)
    return DEFAULT_HOLE_CLEARANCE


def hole_clearance_findings(board: Board, copper: Copper, holes: Holes, model: ProjectModel) -> list[Finding]:
    minimum = min_hole_clearance(model)
    if not len(holes.core) or not len(copper):
        return []
    # KiCad 10 tests a hole against the other pads of its own footprint: kicad-cli 10.0.7 reports 80
    # pads of the corpus's caravel breakout (TinyTapeout/breakout-pcb, KiCad 7 file) against their own
    # connectors' NPTH holes, on the authors' file and on its own save alike; kicad-cli 9.0.8 reports
    # none of them on the authors' file. (On a minimal board of one pad and one NPTH hole both report
    # it: what spares the connector under KiCad 9 is not pinned down, so KiCad 9's files keep the skip.)
    own_pads_tested = (major_for("board", board.version) or 0) >= 10
    order = copper.layer_names
    net_index = {name: i for i, name in enumerate(copper.net_names)}
    every = (1 << len(order)) - 1
    hole_layers = np.array([every if isinstance(o, tuple) or o.via_type == "through" else layer_bits(
        _via_span(o.layers, order), order) for o in holes.owner], dtype=np.int64)
    hole_net = np.array([net_index.get(_hole_net(o), -1) for o in holes.owner], dtype=np.int64)
    # Candidates: each hole's box grown by its radius and the minimum against the copper units' boxes.
    from .copper_rules import grown_boxes
    tree = shapely.STRtree(grown_boxes(copper.unit_geom, copper.unit_radius, copper.unit_bounds))
    hole_index, unit = tree.query(grown_boxes(holes.core, holes.radius + minimum))
    item = copper.unit_item[unit]
    distance = (shapely.distance(holes.core[hole_index], copper.unit_geom[unit]) - holes.radius[hole_index]
                - copper.unit_radius[unit])
    # Holes inside a zone fill (no knockout round them): the fill covers the hole.
    for fill in copper.fills.tolist():
        polygon = copper.core[fill]
        shapely.prepare(polygon)
        inside = np.flatnonzero(shapely.contains_xy(polygon, holes.anchor[:, 0], holes.anchor[:, 1]))
        if len(inside):
            hole_index = np.concatenate([hole_index, inside])
            item = np.concatenate([item, np.full(len(inside), fill)])
            distance = np.concatenate([distance, -holes.radius[inside]])
    net = copper.net[item]
    kind = copper.kind[item]
    # KiCad 9: DRC_TEST_PROVIDER_COPPER_CLEARANCE::testTrackClearances (tracks and vias: another
    # net, no net being one) and testSingleLayerItemAgainstItem (copper shapes), testPadAgainstItem
    # and testItemAgainstZone (pads, zones: not of the same defined net, and a clearance above 0).
    routed = np.isin(kind, (TRACK, ARC, VIA))
    other_net = np.where(routed, net != hole_net[hole_index],
                         (net != hole_net[hole_index]) | (net == 0) | (hole_net[hole_index] <= 0))
    if minimum > 0:
        close = distance < minimum - DRC_EPSILON - TOUCHING_HOLE   # exactly the epsilon passes, as in KiCad
    else:
        close = np.isin(kind, (TRACK, ARC, VIA, SHAPE)) & (distance <= TOUCHING_HOLE)
    tested = ((hole_layers[hole_index] & copper.layers[item]) != 0) & close & other_net
    candidates = np.flatnonzero(tested)
    # The smallest distance per hole and item.
    best: dict[tuple[int, int], float] = {}
    for k in candidates.tolist():
        h, i = int(hole_index[k]), int(item[k])
        if _same_part(holes, h, copper, i, own_pads_tested):
            continue
        if (h, i) not in best or distance[k] < best[(h, i)]:
            best[(h, i)] = float(distance[k])
    groups: dict[tuple[str, str], list[tuple[float, int, int]]] = defaultdict(list)
    for (h, i), value in best.items():
        groups[tuple(sorted((_hole_net(holes.owner[h]) or "(no net)",
                             copper.net_names[copper.net[i]] or "(no net)")))].append((value, h, i))
    findings = []
    for nets, hits in sorted(groups.items()):
        hits.sort()
        if len(hits) > GROUP_AFTER:
            finding = _finding(board, copper, holes, hits[0], minimum, len(hits), nets)
            finding.locations = [_place(copper, holes, h, i) for _, h, i in hits]
            findings.append(finding)
        else:
            findings += [_finding(board, copper, holes, hit, minimum) for hit in hits]
    return findings


def _via_span(names: list[str], order: list[str]) -> list[str]:
    ends = sorted(order.index(name) for name in names if name in order)
    return order[ends[0]:ends[-1] + 1] if len(ends) == 2 else order


def _hole_net(owner) -> str:
    return owner[1].net if isinstance(owner, tuple) else owner.net


def _same_part(holes: Holes, hole: int, copper: Copper, item: int, own_pads_tested: bool = False) -> bool:
    """The hole's own via or pad, or a copper shape of the hole's footprint, or (but on a board
    KiCad 10 wrote: ``own_pads_tested``) another pad of it."""
    owner = holes.owner[hole]
    other = copper.owner[item]
    if isinstance(owner, tuple):
        if copper.kind[item] == SHAPE:
            return other.footprint is owner[0]
        if own_pads_tested:     # but the pads of its own number: one pad to KiCad (SameLogicalPadAs)
            return copper.kind[item] == PAD and other[0] is owner[0] and (
                other[1] is owner[1] or bool(owner[1].number) and other[1].number == owner[1].number)
        return copper.kind[item] == PAD and other[0] is owner[0]
    return other is owner


def _hole_label(owner) -> str:
    if isinstance(owner, tuple):
        footprint, pad = owner
        kind = "non-plated hole" if pad.kind == "np_thru_hole" else "hole"
        what = f"pad {pad.number} of " if pad.number else ""
        return f"the {kind} of {what}{footprint.reference or footprint.lib_id}"
    return f"the hole of a via of net {owner.net or '(no net)'}"


def _hole_uuid(owner) -> str:
    return owner[1].uuid if isinstance(owner, tuple) else owner.uuid


def _layer(copper: Copper, holes: Holes, hole: int, item: int) -> str:
    return copper.first_layer(int(copper.layers[item]))


def _place(copper: Copper, holes: Holes, hole: int, item: int) -> dict:
    x, y = holes.anchor[hole]
    return {"x": round(float(x), 4), "y": round(float(y), 4), "layer": _layer(copper, holes, hole, item),
            "uuids": [u for u in (copper.uuid(item), _hole_uuid(holes.owner[hole])) if u]}


def _finding(board: Board, copper: Copper, holes: Holes, hit, minimum: float, count: int = 1,
             nets: tuple = ()) -> Finding:
    value, hole, item = hit
    owner = holes.owner[hole]
    node = owner[1] if isinstance(owner, tuple) else owner
    if copper.kind[item] != ZONE:
        line, column = copper.where(item)
    else:
        line, column = node.line, node.column
    place = _place(copper, holes, hole, item)
    net = copper.net_names[copper.net[item]] or "(no net)"
    text = (f"{copper.label(item)} of net {net} is {max(0.0, value):.4g} mm from {_hole_label(owner)} on "
            f"{place['layer']}; the board's hole clearance is {minimum:.4g} mm")
    identity = (board.file, "hole", *sorted((copper.identity(item), _hole_identity(owner))))
    if count > 1:
        text = f"{count} places where copper and holes of nets {nets[0]} and {nets[1]} are too close; worst: {text}"
        identity = (board.file, "hole", "group", *nets)
    return Finding("board.copper-to-hole", text, identity=identity, severity="error", path=board.file,
                   line=line, column=column, kicad_type="hole_clearance",
                   extra={**place, "actual_mm": round(max(0.0, value), 4), "required_mm": minimum, "count": count,
                          "nets": sorted({net, _hole_net(owner) or "(no net)"})})


def _hole_identity(owner) -> str:
    if isinstance(owner, tuple):
        footprint, pad = owner
        # Unnumbered pads (mounting holes) are told apart by their own uuid.
        return f"{footprint.uuid or footprint.reference}/pad {pad.number}{'/' + pad.uuid if pad.uuid and not pad.number else ''} hole"
    return (owner.uuid or f"via@{owner.x:g},{owner.y:g}") + " hole"

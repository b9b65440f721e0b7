"""Copper rules from the board's own design rules: shorts, clearance, hole-to-hole,
track width, connectivity (unconnected islands) and dangling track ends.

How the pairs are found: per copper layer, one STRtree over the boxes of the
copper units on it (items, and zone fill outlines cut into chains), each box
grown by its unit's radius and half the largest clearance any rule asks for,
is queried with the same boxes. Two boxes overlap when the copper may be
closer than that clearance (their gap is a lower bound of the distance), so
nothing is missed and items of other layers are never candidates. GEOS then
measures every candidate pair in one vectorized call. Copper lying wholly
inside another net's zone fill, far from any fill edge, is found by testing
each item's anchor point against the prepared fill polygon.

What is tested follows KiCad's DRC: two items of different nets; two pads
without a net (unless they are the same pad of one footprint); a zone
without a net against anything. Items of one net are never a clearance
problem; touching ones are what joins a net's islands.
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

import numpy as np
import shapely

from ..board import Board
from ..copper import ARC, PAD, SHAPE, TRACK, VIA, ZONE, Copper, Holes, build_copper, build_holes, components
from ..dru_items import CopperItems, TrackItems
from ..findings import Finding
from ..geometry import box_pairs
from ..model import ProjectModel
from ..ratsnest import tree_edges
from ..rulebook import BoardRules, coupled_gap, diff_pair_complement
from .hole_rules import hole_clearance_findings
from .mask_rules import mask_bridge_findings, mask_shape_findings
from .thermal_rules import min_resolved_spokes, starved_thermal_findings

# KiCad's DRC epsilon (BOARD_DESIGN_SETTINGS::GetDRCEpsilon): distances within
# half a micrometre of the rule pass, as they do in KiCad.
DRC_EPSILON = 0.0005
# KiCad measures in integer nanometres: 0.1995 mm against a 0.2 mm rule is exactly the epsilon
# and passes (DRC_TEST_PROVIDER_COPPER_CLEARANCE collides at clearance - epsilon, strictly; kicad-cli
# 9.0.8 passes 0.1995 and reports 0.1994). Our float distances carry noise far below a nanometre;
# this much is forgiven so that such a distance is not read as 0.19949999.
FLOAT_NOISE = 1e-9
# Float noise below KiCad's nanometre grid, for fill-to-fill distances.
ZONE_TO_ZONE_NOISE = 0.0000005
# Copper closer than this is touching: one net's items join, two nets' items short.
TOUCHING = 0.0005
# More findings than this of one rule between the same nets become one finding
# with a count and the worst location.
GROUP_AFTER = 3


@dataclass
class Violation:
    rule: str
    severity: str
    a: int
    b: int
    distance: float
    required: float
    rule_name: str
    x: float
    y: float
    layer: str
    fab: bool = False      # below the fab profile's minimum only: beyond KiCad, no KiCad type
    also: list = field(default_factory=list)   # the track's other violations of this rule (one_per_track)


def check(model: ProjectModel) -> list[Finding]:
    board = model.board
    if board is None or not board.copper_layers():
        return []
    # Each part runs when findings of a rule it makes are asked for (model.wants); the
    # copper, its near pairs and the holes are built when a part that reads them runs.
    wants = model.wants
    rules = model.rules
    findings: list[Finding] = []
    paired = ("board.short", "board.clearance", "board.unconnected", "board.mask-bridge", "board.dangling-via",
              "board.starved-thermal")
    if model.copper is None and wants(*paired, "board.dangling-track", "board.copper-to-hole"):
        model.copper = build_copper(board)
    copper = model.copper
    if copper is not None and len(copper):
        if wants(*paired):
            # Beyond touching copper only the clearance and mask rules look: the others read
            # the pairs closer than TOUCHING (or their pads' grow), which any reach finds.
            far = wants("board.short", "board.clearance", "board.mask-bridge")
            pairs = _near_pairs(copper, _largest_clearance(copper, rules, model) if far else 0.0)
            same = (copper.net[pairs.a] == copper.net[pairs.b]) & (pairs.distance < TOUCHING)
        if wants("board.short", "board.clearance"):
            findings += _clearance_findings(board, copper, rules, model, pairs)
        if wants("board.unconnected"):
            findings += _connectivity_findings(board, copper, pairs)
        if wants("board.mask-bridge"):
            findings += mask_bridge_findings(board, copper, pairs.a, pairs.b, pairs.distance,
                                             _tested(copper, pairs.a, pairs.b))
            findings += mask_shape_findings(board, copper)
        if wants("board.dangling-via"):
            findings += _dangling_via_findings(board, copper, pairs.a[same], pairs.b[same])
        if wants("board.starved-thermal"):
            findings += starved_thermal_findings(board, copper, pairs.a[same], pairs.b[same],
                                                 min_resolved_spokes(model.pro))
        if wants("board.dangling-track"):
            findings += _dangling_findings(board, copper)
    if wants("board.track-width"):
        findings += _track_width_findings(board, rules, model)
    if wants("board.hole-clearance", "board.copper-to-hole"):
        holes = build_holes(board)
        if wants("board.hole-clearance"):
            findings += _hole_findings(board, holes, rules)
        if copper is not None and len(copper) and wants("board.copper-to-hole"):
            findings += hole_clearance_findings(board, copper, holes, model)
    return findings


# -- pairs -------------------------------------------------------------------------

@dataclass
class Pairs:
    a: np.ndarray          # item indices, a < b
    b: np.ndarray
    distance: np.ndarray   # copper to copper (negative when they overlap)
    unit_a: np.ndarray     # the units that gave the smallest distance (-1: found by containment)
    unit_b: np.ndarray


def _largest_clearance(copper: Copper, rules: BoardRules, model: ProjectModel) -> float:
    values = [rules.min_clearance, *(nc.clearance for nc in rules.netclasses.values())]
    values += [float(copper.local_clearance.max())] if len(copper) else []
    values += [rule.constraints["clearance"][0] or 0.0 for rule in rules.rules_with("clearance")]
    fab = model.profile.minimum("clearance_mm")
    values.append(fab or 0.0)
    return max(values)


def _near_pairs(copper: Copper, reach: float) -> Pairs:
    units = copper.unit_geom
    radius = copper.unit_radius
    unit_a, unit_b = _candidate_units(copper, reach + TOUCHING)
    distance = shapely.distance(units[unit_a], units[unit_b]) - radius[unit_a] - radius[unit_b]
    item_a, item_b = copper.unit_item[unit_a], copper.unit_item[unit_b]
    contained = _inside_fills(copper)
    if contained is not None:
        fill, other, depth = contained
        lo, hi = np.minimum(fill, other), np.maximum(fill, other)
        item_a = np.concatenate([item_a, lo])
        item_b = np.concatenate([item_b, hi])
        distance = np.concatenate([distance, depth])
        unit_a = np.concatenate([unit_a, np.full(len(lo), -1)])
        unit_b = np.concatenate([unit_b, np.full(len(lo), -1)])
    # The smallest distance per item pair.
    key = item_a.astype(np.int64) * len(copper) + item_b
    order = np.lexsort((distance, key))
    key = key[order]
    first = np.concatenate([[True], key[1:] != key[:-1]]) if len(key) else np.zeros(0, dtype=bool)
    pick = order[first]
    return Pairs(a=item_a[pick], b=item_b[pick], distance=distance[pick], unit_a=unit_a[pick], unit_b=unit_b[pick])


def _candidate_units(copper: Copper, reach: float) -> tuple[np.ndarray, np.ndarray]:
    """Unit pairs of two items on a shared layer whose boxes, each grown by its unit's radius
    and half the reach, overlap: every pair of copper closer than the reach, each once, the
    unit of the lower item first, in the order of (unit a, unit b).

    One STRtree per copper layer over the grown boxes, queried with the same boxes: an
    envelope test in C, and items of other layers are never candidates. The boxes' gap
    is a lower bound of the distance, so nothing closer than the reach is missed.
    """
    # A hole item's box is grown by its pad's radius: connectivity measures to the full pad.
    boxes = grown_boxes(copper.unit_geom, copper.unit_radius + copper.grow[copper.unit_item] + reach / 2,
                        copper.unit_bounds)
    unit_layers = copper.layers[copper.unit_item]
    firsts, seconds = [], []
    for bit in range(len(copper.layer_names)):
        on = np.flatnonzero((unit_layers >> bit) & 1)
        if len(on) < 2:
            continue
        query_in, query_tree = box_pairs(boxes[on])    # bounded: stacked copper is refused, not measured
        query_in, query_tree = on[query_in], on[query_tree]
        keep = copper.unit_item[query_in] < copper.unit_item[query_tree]   # each pair once, no item with itself
        firsts.append(query_in[keep])
        seconds.append(query_tree[keep])
    if not firsts:
        return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64)
    # A pair on several shared layers (through-hole pads, vias) is found on each of them.
    key = np.unique(np.concatenate(firsts).astype(np.int64) * len(boxes) + np.concatenate(seconds))
    return key // len(boxes), key % len(boxes)


def grown_boxes(geometries: np.ndarray, margin, bounds: np.ndarray | None = None) -> np.ndarray:
    """Each geometry's bounding box (``bounds`` when known) grown by ``margin``: an STRtree
    query with these is an envelope test in C, much cheaper than GEOS's "dwithin" (which
    prepares every input); the exact distances are measured afterwards on the candidates only."""
    if bounds is None:
        bounds = shapely.bounds(geometries)
    margin = np.asarray(margin, dtype=np.float64)
    return shapely.box(bounds[:, 0] - margin, bounds[:, 1] - margin, bounds[:, 2] + margin, bounds[:, 3] + margin)


def _inside_fills(copper: Copper):
    """Items (and other fills) whose anchor lies inside a zone fill of a layer they share."""
    if not len(copper.fills):
        return None
    fills, others, depths = [], [], []
    x, y = copper.anchor[:, 0], copper.anchor[:, 1]
    bounds = shapely.bounds(copper.core[copper.fills])
    for fill, (x0, y0, x1, y1) in zip(copper.fills, bounds):
        candidates = np.flatnonzero(((copper.layers & copper.layers[fill]) != 0) & (x >= x0) & (x <= x1)
                                    & (y >= y0) & (y <= y1))
        candidates = candidates[candidates != fill]
        if not len(candidates):
            continue
        polygon = copper.core[fill]
        shapely.prepare(polygon)
        inside = shapely.contains_xy(polygon, x[candidates], y[candidates])
        hit = candidates[inside]
        fills.append(np.full(len(hit), fill))
        others.append(hit)
        depths.append(-copper.radius[hit] - copper.radius[fill])
    if not fills:
        return None
    return np.concatenate(fills), np.concatenate(others), np.concatenate(depths)


def _tested(copper: Copper, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Pairs KiCad's clearance test looks at (see the module docstring)."""
    net_a, net_b = copper.net[a], copper.net[b]
    kind_a, kind_b = copper.kind[a], copper.kind[b]
    fp_a, fp_b = copper.footprint[a], copper.footprint[b]
    tested = net_a != net_b
    no_net = (net_a == 0) & (net_b == 0)
    # Two items without a net: KiCad tests two pads, a zone against anything, a copper shape
    # against a pad (a footprint's shape touching its no-net pads is a short); not two tracks,
    # nor two shapes.
    pad_a, pad_b = kind_a == PAD, kind_b == PAD
    tested |= no_net & ((pad_a & pad_b) | (kind_a == ZONE) | (kind_b == ZONE)
                        | ((kind_a == SHAPE) & pad_b) | (pad_a & (kind_b == SHAPE)))
    same_footprint = (fp_a >= 0) & (fp_a == fp_b)
    if same_footprint.any():
        for index in np.flatnonzero(same_footprint & tested):
            if not _apart_in_footprint(copper, int(a[index]), int(b[index])):
                tested[index] = False
    # A net tie's copper shape joins the nets of its pads: copper of those nets may touch it.
    tie_shape = ((kind_a == SHAPE) | (kind_b == SHAPE)) & tested
    for index in np.flatnonzero(tie_shape):
        shape, other = (a[index], b[index]) if kind_a[index] == SHAPE else (b[index], a[index])
        if copper.net[other] in tie_nets(copper, copper.owner[shape].footprint):
            tested[index] = False
    return tested


def tie_nets(copper: Copper, footprint) -> set[int]:
    """The nets (copper's indices) a net-tie footprint's shapes join: those of its pads in a tie
    group (all its pads for a KiCad 6 net tie); none for another footprint."""
    if footprint is None or not footprint.net_tie:
        return set()
    index = {name: i for i, name in enumerate(copper.net_names)}
    groups = footprint.net_tie_groups
    return {index[pad.net] for pad in footprint.pads if pad.net in index
            and (not groups or any(pad.number in group for group in groups))}


def _apart_in_footprint(copper: Copper, a: int, b: int) -> bool:
    """Whether two items of one footprint are held apart: not the same pad number, and in a net
    tie only when no pad group of the tie holds them both (its copper shapes join its groups)."""
    owner_a, owner_b = copper.owner[a], copper.owner[b]
    footprint = owner_a[0] if copper.kind[a] == PAD else owner_a.footprint
    numbers = {o[1].number for o in (owner_a, owner_b) if isinstance(o, tuple)}
    if copper.kind[a] == PAD and copper.kind[b] == PAD and len(numbers) == 1 and "" not in numbers:
        return False   # one pad drawn twice (a pad number repeated)
    if not footprint.net_tie:
        return True
    if not footprint.net_tie_groups:
        return False   # KiCad 6 net tie: its copper joins its nets
    if len(numbers) < 2:   # a shape of the tie against a pad of a group: the tie's own copper
        return not any(numbers <= group for group in footprint.net_tie_groups)
    return not any(numbers <= group for group in footprint.net_tie_groups)


# -- clearance and shorts -----------------------------------------------------------

def _clearance_findings(board: Board, copper: Copper, rules: BoardRules, model: ProjectModel,
                        pairs: Pairs) -> list[Finding]:
    tested = _tested(copper, pairs.a, pairs.b)
    fab = model.profile.minimum("clearance_mm") or 0.0
    candidate = tested & (pairs.distance < np.maximum(fab, 0.0) + _ceiling(copper, rules))
    index = np.flatnonzero(candidate)
    if not len(index):
        return []
    a, b, distance = pairs.a[index], pairs.b[index], pairs.distance[index]
    required, rule_names = required_clearance(copper, rules, a, b)
    violations: list[Violation] = []
    fab_severity = model.fab_severity
    # Touching copper of two nets is a short; so is touching copper without a net on either side
    # (KiCad: "Items shorting two nets (nets  and )"), which only pads, zones and shapes get here.
    net_a, net_b = copper.net[a], copper.net[b]
    # A track, via or copper shape touching anything but a fill is tested by KiCad 9's
    # DRC_TEST_PROVIDER_COPPER_CLEARANCE::testSingleLayerItemAgainstItem: touching copper there is
    # shorting_items whatever the nets (its "otherNet" is the item's NETINFO, set for no net too:
    # "Items shorting two nets (nets  and /DIO22)"); pad against pad (testPadAgainstItem) only when
    # both have a net, else a clearance violation.
    kind_a, kind_b = copper.kind[a], copper.kind[b]
    single = (np.isin(kind_a, (TRACK, ARC, VIA, SHAPE)) | np.isin(kind_b, (TRACK, ARC, VIA, SHAPE))) \
        & (kind_a != ZONE) & (kind_b != ZONE)
    short = (distance < TOUCHING) & (((net_a != net_b) & (net_a != 0) & (net_b != 0)) | ((net_a == 0) & (net_b == 0))
                                     | (single & (net_a != net_b)))
    both_fills = (copper.kind[a] == ZONE) & (copper.kind[b] == ZONE)
    # Two fills of different nets: KiCad 9's zone-to-zone test compares the fills with no epsilon
    # (it reports 0.149999 mm against 0.15); a nanometre of float noise is not a violation.
    board_rule = np.where(both_fills, distance < required - ZONE_TO_ZONE_NOISE,
                          distance < required - DRC_EPSILON - FLOAT_NOISE)
    fab_rule = ~both_fills & ~board_rule & (distance < fab - DRC_EPSILON - FLOAT_NOISE)
    hits = np.flatnonzero(short | board_rule | fab_rule)
    if not len(hits):
        return []
    points = _contact_points(copper, pairs, index[hits])
    for k, (x, y) in zip(hits, points):
        shared = int(copper.layers[a[k]] & copper.layers[b[k]])
        layer = copper.first_layer(shared)
        if short[k]:
            violations.append(Violation("board.short", "error", int(a[k]), int(b[k]), float(distance[k]),
                                        float(required[k]), str(rule_names[k]), x, y, layer))
        elif board_rule[k]:
            violations.append(Violation("board.clearance", "error", int(a[k]), int(b[k]), float(distance[k]),
                                        float(required[k]), str(rule_names[k]), x, y, layer))
        else:
            violations.append(Violation("board.clearance", fab_severity, int(a[k]), int(b[k]), float(distance[k]),
                                        fab, f"{model.profile.name}'s minimum spacing", x, y, layer, fab=True))
    return _group(board, copper, violations)


def _ceiling(copper: Copper, rules: BoardRules) -> float:
    values = [rules.min_clearance, *(nc.clearance for nc in rules.netclasses.values())]
    values += [float(copper.local_clearance.max())] if len(copper) else []
    values += [rule.constraints["clearance"][0] or 0.0 for rule in rules.rules_with("clearance")]
    return max(values)


def required_clearance(copper: Copper, rules: BoardRules, a: np.ndarray, b: np.ndarray):
    """The governing clearance of each pair and the name of the rule that sets it."""
    class_names = np.array([rules.netclass_name(name) for name in copper.net_names], dtype=object)
    class_clearance = np.array([rules.netclasses[c].clearance if c in rules.netclasses else 0.0
                                for c in class_names], dtype=np.float64)
    class_a, class_b = class_names[copper.net[a]], class_names[copper.net[b]]
    clear_a, clear_b = class_clearance[copper.net[a]], class_clearance[copper.net[b]]
    required = np.maximum(clear_a, clear_b)
    names = np.where(clear_a >= clear_b, class_a, class_b)
    names = np.array([f"netclass '{n}'" for n in names], dtype=object)
    required, names = _coupled_pairs(copper, rules, a, b, class_names, required, names)
    # Local overrides (pad, footprint, zone clearance) replace the net classes. Against a
    # zone, the item's own override wins over the zone's (KiCad 6 fills and checks that way).
    local_a, local_b = copper.local_clearance[a], copper.local_clearance[b]
    zone_a, zone_b = copper.kind[a] == ZONE, copper.kind[b] == ZONE
    local_a = np.where(zone_a & ~zone_b & (local_b > 0), 0.0, local_a)
    local_b = np.where(zone_b & ~zone_a & (local_a > 0), 0.0, local_b)
    # Between two zones the zones' own clearances are the filler's: KiCad 9's zone-to-zone
    # test holds the fills to the net classes and rules (tinytapeout: fills 0.466 mm apart under
    # a 0.5 mm zone clearance are not reported).
    both = zone_a & zone_b
    local_a = np.where(both, 0.0, local_a)
    local_b = np.where(both, 0.0, local_b)
    local = np.maximum(local_a, local_b)
    has_local = local > 0
    if has_local.any():
        required = np.where(has_local, local, required)
        names = np.where(has_local, "local override", names)
    custom = rules.rules_with("clearance")
    if custom:
        shared = copper.layers[a] & copper.layers[b]
        props_a = _properties(copper, rules, a, shared, class_names)
        props_b = _properties(copper, rules, b, shared, class_names)
        for rule in custom:
            minimum = rule.constraints["clearance"][0]
            if minimum is None:
                continue
            applies = _layer_applies(rule.layer, copper, shared)
            if rule.condition is not None:
                applies &= (np.asarray(rule.condition.evaluate(props_a, props_b), dtype=bool)
                            | np.asarray(rule.condition.evaluate(props_b, props_a), dtype=bool))
            required = np.where(applies, minimum, required)
            names = np.where(applies, f"rule '{rule.name}'", names)
    # The board minimum is a floor for the net classes (DRC_ENGINE::loadImplicitRules: max(board
    # minimum, class clearance)) and local overrides (EvalRules), not for a custom rule nor the
    # diff-pair gap rule, whose own minimum stands (kicad-cli 9.0.8 on esp32-bus-pirate-dock: a
    # track 0.1005 mm from a fill under a 0.1 mm rule and a 0.1016 mm board minimum is silent).
    own_minimum = np.array([n.startswith("rule '") or n.endswith("(diff pair)") for n in names], dtype=bool)
    below_board = (required < rules.min_clearance) & ~own_minimum
    if below_board.any():
        required = np.where(below_board, rules.min_clearance, required)
        names = np.where(below_board, "board minimum clearance", names)
    return required, names


def _coupled_pairs(copper: Copper, rules: BoardRules, a: np.ndarray, b: np.ndarray, class_names,
                   required: np.ndarray, names: np.ndarray):
    """The two halves of a differential pair are held to their class's diff-pair gap when it is
    narrower than the class clearance (KiCad 9: DRC_ENGINE::loadImplicitRules, the rule
    ``A.NetClass == '<class>' && AB.isCoupledDiffPair()``, tried with either item as A)."""
    gaps = {name: coupled_gap(netclass) for name, netclass in rules.netclasses.items()}
    if not any(gap is not None for gap in gaps.values()):
        return required, names
    index = {name: i for i, name in enumerate(copper.net_names)}
    complement = np.array([index.get(diff_pair_complement(name) or "", -1) if name else -1
                           for name in copper.net_names], dtype=np.int64)
    gap_of = np.array([gaps.get(c) if gaps.get(c) is not None else np.nan for c in class_names], dtype=np.float64)
    net_a, net_b = copper.net[a], copper.net[b]
    coupled = (complement[net_a] == net_b) & (net_a != 0)
    if not coupled.any():
        return required, names
    from_a = coupled & ~np.isnan(gap_of[net_a])
    from_b = coupled & ~from_a & ~np.isnan(gap_of[net_b])
    required = np.where(from_a, gap_of[net_a], np.where(from_b, gap_of[net_b], required))
    label = np.array([f"netclass '{c}' (diff pair)" for c in class_names], dtype=object)
    names = np.where(from_a, label[net_a], np.where(from_b, label[net_b], names))
    return required, names


def _properties(copper: Copper, rules: BoardRules, items: np.ndarray, layers: np.ndarray, class_names):
    """The items as a custom rule's condition sees them (checker/dru_items.py). The board, for
    courtyards and rule areas, is the one the copper was built from (its offset_of's owner)."""
    return CopperItems(copper, rules, items, layers, class_names, getattr(copper.offset_of, "__self__", None))


def _layer_applies(layer: str | None, copper: Copper, shared: np.ndarray) -> np.ndarray:
    if layer is None:
        return np.ones(len(shared), dtype=bool)
    count = len(copper.layer_names)
    outer = (1 | (1 << (count - 1))) if count else 0
    if layer == "outer":
        return (shared & outer) != 0
    if layer == "inner":
        return (shared & ~outer) != 0
    if layer in copper.layer_names:
        return (shared & (1 << copper.layer_names.index(layer))) != 0
    return np.zeros(len(shared), dtype=bool)


def _contact_points(copper: Copper, pairs: Pairs, index: np.ndarray) -> list[tuple[float, float]]:
    """Where two items come closest (the middle of the shortest line between their cores)."""
    unit_a, unit_b = pairs.unit_a[index], pairs.unit_b[index]
    geom_a = np.where(unit_a >= 0, copper.unit_geom[np.maximum(unit_a, 0)], copper.core[pairs.a[index]])
    geom_b = np.where(unit_b >= 0, copper.unit_geom[np.maximum(unit_b, 0)], copper.core[pairs.b[index]])
    contained = unit_a < 0
    # Only pairs measured by their units: copper inside a fill is placed at its anchor below,
    # and a line to a whole fill costs its every vertex (4 s for a 300,000-point fill).
    middle = np.zeros((len(index), 2))
    if (~contained).any():
        lines = shapely.shortest_line(geom_a[~contained], geom_b[~contained])
        middle[~contained] = shapely.get_coordinates(lines).reshape(-1, 2, 2).mean(axis=1)
    out = []
    for k, (x, y) in enumerate(middle):
        if contained[k]:   # copper inside a fill: point at the item, not at the fill's edge
            item = pairs.b[index[k]] if copper.kind[pairs.a[index[k]]] == ZONE else pairs.a[index[k]]
            x, y = copper.anchor[item]
        out.append((round(float(x), 4), round(float(y), 4)))
    return out


def _net(copper: Copper, item: int) -> str:
    return copper.net_names[copper.net[item]] or "(no net)"


def _one_per_track(copper: Copper, violations: list[Violation]) -> list[Violation]:
    """A track's violations of one KiCad type as one, its worst, carrying the others: KiCad's DRC
    reports one error per track (unless asked for all track errors), so a track too close to
    three pads is one KiCad error; the finding still lists every place."""
    kept: list[Violation] = []
    heads: dict[tuple, Violation] = {}
    for violation in sorted(violations, key=lambda v: v.distance):
        tracks = [i for i in (violation.a, violation.b) if copper.kind[i] in (TRACK, ARC)]
        if violation.fab or not tracks:
            kept.append(violation)
            continue
        # Per KiCad type: a stub crossing one track and touching another is both.
        key = (min(tracks), violation.rule, violation.severity, _kicad_type(copper, violation))
        head = heads.get(key)
        if head is None:
            heads[key] = violation
            kept.append(violation)
        else:
            head.also.append(violation)
    return kept


def _group(board: Board, copper: Copper, violations: list[Violation]) -> list[Finding]:
    """One finding per pair (per track, see _one_per_track); many of one rule between the same
    nets become one with a count."""
    groups: dict[tuple, list[Violation]] = defaultdict(list)
    for violation in _one_per_track(copper, violations):
        nets = tuple(sorted((_net(copper, violation.a), _net(copper, violation.b))))
        groups[(violation.rule, violation.severity, nets)].append(violation)
    findings = []
    for (_rule, _severity, nets), group in groups.items():
        group.sort(key=lambda v: v.distance)
        if len(group) > GROUP_AFTER:
            worst = group[0]
            finding = _finding(board, copper, worst, count=len(group), nets=nets)
            finding.locations = [_place(copper, p) for v in group for p in (v, *v.also)]
            findings.append(finding)
        else:
            findings += [_finding(board, copper, v) for v in group]
    return findings


def _finding(board: Board, copper: Copper, v: Violation, count: int = 1, nets: tuple = ()) -> Finding:
    # Locate at the item a person edits: a track, via or pad rather than a zone fill.
    first, second = (v.b, v.a) if copper.kind[v.a] == ZONE and copper.kind[v.b] != ZONE else (v.a, v.b)
    line, column = copper.where(first)
    one = f"{copper.label(first)} of net {_net(copper, first)}"
    two = f"{copper.label(second)} of net {_net(copper, second)}"
    distance = max(0.0, v.distance)
    if v.rule == "board.short":
        text = f"{one} touches {two} on {v.layer} (a short)"
    else:
        text = (f"{one} is {distance:.4g} mm from {two} on {v.layer}; "
                f"{v.rule_name} requires {v.required:.4g} mm")
    identity = (board.file, *sorted((copper.identity(first), copper.identity(second))))
    if v.also:
        text += f"; and {len(v.also)} more place(s) along the same track"
    if count > 1:
        text = (f"{count} places where nets {nets[0]} and {nets[1]} "
                f"{'touch' if v.rule == 'board.short' else 'are closer than their clearance'}; worst: {text}")
        identity = (board.file, "group", *nets)
    return Finding(v.rule, text, identity=identity, severity=v.severity, path=board.file, line=line, column=column,
                   kicad_type=_kicad_type(copper, v),
                   locations=[_place(copper, p) for p in (v, *v.also)] if v.also else [],
                   extra={"x": _point(copper, v)[0], "y": _point(copper, v)[1], "layer": v.layer, "actual_mm": round(distance, 4),
                          "required_mm": round(v.required, 4), "rule": v.rule_name, "count": count,
                          "uuids": _uuids(copper, first, second),
                          "nets": sorted({copper.net_names[copper.net[first]], copper.net_names[copper.net[second]]})})


def _kicad_type(copper: Copper, v: Violation) -> str:
    """KiCad's type for the violation: two tracks that cross are "tracks_crossing", other
    touching copper of two nets "shorting_items"; none for the fab's minimum (KiCad has none)."""
    if v.fab:
        return ""   # "" (not None): no KiCad type, the catalogue must not supply one
    if v.rule != "board.short" or ZONE in (copper.kind[v.a], copper.kind[v.b]):
        return "clearance"   # KiCad reports copper over a fill of another net as clearance (actual 0)
    tracks = (TRACK, ARC)
    if copper.kind[v.a] in tracks and copper.kind[v.b] in tracks and \
            shapely.intersects(copper.core[v.a], copper.core[v.b]):
        return "tracks_crossing"
    return "shorting_items"


def _uuids(copper: Copper, *items: int) -> list[str]:
    return [uuid for uuid in dict.fromkeys(copper.uuid(int(i)) for i in items) if uuid]


def _place(copper: Copper, v: Violation) -> dict:
    x, y = _point(copper, v)
    return {"x": x, "y": y, "layer": v.layer, "uuids": _uuids(copper, v.a, v.b)}


def _point(copper: Copper, v: Violation) -> tuple[float, float]:
    """Where the violation is shown: where the copper meets, or, for a pad shorted to copper of
    another net (KiCad's shorting_items), the pad's own position: the pad is what is moved or
    re-netted, and it is the place KiCad's report gives for the pad (boards without item uuids,
    such as KiCad 5 files, can only be matched with KiCad's report by that place)."""
    if v.rule == "board.short" and _kicad_type(copper, v) == "shorting_items":
        pads = [i for i in (v.a, v.b) if copper.kind[i] == PAD]
        if len(pads) == 1:
            pad = copper.owner[pads[0]][1]
            return round(float(pad.x), 4), round(float(pad.y), 4)
    return v.x, v.y


# -- connectivity -----------------------------------------------------------------

def _connectivity_findings(board: Board, copper: Copper, pairs: Pairs) -> list[Finding]:
    """Per net, union the touching items; every island beyond the first that holds a pad is reported."""
    # A via or pad joins its net's copper by its full pad even on layers where KiCad does not
    # flash it (KiCad's connectivity does the same); its hole item is one with its pad item.
    touching = pairs.distance - copper.grow[pairs.a] - copper.grow[pairs.b] < TOUCHING
    same = (copper.net[pairs.a] == copper.net[pairs.b]) & (copper.net[pairs.a] != 0) & touching
    pad_items, hole_items = copper.hole_of
    root = components(len(copper), np.concatenate([pairs.a[same], pad_items]),
                       np.concatenate([pairs.b[same], hole_items]))
    # KiCad's ratsnest joins every island of a net's copper (pads, tracks, vias, fills that hold
    # any of them); each island beyond the first is one missing connection. An island of zone
    # fill alone is the filler's business (KiCad: isolated_copper), not a missing connection.
    netted = np.flatnonzero((copper.net != 0) & (copper.kind != ZONE))
    island_keys = np.unique(copper.net[netted].astype(np.int64) * len(copper) + root[netted])
    nets, island_counts = np.unique(island_keys // len(copper), return_counts=True)
    split = nets[island_counts >= 2]
    if not len(split):
        return []
    findings = []
    for net in split.tolist():
        items = np.flatnonzero((copper.net == net) & (copper.kind != ZONE))
        findings += [_unconnected(board, copper, net, root, edge) for edge in _missing_links(copper, items, root)]
    return findings


def _anchors(copper: Copper, items: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """KiCad's connection anchors of the items: a track's two ends, a via's centre, a pad's
    position (its hole, not its offset copper). Returns the points and the item of each."""
    points = [copper.anchor[items]]
    owners = [items]
    pads = items[copper.kind[items] == PAD]
    if len(pads):
        points[0] = points[0].copy()
        points[0][copper.kind[items] == PAD] = [(copper.owner[i][1].x, copper.owner[i][1].y) for i in pads.tolist()]
    tracks = items[(copper.kind[items] == TRACK) | (copper.kind[items] == ARC)]
    if len(tracks):
        points.append(shapely.get_coordinates(shapely.get_point(copper.core[tracks], -1)))
        owners.append(tracks)
    return np.concatenate(points), np.concatenate(owners)


def _missing_links(copper: Copper, items: np.ndarray, root: np.ndarray) -> list[tuple[int, int, float]]:
    """KiCad's ratsnest of one net: the minimum spanning tree between its islands, each edge
    between the nearest anchors of two islands (layers apart: a ratsnest line has none),
    found over the anchors' triangulation as KiCad does (checker/ratsnest.py: n log n).
    Returns the edges as (anchor item, anchor item, length), one per missing connection."""
    points, owners = _anchors(copper, items)
    labels, island = np.unique(root[owners], return_inverse=True)
    island = island.reshape(-1)
    return [(int(owners[a]), int(owners[b]), length, tuple(points[a]), tuple(points[b]),
             _at_anchor(points, owners, island, a) + _at_anchor(points, owners, island, b))
            for a, b, length in tree_edges(points, island)]


def _at_anchor(points: np.ndarray, owners: np.ndarray, island: np.ndarray, anchor: int) -> list[int]:
    """The items of the anchor's island that have an anchor on the same point (two tracks
    meeting at a corner): KiCad names one of them, chosen by its own node order."""
    here = np.flatnonzero((island == island[anchor])
                          & (np.hypot(points[:, 0] - points[anchor, 0], points[:, 1] - points[anchor, 1]) < 1e-6))
    return [int(owners[anchor])] + [int(i) for i in dict.fromkeys(owners[here].tolist()) if i != owners[anchor]]


def _unconnected(board: Board, copper: Copper, net: int, root: np.ndarray, edge) -> Finding:
    """KiCad's "Missing connection between items": one edge of the net's ratsnest, between
    the anchors of two of its islands."""
    here, there, length, (x1, y1), (x2, y2), at_ends = edge
    # Name the island with fewer pads: "pad 8 of U1 not joined to the rest of the net".
    sides = []
    for item in (here, there):
        members = np.flatnonzero((root == root[item]) & (copper.net == net) & (copper.kind != ZONE))
        sides.append([int(i) for i in members if copper.kind[i] == PAD])
    if len(sides[1]) < len(sides[0]) or (len(sides[1]) == len(sides[0]) and there < here):
        here, there, (x1, y1), (x2, y2) = there, here, (x2, y2), (x1, y1)
        sides.reverse()
    pads = sides[0]
    named = pads or [here]
    anchor = named[0]
    line, column = copper.where(anchor)
    name = copper.net_names[net]
    labels = ", ".join(copper.label(i) for i in named[:4]) + (f" and {len(named) - 4} more" if len(named) > 4 else "")
    if not pads:
        labels += " (no pad)"
    layer, to_layer = (copper.first_layer(int(copper.layers[i])) for i in (here, there))
    return Finding("board.unconnected",
                   f"net {name}: {labels} not joined to the rest of the net; nearest points "
                   f"({x1:.4g}, {y1:.4g}) and ({x2:.4g}, {y2:.4g}), {length:.4g} mm apart",
                   # Both islands: one island can lack several links (two edges of the tree).
                   identity=(board.file, name, *sorted(copper.identity(i) for i in named), "to",
                             min(copper.identity(i) for i in (sides[1] or [there]))),
                   path=board.file, line=line, column=column, kicad_type="unconnected_items",
                   # One missing connection is one place (as KiCad's one violation of two items):
                   # its near end, naming the items at both ends (all that meet at an end point).
                   extra={"x": round(float(x1), 4), "y": round(float(y1), 4), "layer": layer,
                          "to_x": round(float(x2), 4), "to_y": round(float(y2), 4), "to_layer": to_layer,
                          "nets": [name], "uuids": _uuids(copper, here, there, *at_ends)})


# -- dangling track ends ------------------------------------------------------------

def _dangling_findings(board: Board, copper: Copper) -> list[Finding]:
    tracks = np.flatnonzero((copper.kind == TRACK) | (copper.kind == ARC))
    if not len(tracks):
        return []
    # Start and end of every track (an arc's polyline ends where the arc does).
    ends = np.concatenate([copper.anchor[tracks], shapely.get_coordinates(shapely.get_point(copper.core[tracks], -1))])
    end_item = np.concatenate([tracks, tracks])
    # Most ends lie exactly on another track's end or a via's centre of their net and layer:
    # those join without geometry. The rest are measured against the copper around them.
    connected = _on_a_track_end_or_via(copper, ends, end_item)
    open_ends = np.flatnonzero(~connected)
    if len(open_ends):
        _touching_copper(copper, ends, end_item, open_ends, connected)
    for fill in copper.fills:   # an end inside a fill (of any net, as above: KiCad joins them)
        open_ends = np.flatnonzero(~connected & ((copper.layers[end_item] & copper.layers[fill]) != 0))
        if len(open_ends):
            polygon = copper.core[fill]
            shapely.prepare(polygon)
            near = shapely.dwithin(polygon, shapely.points(ends[open_ends]), copper.radius[end_item[open_ends]])
            connected[open_ends[near]] = True
    # KiCad reports a track once, at its start when that is open, else at its end.
    open_ends = np.flatnonzero(~connected)
    both_open = open_ends >= len(tracks)
    both_open[both_open] = ~connected[open_ends[both_open] - len(tracks)]
    by_net: dict[str, list[int]] = defaultdict(list)
    for end in open_ends[~both_open].tolist():
        by_net[_net(copper, end_item[end])].append(end)
    findings = []
    for net, open_ends in sorted(by_net.items()):
        first = int(end_item[open_ends[0]])
        x, y = ends[open_ends[0]]
        line, column = copper.where(first)
        layer = copper.first_layer(int(copper.layers[first]))
        places = [{"x": round(float(ends[e][0]), 4), "y": round(float(ends[e][1]), 4),
                   "layer": copper.first_layer(int(copper.layers[end_item[e]])),
                   "uuids": _uuids(copper, end_item[e])} for e in open_ends]
        findings.append(Finding("board.dangling-track",
                                f"{len(open_ends)} track(s) of net {net} end on nothing; first at "
                                f"({x:.4g}, {y:.4g}) on {layer}",
                                identity=(board.file, net, *sorted({copper.identity(int(end_item[e])) for e in open_ends})),
                                path=board.file, line=line, column=column, kicad_type="track_dangling",
                                locations=places if len(places) > 1 else [],
                                extra={"x": round(float(x), 4), "y": round(float(y), 4), "layer": layer,
                                       "count": len(open_ends), "nets": [copper.net_names[copper.net[first]]],
                                       "uuids": _uuids(copper, first)}))
    return findings


def _touching_copper(copper: Copper, ends: np.ndarray, end_item: np.ndarray, open_ends: np.ndarray,
                     connected: np.ndarray) -> None:
    """Mark the open ends that touch other copper of their layer (a pad, a track's end, a via,
    a fill's edge), of any net: KiCad 9's connectivity joins a track to whatever touches it
    (a track can take another net; only two items that cannot, pads and fills, stay apart by
    net), and a track end is dangling only when nothing it is joined to lies under it. Copper
    of another net under the end is a short, reported as such."""
    points = shapely.points(ends[open_ends])
    end_radius = copper.radius[end_item]
    # Candidates from the copper's side: each unit's box grown by its own radius and the widest
    # end's, queried against the open ends, holds every end that can touch it.
    query_tree, local = shapely.STRtree(points).query(
        grown_boxes(copper.unit_geom, copper.unit_radius + float(end_radius.max()) + TOUCHING, copper.unit_bounds))
    query_in = open_ends[local]
    other = copper.unit_item[query_tree]
    mine = end_item[query_in]
    keep = (other != mine) & ((copper.layers[other] & copper.layers[mine]) != 0)
    local, query_in, query_tree = local[keep], query_in[keep], query_tree[keep]
    # A track end joins another track at that track's ends (the two ends' copper touching) or
    # anywhere along it when the end's point lies on its copper: KiCad 9 takes a T-junction
    # (an end on the middle of a track of its net) as connected.
    other = copper.unit_item[query_tree]
    is_track = (copper.kind[other] == TRACK) | (copper.kind[other] == ARC)
    target = copper.unit_geom[query_tree]
    distance = shapely.distance(points[local], target)
    on_it = distance - copper.unit_radius[query_tree] < TOUCHING
    if is_track.any():
        target = target.copy()
        track_units, back = np.unique(query_tree[is_track], return_inverse=True)
        target[is_track] = shapely.boundary(copper.unit_geom[track_units])[back]
        distance = shapely.distance(points[local], target)
    # Elsewhere the end counts with its track's half width, as KiCad hit-tests it.
    gap = distance - copper.unit_radius[query_tree] - end_radius[query_in]
    hit = (gap < TOUCHING) | (is_track & on_it)
    # KiCad 9 (CONNECTIVITY_DATA::TestTrackEndpointDangling, as DRC calls it): a pad, via or
    # fill under both ends of a short track joins the whole track; another track under both
    # counts for the end nearer to it only, so a stub lying on one track, and on nothing else,
    # still dangles at its far end.
    half = len(ends) // 2
    opposite = np.where(query_in < half, query_in + half, query_in - half)
    far = shapely.points(ends[opposite[hit]])
    far_distance = shapely.distance(far, target[hit])
    far_gap = far_distance - copper.unit_radius[query_tree[hit]] - end_radius[opposite[hit]]
    far_on = shapely.distance(far, copper.unit_geom[query_tree[hit]]) - copper.unit_radius[query_tree[hit]] < TOUCHING
    both = (far_gap < TOUCHING) | (is_track[hit] & far_on)
    under = both & ~np.isin(copper.kind[other[hit]], (TRACK, ARC))
    connected[opposite[hit][under]] = True
    both &= ~under
    if both.any():
        items = other[hit][both]
        here = _item_distance(copper, items, ends[query_in[hit][both]])
        there = _item_distance(copper, items, ends[opposite[hit][both]])
        at_start = query_in[hit][both] < half
        # A tie goes to the end (KiCad: start only when strictly nearer).
        mine = np.where(at_start, here < there, here <= there)
        keep = np.ones(int(hit.sum()), dtype=bool)
        keep[np.flatnonzero(both)[~mine]] = False
        hit[np.flatnonzero(hit)[~keep]] = False
    connected[query_in[hit]] = True


def _item_distance(copper: Copper, items: np.ndarray, points: np.ndarray) -> np.ndarray:
    """KiCad's getMinDist: from a point to a track's nearer end, else to the item's position
    (a pad's or via's centre)."""
    out = np.empty(len(items))
    for k, (item, (x, y)) in enumerate(zip(items.tolist(), points)):
        kind = copper.kind[item]
        if kind in (TRACK, ARC):
            (x0, y0), (x1, y1) = copper.anchor[item], shapely.get_coordinates(shapely.get_point(copper.core[item], -1))[0]
            out[k] = min(np.hypot(x - x0, y - y0), np.hypot(x - x1, y - y1))
        else:
            cx, cy = (copper.owner[item][1].x, copper.owner[item][1].y) if kind == PAD else copper.anchor[item]
            out[k] = np.hypot(x - cx, y - cy)
    return out


def _on_a_track_end_or_via(copper: Copper, ends: np.ndarray, end_item: np.ndarray) -> np.ndarray:
    """Which track ends share their exact point, net and layer with another track's end or a via.

    Such an end touches that copper (distance 0) whatever the widths; the others are left to
    the geometry. A place is (x, y, net, layer): a track end gives one, a via one per layer
    it spans; an end is joined when two items or more stand at its place.
    """
    vias = np.flatnonzero(copper.kind == VIA)
    spans = [(via, 1 << bit) for via in vias.tolist() for bit in range(len(copper.layer_names))
             if copper.layers[via] >> bit & 1]
    via_item = np.array([via for via, _ in spans], dtype=np.int64)
    count = len(ends)
    # Exact places as integers (a coordinate's bits), sorted together.
    places = np.empty((count + len(spans), 4), dtype=np.int64)
    places[:count, :2] = np.ascontiguousarray(ends, dtype=np.float64).view(np.int64)
    places[:count, 2] = copper.net[end_item]
    places[:count, 3] = copper.layers[end_item]
    places[count:, :2] = np.ascontiguousarray(copper.anchor[via_item].reshape(-1, 2)).view(np.int64)
    places[count:, 2] = copper.net[via_item]
    places[count:, 3] = [bit for _, bit in spans]
    order = np.lexsort(places.T[::-1])
    ordered = places[order]
    starts = np.ones(len(order), dtype=bool)
    starts[1:] = (ordered[1:] != ordered[:-1]).any(axis=1)
    place = np.empty(len(order), dtype=np.int64)
    place[order] = np.cumsum(starts) - 1
    # Distinct items per place: a zero-length track's two ends are one item.
    item = np.concatenate([end_item, via_item]).astype(np.int64)
    pairs = np.unique(place * (int(item.max()) + 1) + item) // (int(item.max()) + 1)
    distinct = np.bincount(pairs, minlength=int(place.max()) + 1)
    return distinct[place[:count]] >= 2


# -- dangling vias ----------------------------------------------------------------------

def _dangling_via_findings(board: Board, copper: Copper, a: np.ndarray, b: np.ndarray) -> list[Finding]:
    """KiCad's via_dangling: a via that fewer than two items of its net (tracks, pads, zone
    fills, other vias) touch joins nothing to anything. One finding per net."""
    vias = np.flatnonzero(copper.kind == VIA)
    if not len(vias):
        return []
    # A via and its hole item are one via.
    via_of = np.arange(len(copper))
    pad_items, hole_items = copper.hole_of
    via_of[hole_items] = pad_items
    # Distinct items of the net touching each via (its pad or its hole item).
    pairs = []
    for mine, other in ((a, b), (b, a)):
        is_via = (copper.kind[mine] == VIA) & (via_of[mine] != via_of[other])
        pairs.append(via_of[mine[is_via]].astype(np.int64) * len(copper) + via_of[other[is_via]])
    touching = np.unique(np.concatenate(pairs)) // len(copper)
    counts = np.bincount(touching, minlength=len(copper))
    heads = np.unique(via_of[vias])
    dangling = heads[(counts[heads] < 2) & (copper.net[heads] != 0)]
    by_net: dict[str, list[int]] = defaultdict(list)
    for via in dangling.tolist():
        by_net[_net(copper, via)].append(via)
    findings = []
    for net, items in sorted(by_net.items()):
        first = items[0]
        line, column = copper.where(first)
        places = [{"x": round(float(copper.anchor[i][0]), 4), "y": round(float(copper.anchor[i][1]), 4),
                   "layer": "", "uuids": _uuids(copper, i)} for i in items]
        findings.append(Finding("board.dangling-via",
                                f"{len(items)} via(s) of net {net} touch fewer than two items of their net; first at "
                                f"({places[0]['x']:.4g}, {places[0]['y']:.4g})",
                                identity=(board.file, "via", net, *sorted(copper.identity(i) for i in items)),
                                path=board.file, line=line, column=column, kicad_type="via_dangling",
                                locations=places if len(places) > 1 else [],
                                extra={"x": places[0]["x"], "y": places[0]["y"], "count": len(items),
                                       "nets": [copper.net_names[copper.net[first]]], "uuids": places[0]["uuids"]}))
    return findings


# -- track width ----------------------------------------------------------------------

def _track_width_findings(board: Board, rules: BoardRules, model: ProjectModel) -> list[Finding]:
    copper_layers = board.copper_layers()
    tracks = [t for t in board.tracks if t.layer in copper_layers and t.width > 0]
    if not tracks:
        return []
    fab = model.profile.minimum("track_width_mm") or 0.0
    custom = rules.rules_with("track_width")
    groups: dict[tuple, list] = defaultdict(list)
    for track in tracks:
        minimum, source = rules.min_track_width, "the board minimum"
        for rule in custom:
            rule_min = rule.constraints["track_width"][0]
            if rule_min is None or not _track_rule_applies(rule, track, rules, board):
                continue
            minimum, source = max(rule_min, rules.min_track_width), f"rule '{rule.name}'"
        if track.width < minimum - DRC_EPSILON:
            groups[("error", track.net, track.width, minimum, source)].append(track)
        elif track.width < fab - DRC_EPSILON:
            groups[(model.fab_severity, track.net, track.width, fab, f"{model.profile.name}'s minimum")].append(track)
    findings = []
    for (severity, net, width, minimum, source), group in sorted(groups.items(), key=lambda kv: kv[0][1:3]):
        first = group[0]
        kicad = severity == "error"   # the board's own minimum: KiCad's track_width
        findings.append(Finding("board.track-width",
                                f"{len(group)} track segment(s) of net {net or '(no net)'} are {width:g} mm wide, "
                                f"below {source} of {minimum:.4g} mm",
                                identity=(board.file, net, f"{width:g}"), severity=severity, path=board.file,
                                line=first.line, column=first.column, kicad_type="track_width" if kicad else "",
                                locations=[{"x": t.points[0][0], "y": t.points[0][1], "layer": t.layer,
                                            "uuids": [t.uuid] if t.uuid else []} for t in group]
                                if len(group) > 1 else [],
                                extra={"x": first.points[0][0], "y": first.points[0][1], "layer": first.layer,
                                       "actual_mm": width, "required_mm": round(minimum, 4), "count": len(group),
                                       "uuids": [first.uuid] if first.uuid else [],
                                       "nets": [net]}))
    return findings


def _track_rule_applies(rule, track, rules: BoardRules, board: Board) -> bool:
    order = board.copper_order()
    if rule.layer == "outer" and track.layer not in (order[:1] + order[-1:]):
        return False
    if rule.layer == "inner" and track.layer in (order[:1] + order[-1:]):
        return False
    if rule.layer not in (None, "outer", "inner") and rule.layer != track.layer:
        return False
    if rule.condition is None:
        return True
    items = TrackItems(track, rules, board)
    return bool(np.asarray(rule.condition.evaluate(items, items)).any())


# -- holes ----------------------------------------------------------------------------

def _hole_findings(board: Board, holes: Holes, rules: BoardRules) -> list[Finding]:
    minimum = rules.min_hole_to_hole
    if len(holes.core) < 2 or minimum <= 0:
        return []
    tree = shapely.STRtree(holes.core)
    first, second = tree.query(grown_boxes(holes.core, 2 * holes.radius + minimum))
    # A pair is found from the larger hole's side at least: order it and keep it once.
    first, second = np.minimum(first, second), np.maximum(first, second)
    pairs = np.unique(np.stack([first, second], axis=1), axis=0) if len(first) else np.empty((0, 2), dtype=np.int64)
    first, second = pairs[:, 0], pairs[:, 1]
    keep = first < second
    # KiCad 9's DRC_TEST_PROVIDER_HOLE_TO_HOLE: round drilled holes only (slots are milled after
    # drilling; microvias are lasered), holes of one footprint too (kicad-cli 9.0.8 reports the
    # rows of 0.1 mm-apart NPTH holes of lily58's J8); two holes at one place are holes_co_located,
    # another type.
    drilled = np.array([shapely.get_type_id(core) == 0 and not (not isinstance(owner, tuple)
                                                               and owner.via_type == "micro")
                        for core, owner in zip(holes.core, holes.owner)], dtype=bool)
    keep &= drilled[first] & drilled[second]
    first, second = first[keep], second[keep]
    if not len(first):
        return []
    centres = np.hypot(*(holes.anchor[first] - holes.anchor[second]).T)
    gap = np.maximum(0.0, centres - holes.radius[first] - holes.radius[second])
    bad = np.flatnonzero((centres >= DRC_EPSILON) & (gap < minimum - DRC_EPSILON - FLOAT_NOISE))
    findings = []
    for k in bad.tolist():
        i, j = int(first[k]), int(second[k])
        x = round(float((holes.anchor[i][0] + holes.anchor[j][0]) / 2), 4)
        y = round(float((holes.anchor[i][1] + holes.anchor[j][1]) / 2), 4)
        owner = holes.owner[i]
        node = owner[1] if isinstance(owner, tuple) else owner
        findings.append(Finding("board.hole-clearance",
                                f"{_hole_label(holes.owner[i])} and {_hole_label(holes.owner[j])} are "
                                f"{max(0.0, float(gap[k])):.4g} mm apart (hole edge to hole edge); the board's "
                                f"hole-to-hole minimum is {minimum:.4g} mm",
                                identity=(board.file, *sorted((_hole_identity(holes.owner[i]),
                                                               _hole_identity(holes.owner[j])))),
                                path=board.file, line=node.line, column=node.column, kicad_type="hole_to_hole",
                                extra={"uuids": [u for u in (_hole_uuid(holes.owner[i]), _hole_uuid(holes.owner[j])) if u],
                                       "x": x, "y": y, "layer": "", "actual_mm": round(max(0.0, float(gap[k])), 4),
                                       "required_mm": minimum,
                                       "nets": sorted({_hole_net(holes.owner[i]), _hole_net(holes.owner[j])})}))
    return findings


def _hole_net(owner) -> str:
    return owner[1].net if isinstance(owner, tuple) else owner.net


def _hole_uuid(owner) -> str:
    return owner[1].uuid if isinstance(owner, tuple) else owner.uuid


def _hole_label(owner) -> str:
    if isinstance(owner, tuple):
        footprint, pad = owner
        what = f"pad {pad.number}" if pad.number else "an unnumbered pad"
        return f"the hole of {what} of {footprint.reference or footprint.lib_id}"
    return f"the hole of a via of net {owner.net or '(no net)'}"


def _hole_identity(owner) -> str:
    if isinstance(owner, tuple):
        footprint, pad = owner
        # Unnumbered pads (mounting holes) are told apart by their own uuid.
        return f"{footprint.uuid or footprint.reference}/pad {pad.number}{'/' + pad.uuid if pad.uuid and not pad.number else ''}"
    return owner.uuid or f"via@{owner.x:g},{owner.y:g}"

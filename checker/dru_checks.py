"""Custom rules (``.kicad_dru``) that hold single items to a size: ``hole_size``,
``via_diameter`` and ``annular_width``, as KiCad 9's DRC applies them.

For each via and pad, KiCad takes the *last* rule of the file whose condition matches the item
and that carries the constraint (DRC_ENGINE::EvalRules; a single item is tested as A, with no
B), and reports the item when its value is below the rule's ``min`` or above its ``max``
(DRC_TEST_PROVIDER_HOLE_SIZE: a pad's smaller hole dimension against the min, its larger
against the max; DRC_TEST_PROVIDER_VIA_DIAMETER; DRC_TEST_PROVIDER_ANNULAR_WIDTH: vias and
plated through-hole pads). A rule's ``(severity warning)`` makes its findings warnings,
``(severity ignore)`` drops them. An item no custom rule matches stays with the board
setup's minimums (checker/rules/board_rules.py); an item a rule governs is held to the rule
alone, as KiCad does (``governed``: board_rules leaves it out).
"""
from __future__ import annotations

import numpy as np

from .board import Board
from .dru_expr import ConditionError
from .dru_items import OwnerItems
from .findings import Finding
from .model import ProjectModel

EPSILON = 1e-6
# constraint -> (rule id, KiCad type, what)
_CONSTRAINTS = {
    "hole_size": ("board.hole-size", "drill_out_of_range", "hole"),
    "via_diameter": ("board.via-diameter", "via_diameter", "via diameter"),
    "annular_width": ("board.annular-ring", "annular_width", "annular width"),
}


def _owners(board: Board) -> list:
    return list(board.vias) + [(footprint, pad) for footprint in board.footprints for pad in footprint.pads
                               if pad.kind in ("thru_hole", "np_thru_hole") and pad.drill_size]


def _governing(board: Board, model: ProjectModel, owners: list, kind: str) -> list:
    """Per owner, the last rule of the file with this constraint whose condition matches it (None)."""
    governing: list = [None] * len(owners)
    custom = [rule for rule in model.rules.custom if kind in rule.constraints]
    if not custom or not owners:
        return governing
    items = OwnerItems(owners, model.rules, board)
    for rule in custom:
        if rule.condition is None:
            applies = np.ones(len(owners), dtype=bool)
        else:
            try:
                applies = np.asarray(rule.condition.evaluate(items, items), dtype=bool)
            except ConditionError:
                continue            # listed as unsupported when the rules were read
            if applies.ndim == 0:
                applies = np.full(len(owners), bool(applies))
        for index in np.flatnonzero(applies):
            governing[index] = rule            # the last matching rule of the file governs
    return governing


def governed(board: Board, model: ProjectModel, kind: str) -> set[int]:
    """The vias and pads (by id of the Via or the Pad) a custom rule of this constraint governs:
    KiCad holds them to that rule, not to the board setup's minimum (kicad-cli 9.0.8 on kxusbc2:
    vias of 0.075 mm annular width under a 0.075 mm rule and a 0.2 mm board minimum are not
    reported)."""
    owners = _owners(board)
    return {id(owner[1] if isinstance(owner, tuple) else owner)
            for owner, rule in zip(owners, _governing(board, model, owners, kind)) if rule is not None}


def custom_item_findings(board: Board, model: ProjectModel) -> list[Finding]:
    rules = model.rules
    custom = [rule for rule in rules.custom if any(kind in rule.constraints for kind in _CONSTRAINTS)]
    if not custom:
        return []
    owners = _owners(board)
    if not owners:
        return []
    findings: list[Finding] = []
    for kind, (rule_id, kicad_type, what) in _CONSTRAINTS.items():
        governing = _governing(board, model, owners, kind)
        for index, rule in enumerate(governing):
            if rule is None or rule.severity == "ignore":
                continue
            finding = _check(board, model, owners[index], kind, rule, rule_id, kicad_type, what)
            if finding is not None:
                findings.append(finding)
    return findings


def _check(board: Board, model: ProjectModel, owner, kind: str, rule, rule_id: str, kicad_type: str,
           what: str) -> Finding | None:
    low, _opt, high = rule.constraints[kind]
    pad = owner[1] if isinstance(owner, tuple) else None
    via = owner if pad is None else None
    rules = model.rules
    if kind == "hole_size":
        if via is not None:
            if via.drill is None or via.via_type == "micro":
                return None
            smaller = larger = via.drill
            floor = rules.min_through_hole
        else:
            smaller, larger = min(pad.drill_size), max(pad.drill_size)
            floor = 0.0
    elif kind == "via_diameter":
        if via is None or via.diameter is None or via.via_type == "micro":
            return None
        smaller = larger = via.diameter
        floor = rules.min_via_diameter
    else:
        if via is not None:
            if via.diameter is None or via.drill is None or via.via_type == "micro":
                return None
            smaller = larger = (via.diameter - via.drill) / 2
        else:
            if pad.kind != "thru_hole" or min(pad.drill_size) <= 0:
                return None
            from .rules.board_rules import _annular_width

            footprint = owner[0]
            # Unnumbered pads share the number "" (as kicad-cli 9.0.8 measures them; board_rules._annular_width).
            same = [other for other in footprint.pads if other is not pad and other.number == pad.number]
            width = _annular_width(pad, same, low or 0.0)
            if width is None:
                return None
            smaller = larger = width
        floor = rules.min_via_annular
    del floor                       # the rule replaces the board setup's minimum (see governed)
    if low is not None and smaller < low - EPSILON:
        value, limit, relation = smaller, low, "below"
    elif high is not None and larger > high + EPSILON:
        value, limit, relation = larger, high, "above"
    else:
        return None
    if via is not None:
        name, x, y, uuid, located = "via", via.x, via.y, via.uuid, via
    else:
        footprint = owner[0]
        where = footprint.reference or footprint.lib_id
        name = f"pad {pad.number} of {where}" if pad.number else f"a pad of {where}"
        x, y, uuid, located = pad.x, pad.y, pad.uuid, pad
    severity = "medium" if rule.severity == "warning" else "error"
    location = getattr(located, "location", None)
    return Finding(
        rule_id, f"{name}: {what} {value:.4g} mm, {relation} rule '{rule.name}''s "
        f"{'minimum' if relation == 'below' else 'maximum'} of {limit:.4g} mm",
        identity=(board.file, "custom", kind, rule.name, uuid or f"{x:.4f},{y:.4f}"), severity=severity,
        path=board.file, line=location.line if location else None, column=location.column if location else None,
        kicad_type=kicad_type,
        extra={"x": x, "y": y, "layer": "", "actual_mm": round(value, 4), "required_mm": round(limit, 4),
               "rule": f"rule '{rule.name}'", "uuids": [uuid] if uuid else [],
               **({"rule_severity": rule.severity} if rule.severity in ("error", "warning") else {})})

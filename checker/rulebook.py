"""The board's own design rules, as KiCad's DRC applies them.

Where they live: KiCad 6+ keep the board setup minimums and the net classes in
the ``.kicad_pro`` (``board.design_settings.rules``, ``net_settings``), custom
rules in the ``.kicad_dru``; KiCad 5 boards keep a few minimums in the board
file's ``(setup ...)``. What KiCad does with them, and so what we do:

* Copper clearance between two items of different nets: the larger of the two
  items' net class clearances; between the two halves of a differential pair
  (``X+``/``X-``, ``X_P``/``X_N``) the class's diff-pair gap when it is narrower
  than the class clearance (KiCad's implicit "(diff pair)" rule); when either item carries a local override (pad,
  footprint or zone clearance), the larger override replaces the net classes.
  Never less than the board's minimum clearance. A matching custom rule with a
  clearance constraint (the last matching one in the file, as KiCad reads
  them) replaces both, again never below the board minimum.
* Track width: the board minimum, or a matching custom rule's minimum. A net
  class's track width is only KiCad's *preferred* width for new tracks (its
  "opt" value), so a neck-down below it is not a violation.
* Custom rule conditions are compiled as KiCad 9 compiles them (checker/dru_expr.py:
  properties such as ``A.Pad_Type``, ``A.Hole_Size_X``, functions such as
  ``A.isPlated()``, ``A.intersectsArea('x')``, units, comparisons, arithmetic), plus the
  rule's ``(layer outer|inner|NAME)`` and ``(severity ...)``. A rule using something the
  checker cannot evaluate (``A.fromTo()``, groups ...) is skipped and listed in
  ``unsupported`` with the reason (a finding says so), never guessed.
"""
from __future__ import annotations

import fnmatch
from dataclasses import dataclass, field

from .dru_expr import Condition, ConditionError, parse_condition, parse_value
from .sexpr import Node

# KiCad's own defaults for the board setup minimums and the Default net class,
# over KiCad 5-9 (they moved between releases). A rule still at a default was
# never chosen by the designer, so it is not reported as looser than a fab.
KICAD_DEFAULTS: dict[str, set[float]] = {
    "min_clearance": {0.0},
    "min_track_width": {0.0, 0.2},
    "min_via_diameter": {0.4, 0.5},
    "min_through_hole_diameter": {0.3},
    "min_via_annular_width": {0.05, 0.1},
    "min_copper_edge_clearance": {0.0, 0.01, 0.5},
    "min_hole_to_hole": {0.25},
    "min_hole_clearance": {0.0, 0.25},
    "netclass.clearance": {0.2},
    "netclass.track_width": {0.2, 0.25},
    "netclass.via_diameter": {0.6, 0.8},
    "netclass.via_drill": {0.3, 0.4},
}
DEFAULT_NETCLASS = "Default"
_DEFAULT_HOLE_TO_HOLE = 0.25
# KiCad 6-9's built-in copper-to-edge clearance (``DEFAULT_COPPEREDGECLEARANCE`` in KiCad's
# include/board_design_settings.h): a project that never set
# ``rules.min_copper_edge_clearance`` is held to it. kicad-cli 9.0.8 reports "board setup
# constraints edge clearance 0.5000 mm" on such a board (kicad_bot_examples/drc-violation).
DEFAULT_COPPER_EDGE_CLEARANCE = 0.5


def is_kicad_default(key: str, value: float) -> bool:
    return any(abs(value - default) < 1e-6 for default in KICAD_DEFAULTS.get(key, ()))


@dataclass(frozen=True)
class NetClass:
    name: str
    clearance: float = 0.2
    track_width: float = 0.25
    via_diameter: float = 0.8
    via_drill: float = 0.4
    diff_pair_gap: float | None = None


@dataclass
class CustomRule:
    name: str
    layer: str | None                   # None (any), "outer", "inner" or a layer name
    condition: Condition | None       # None: always
    constraints: dict[str, tuple[float | None, float | None, float | None]]   # kind -> (min, opt, max)
    line: int
    column: int
    severity: str | None = None         # the rule's (severity error|warning|ignore|exclusion), None: KiCad's


@dataclass
class BoardRules:
    """The minimums and classes the board's own DRC holds it to (millimetres)."""

    min_clearance: float = 0.0
    min_track_width: float = 0.0
    min_hole_to_hole: float = _DEFAULT_HOLE_TO_HOLE
    min_copper_edge_clearance: float = DEFAULT_COPPER_EDGE_CLEARANCE
    # KiCad 9's own values where the project sets none (a new project's .kicad_pro, and what
    # kicad-cli 9.0.8 reports on a board without one: "board setup constraints min diameter
    # 0.5000 mm", "min hole 0.3000 mm").
    min_via_diameter: float = 0.5
    min_through_hole: float = 0.3
    min_via_annular: float = 0.1
    netclasses: dict[str, NetClass] = field(default_factory=lambda: {DEFAULT_NETCLASS: NetClass(DEFAULT_NETCLASS)})
    assignments: dict[str, str] = field(default_factory=dict)        # net name -> class name
    patterns: list[tuple[str, str]] = field(default_factory=list)     # KiCad 7+: (wildcard, class)
    custom: list[CustomRule] = field(default_factory=list)
    unsupported: list[tuple[str, str, int]] = field(default_factory=list)   # rule name, reason, line
    source: str = "KiCad defaults"       # where the minimums came from, for messages

    def netclass_name(self, net: str) -> str:
        name = self.assignments.get(net)
        if name is None:
            for pattern, class_name in self.patterns:
                if fnmatch.fnmatchcase(net, pattern):
                    name = class_name
                    break
        return name if name in self.netclasses else DEFAULT_NETCLASS

    def netclass(self, net: str) -> NetClass:
        return self.netclasses.get(self.netclass_name(net)) or NetClass(DEFAULT_NETCLASS)

    def rules_with(self, kind: str) -> list[CustomRule]:
        return [rule for rule in self.custom if kind in rule.constraints]


def coupled_gap(netclass: NetClass) -> float | None:
    """The clearance between the two halves of a differential pair of this class, when its
    diff-pair gap is narrower than its clearance. KiCad 9: DRC_ENGINE::loadImplicitRules makes
    the rule "netclass '<name>' (diff pair)", condition ``A.NetClass == '<name>' &&
    AB.isCoupledDiffPair()``, clearance min = the gap ("a narrower diffpair gap overrides the
    netclass min clearance"); it is an item-specific rule, added after the net class clearance
    rules, so it wins over them."""
    gap = netclass.diff_pair_gap
    return gap if gap and gap < netclass.clearance else None


def diff_pair_complement(net: str) -> str | None:
    """The other half's net name, as KiCad 9's DRC_ENGINE::MatchDpSuffix finds it: past trailing
    digits and underscores, a final '+'/'-' or 'P'/'N' (upper case) swapped; else None.
    ``USB_D+`` -> ``USB_D-``, ``/LVDS_P1`` -> ``/LVDS_N1``, ``CLK_P_0`` -> ``CLK_N_0``."""
    swap = {"+": "-", "-": "+", "P": "N", "N": "P"}
    for count, ch in enumerate(reversed(net), start=1):
        if ch.isdigit() and ch.isascii() or ch == "_":
            continue
        if ch in swap:
            return net[:len(net) - count] + swap[ch] + net[len(net) - count + 1:]
        return None
    return None


def _number(value) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


# KiCad 10's minimum track width where the project sets none: kicad-cli 10.0.7 reports "board setup
# constraints min width 0.2000 mm" on a board without a project file, kicad-cli 9.0.8 nothing (KiCad 9's
# default is 0); seen on the corpus's esp32s3-nanos3-carrier (199 tracks of 0.154 mm) and a one-track board.
KICAD10_MIN_TRACK_WIDTH = 0.2


def read_rules(pro: dict, dru: Node | None, board_setup: dict[str, float] | None = None,
               kicad_major: int | None = None) -> BoardRules:
    """The board's rules; ``kicad_major``, the KiCad that saved the board, picks the defaults."""
    rules = BoardRules()
    if (kicad_major or 0) >= 10:
        rules.min_track_width = KICAD10_MIN_TRACK_WIDTH
    settings = ((pro.get("board") or {}).get("design_settings") or {}) if isinstance(pro.get("board"), dict) else {}
    values = settings.get("rules") if isinstance(settings, dict) else None
    if isinstance(values, dict):
        rules.source = "board setup"
        for key, attribute in (("min_clearance", "min_clearance"), ("min_track_width", "min_track_width"),
                               ("min_hole_to_hole", "min_hole_to_hole"),
                               ("min_copper_edge_clearance", "min_copper_edge_clearance"),
                               ("min_via_diameter", "min_via_diameter"),
                               ("min_through_hole_diameter", "min_through_hole"),
                               ("min_via_annular_width", "min_via_annular")):
            number = _number(values.get(key))
            if number is not None and number >= 0:
                setattr(rules, attribute, number)
    elif board_setup:
        rules.source = "board setup"
        for key, attribute in (("clearance", "min_clearance"), ("trace_min", "min_track_width"),
                               ("hole_to_hole_min", "min_hole_to_hole"),
                               ("edge_clearance", "min_copper_edge_clearance"),
                               ("via_min_size", "min_via_diameter"), ("via_min_drill", "min_through_hole"),
                               ("via_min_annulus", "min_via_annular")):
            if key in board_setup:
                setattr(rules, attribute, board_setup[key])
    _read_netclasses(pro, rules)
    if dru is not None:
        _read_custom(dru, rules)
    return rules


def _read_netclasses(pro: dict, rules: BoardRules) -> None:
    net_settings = pro.get("net_settings") if isinstance(pro.get("net_settings"), dict) else {}
    for entry in (net_settings or {}).get("classes") or []:
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
            continue
        default = NetClass(entry["name"])
        netclass = NetClass(
            name=entry["name"],
            clearance=_number(entry.get("clearance")) if _number(entry.get("clearance")) is not None else default.clearance,
            track_width=_number(entry.get("track_width")) or default.track_width,
            via_diameter=_number(entry.get("via_diameter")) or default.via_diameter,
            via_drill=_number(entry.get("via_drill")) or default.via_drill,
            diff_pair_gap=_number(entry.get("diff_pair_gap")) or None)
        rules.netclasses[netclass.name] = netclass
        for net in entry.get("nets") or []:   # KiCad 6
            if isinstance(net, str):
                rules.assignments[net] = netclass.name
    assignments = (net_settings or {}).get("netclass_assignments")   # KiCad 7+
    if isinstance(assignments, dict):
        for net, name in assignments.items():
            if isinstance(name, str):
                rules.assignments.setdefault(net, name)
            elif isinstance(name, list) and name and isinstance(name[0], str):
                rules.assignments.setdefault(net, name[0])
    for pattern in (net_settings or {}).get("netclass_patterns") or []:
        if isinstance(pattern, dict) and isinstance(pattern.get("pattern"), str) and isinstance(pattern.get("netclass"), str):
            rules.patterns.append((pattern["pattern"], pattern["netclass"]))


def parse_length(text: str | None) -> float | None:
    """'0.1mm', '4mil', '0.004in', a bare number (mm) or arithmetic of them ('1.5mm + 2mm') -> millimetres."""
    return parse_value(text) if text else None


def _read_custom(dru: Node, rules: BoardRules) -> None:
    # KiCad 9 reads a rule file whole or not at all: DRC_RULES_PARSER throws on a second (layer ...)
    # in one rule ("has already been defined") and DRC_ENGINE keeps only its implicit rules then
    # (kicad-cli 9.0.8 on moteus-controller's file: none of its rules applies).
    for rule in dru.nodes("rule"):
        if len(list(rule.nodes("layer"))) > 1:
            rules.unsupported.append((rule.atom(0) or "?", "a second (layer ...) in one rule: KiCad 9 refuses "
                                      "the whole rule file and applies none of its rules", rule.line))
            return
    for rule in dru.nodes("rule"):
        name = rule.atom(0) or "?"
        constraints: dict[str, tuple[float | None, float | None, float | None]] = {}
        for constraint in rule.nodes("constraint"):
            kind = constraint.atom(0)
            if kind:
                constraints[kind] = (parse_length(constraint.value("min")), parse_length(constraint.value("opt")),
                                     parse_length(constraint.value("max")))
        text = rule.value("condition")
        condition = None
        if text is not None and text.strip():
            try:
                condition = parse_condition(text)
            except ConditionError as exc:
                rules.unsupported.append((name, str(exc), rule.line))
                continue
        severity = rule.value("severity")
        rules.custom.append(CustomRule(name=name, layer=rule.value("layer"), condition=condition,
                                       constraints=constraints, line=rule.line, column=rule.column,
                                       severity=severity.lower() if isinstance(severity, str) else None))


# -- custom rule conditions: the language is checker/dru_expr.py ---------------------------

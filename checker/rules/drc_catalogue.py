"""The checker's own DRC rules beyond the board rules of catalogue.py, each mirroring one
KiCad 9 DRC type at KiCad 9's default severity for it (error -> error, warning -> medium).
The project's ``rule_severities`` and ``drc_exclusions`` then apply as in KiCad."""
from __future__ import annotations

from .catalogue import Rule


def _drc(rule_id: str, kicad_type: str, severity: str, title: str, checks: str, fix: str) -> Rule:
    return Rule(rule_id, severity, title, checks, f"DRC {kicad_type}", fix, kicad_type=kicad_type)


DRC_RULES = [
    _drc("board.copper-to-hole", "hole_clearance", "error", "Copper too close to a drilled hole",
         "Copper (track, arc, via, pad, zone fill as last saved) closer to a drilled hole (via, plated or "
         "non-plated pad hole) whose layers it shares than the board setup's minimum hole clearance (KiCad "
         "9's 0.25 mm when the project sets none). Copper of the hole's own net is not tested unless either "
         "has no net; nor a hole against its own pad or the pads of its footprint. More than three places "
         "between the same nets become one finding listing every place.",
         "Move the copper away from the hole, or correct the rule."),
]

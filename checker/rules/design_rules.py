"""Project design rules against the fab profile.

Design rules live in the .kicad_pro (board.design_settings.rules and the net
classes) and the .kicad_dru custom rules, not in the .kicad_pcb: a board file
check alone would miss that KiCad's DRC has been told to accept 0.1 mm tracks.
"""
from __future__ import annotations

import re

from ..findings import Finding
from ..model import ProjectModel

# .kicad_pro key -> (profile key, what people call it)
_PRO_RULES = {
    "min_track_width": ("track_width_mm", "minimum track width"),
    "min_clearance": ("clearance_mm", "minimum clearance"),
    "min_through_hole_diameter": ("via_drill_mm", "minimum through-hole drill"),
    "min_via_diameter": ("via_diameter_mm", "minimum via diameter"),
    "min_via_annular_width": ("annular_ring_mm", "minimum via annular width"),
    "min_copper_edge_clearance": ("copper_edge_clearance_mm", "copper to edge clearance"),
}
_NETCLASS = {"track_width": "track_width_mm", "clearance": "clearance_mm", "via_drill": "via_drill_mm",
             "via_diameter": "via_diameter_mm"}
_DRU_CONSTRAINTS = {"track_width": "track_width_mm", "clearance": "clearance_mm", "hole_size": "via_drill_mm",
                    "via_diameter": "via_diameter_mm", "annular_width": "annular_ring_mm",
                    "edge_clearance": "copper_edge_clearance_mm"}
_LENGTH = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:[eE][-+]?\d+)?)\s*(mm|mil|mils|in|um)?\s*$")
_UNIT = {"mm": 1.0, None: 1.0, "mil": 0.0254, "mils": 0.0254, "in": 25.4, "um": 0.001}
EPSILON = 1e-6


def parse_length(text: str | None) -> float | None:
    """'0.1mm', '4mil', '0.004in' or a bare number (mm) -> millimetres."""
    match = _LENGTH.match(text or "")
    if not match:
        return None
    return float(match.group(1)) * _UNIT[match.group(2)]


def check(model: ProjectModel) -> list[Finding]:
    profile = model.profile
    findings: list[Finding] = []

    def below(value, key: str) -> bool:
        return isinstance(value, (int, float)) and not isinstance(value, bool) and 0 < value < profile.minimum(key) - EPSILON

    pro = model.pro if isinstance(model.pro, dict) else {}
    settings = (pro.get("board") or {}).get("design_settings") or {} if isinstance(pro.get("board"), dict) else {}
    rules = settings.get("rules") if isinstance(settings, dict) else None
    if isinstance(rules, dict):
        for key, (profile_key, label) in _PRO_RULES.items():
            value = rules.get(key)
            if below(value, profile_key):
                findings.append(Finding("rules.below-fab",
                                        f"project {label} is {value:.4g} mm, below {profile.name}'s "
                                        f"{profile.minimum(profile_key):g} mm", identity=(model.pro_path or "", key),
                                        path=model.pro_path, line=None))
    net_settings = pro.get("net_settings") if isinstance(pro.get("net_settings"), dict) else {}
    for netclass in (net_settings or {}).get("classes") or []:
        if not isinstance(netclass, dict):
            continue
        for key, profile_key in _NETCLASS.items():
            value = netclass.get(key)
            if below(value, profile_key):
                name = str(netclass.get("name", "?"))
                findings.append(Finding("rules.below-fab",
                                        f"net class {name} {key.replace('_', ' ')} is {value:.4g} mm, below "
                                        f"{profile.name}'s {profile.minimum(profile_key):g} mm",
                                        identity=(model.pro_path or "", "netclass", name, key), path=model.pro_path))
    if model.dru is not None:
        for rule in model.dru.nodes("rule"):
            name = rule.atom(0) or "?"
            for constraint in rule.nodes("constraint"):
                kind = constraint.atom(0)
                profile_key = _DRU_CONSTRAINTS.get(kind or "")
                minimum = parse_length(constraint.value("min"))
                if profile_key and minimum is not None and below(minimum, profile_key):
                    findings.append(Finding("rules.below-fab",
                                            f"custom rule {name!r} allows {kind} down to {minimum:.4g} mm, below "
                                            f"{profile.name}'s {profile.minimum(profile_key):g} mm",
                                            identity=(model.dru_path or "", name, kind or ""), path=model.dru_path,
                                            line=constraint.line, column=constraint.column))
    return findings

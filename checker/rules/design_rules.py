"""The board's own design rules against the fab profile.

Design rules live in the .kicad_pro (board.design_settings.rules and the net
classes) and the .kicad_dru custom rules, not in the .kicad_pcb: a board file
check alone would miss that KiCad's DRC has been told to accept 0.1 mm tracks.
A rule looser than what the fab can make is one ``rules.below-fab`` finding
naming both numbers (the items themselves are checked against the stricter of
the two by the board and copper rules). A rule still at KiCad's own default
value was never chosen by the designer and is not reported; neither is a
number the fab does not publish.
"""
from __future__ import annotations

from ..findings import Finding
from ..model import ProjectModel
from ..rulebook import is_kicad_default, parse_length

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
EPSILON = 1e-6


def check(model: ProjectModel) -> list[Finding]:
    profile = model.profile
    findings: list[Finding] = []

    def below(value, key: str) -> float | None:
        """The fab's minimum when ``value`` is below it (and the fab publishes one)."""
        fab = profile.minimum(key)
        if fab is None or isinstance(value, bool) or not isinstance(value, (int, float)):
            return None
        return fab if 0 < value < fab - EPSILON else None

    pro = model.pro if isinstance(model.pro, dict) else {}
    settings = (pro.get("board") or {}).get("design_settings") or {} if isinstance(pro.get("board"), dict) else {}
    rules = settings.get("rules") if isinstance(settings, dict) else None
    if isinstance(rules, dict):
        for key, (profile_key, label) in _PRO_RULES.items():
            value = rules.get(key)
            fab = below(value, profile_key)
            if fab is not None and not is_kicad_default(key, value):
                findings.append(Finding("rules.below-fab",
                                        f"board setup {label} is {value:.4g} mm, below {profile.name}'s "
                                        f"{fab:g} mm", identity=(model.pro_path or "", key),
                                        path=model.pro_path, line=None))
    net_settings = pro.get("net_settings") if isinstance(pro.get("net_settings"), dict) else {}
    for netclass in (net_settings or {}).get("classes") or []:
        if not isinstance(netclass, dict):
            continue
        name = str(netclass.get("name", "?"))
        for key, profile_key in _NETCLASS.items():
            value = netclass.get(key)
            fab = below(value, profile_key)
            if fab is not None and not (name == "Default" and is_kicad_default(f"netclass.{key}", value)):
                findings.append(Finding("rules.below-fab",
                                        f"net class {name} {key.replace('_', ' ')} is {value:.4g} mm, below "
                                        f"{profile.name}'s {fab:g} mm",
                                        identity=(model.pro_path or "", "netclass", name, key), path=model.pro_path))
    if model.dru is not None:
        for rule in model.dru.nodes("rule"):
            name = rule.atom(0) or "?"
            for constraint in rule.nodes("constraint"):
                kind = constraint.atom(0)
                profile_key = _DRU_CONSTRAINTS.get(kind or "")
                minimum = parse_length(constraint.value("min"))
                fab = below(minimum, profile_key) if profile_key else None
                if fab is not None:
                    findings.append(Finding("rules.below-fab",
                                            f"custom rule {name!r} allows {kind} down to {minimum:.4g} mm, below "
                                            f"{profile.name}'s {fab:g} mm",
                                            identity=(model.dru_path or "", name, kind or ""), path=model.dru_path,
                                            line=constraint.line, column=constraint.column))
    for name, reason, line in model.rules.unsupported:
        findings.append(Finding("rules.unsupported",
                                f"custom rule {name!r} was not applied: {reason}",
                                identity=(model.dru_path or "", name), path=model.dru_path, line=line))
    return findings

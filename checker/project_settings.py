"""The project's own ERC/DRC settings from its ``.kicad_pro``, applied as KiCad applies them.

KiCad keeps, per project:

* ``board.design_settings.rule_severities`` and ``erc.rule_severities``: each
  KiCad violation type (its "settings key", e.g. ``clearance``,
  ``pin_not_connected``) set to ``error``, ``warning`` or ``ignore``. A type the
  file does not name keeps KiCad 9's default (``DRC_DEFAULTS`` / ``ERC_DEFAULTS``).
* ``board.design_settings.drc_exclusions`` and ``erc.erc_exclusions``: markers the
  designer excluded, each the marker's serialised string (KiCad 9 writes
  ``[string, comment]`` pairs, older releases bare strings):

  - DRC (``PCB_MARKER::SerializeToString``), positions in nanometres:
    ``type|x|y|main|aux`` for most types;
    ``type|x|y|main|layer`` for ``copper_sliver``, ``generic_warning``, ``generic_error``;
    ``type|x|y|main|aux|layer`` for ``starved_thermal``;
    ``type|x|y|layer|marker_type|main|aux`` for ``unconnected_items`` since 9.0.4
    (``type|x|y|main|aux`` before).
  - ERC (``SCH_MARKER::SerializeToString``), positions in schematic units of 100 nm:
    ``type|x|y|main|aux|sheet_path|main_sheet_path|aux_sheet_path``; for
    ``generic_*`` and ``unresolved_variable`` on a field the aux slot holds the
    field's text instead of a uuid.
* ``erc.pin_map``: the 12x12 pin-type conflict matrix (0 ok, 1 warning, 2 error),
  in KiCad's ELECTRICAL_PINTYPE order (``PIN_TYPES``).

KiCad excludes a marker when its serialised string is in the set, so the same
items at the same place. Our markers are not always drawn where KiCad draws
them, so a finding matches an exclusion by its KiCad type and the KiCad items
it names (every non-nil uuid of the exclusion is among the finding's), and only
when the exclusion names no item, by type and place within
``POSITION_TOLERANCE_MM``.

What this module does with a finding that carries a ``kicad_type``
(``apply_project_settings``): ``ignore`` drops it, ``warning`` makes it
``medium``, ``error`` makes it ``error``; a matching exclusion sets
``excluded`` and the severity ``info`` (it is reported, and counts toward
neither verdict nor score, in the CLI and in the service alike).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

NIL_UUID = "00000000-0000-0000-0000-000000000000"
PCB_UNITS_PER_MM = 1_000_000        # pcbnew internal units: nanometres
SCH_UNITS_PER_MM = 10_000           # eeschema internal units: 100 nm
POSITION_TOLERANCE_MM = 0.01        # an exclusion without items matches a marker at its place
KICAD_SEVERITIES = ("error", "warning", "ignore")
SEVERITY_FOR = {"error": "error", "warning": "medium"}

# KiCad 9's defaults (BOARD_DESIGN_SETTINGS constructor): every DRC type is an error but these.
_DRC_NOT_ERROR = {
    "holes_co_located": "warning", "hole_to_hole": "warning",
    "missing_courtyard": "ignore", "pth_inside_courtyard": "ignore", "npth_inside_courtyard": "ignore",
    "track_dangling": "warning", "via_dangling": "warning",
    "copper_sliver": "warning", "isolated_copper": "warning", "padstack": "warning",
    "missing_footprint": "warning", "duplicate_footprints": "warning", "extra_footprint": "warning",
    "net_conflict": "warning", "footprint_symbol_mismatch": "warning",
    "footprint_filters_mismatch": "ignore", "footprint_symbol_field_mismatch": "warning",
    "silk_overlap": "warning", "silk_over_copper": "warning", "silk_edge_clearance": "warning",
    "text_height": "warning", "text_thickness": "warning",
    "footprint_type_mismatch": "ignore",
    "lib_footprint_issues": "warning", "lib_footprint_mismatch": "warning",
    "connection_width": "warning", "overlapping_pads": "warning",
    "mirrored_text_on_front_layer": "warning", "nonmirrored_text_on_back_layer": "warning",
    "generic_warning": "warning",
}
DRC_TYPES = (
    "unconnected_items", "shorting_items", "items_not_allowed", "text_on_edge_cuts", "clearance",
    "tracks_crossing", "copper_edge_clearance", "zones_intersect", "isolated_copper", "starved_thermal",
    "via_dangling", "track_dangling", "hole_clearance", "hole_to_hole", "holes_co_located",
    "connection_width", "track_width", "track_angle", "track_segment_length", "annular_width",
    "drill_out_of_range", "via_diameter", "padstack", "microvia_drill_out_of_range",
    "courtyards_overlap", "missing_courtyard", "malformed_courtyard", "pth_inside_courtyard",
    "npth_inside_courtyard", "item_on_disabled_layer", "invalid_outline", "missing_footprint",
    "duplicate_footprints", "net_conflict", "extra_footprint", "footprint_symbol_mismatch",
    "footprint_symbol_field_mismatch", "footprint_filters_mismatch", "lib_footprint_issues",
    "lib_footprint_mismatch", "unresolved_variable", "assertion_failure", "generic_warning",
    "generic_error", "copper_sliver", "solder_mask_bridge", "silk_overlap", "silk_over_copper",
    "silk_edge_clearance", "text_height", "text_thickness", "length_out_of_range",
    "skew_out_of_range", "too_many_vias", "diff_pair_gap_out_of_range",
    "diff_pair_uncoupled_length_too_long", "footprint", "footprint_type_mismatch",
    "through_hole_pad_without_hole", "zone_has_empty_net", "mirrored_text_on_front_layer",
    "nonmirrored_text_on_back_layer", "creepage", "overlapping_pads",
)
DRC_DEFAULTS = {key: _DRC_NOT_ERROR.get(key, "error") for key in DRC_TYPES}

# KiCad 9's ERC defaults (ERC_SETTINGS constructor, as a new KiCad 9 project writes them).
ERC_DEFAULTS = {
    "bus_definition_conflict": "error", "bus_entry_needed": "error", "bus_to_bus_conflict": "error",
    "bus_to_net_conflict": "error", "bus_label_syntax": "error", "conflicting_netclasses": "error",
    "different_unit_footprint": "error", "different_unit_net": "error", "duplicate_reference": "error",
    "duplicate_sheet_names": "error", "endpoint_off_grid": "warning", "extra_units": "error",
    "footprint_filter": "ignore", "footprint_link_issues": "warning", "four_way_junction": "ignore",
    "global_label_dangling": "warning", "ground_pin_not_ground": "warning",
    "hier_label_mismatch": "error", "isolated_pin_label": "warning", "label_dangling": "error",
    "label_multiple_wires": "warning",
    "lib_symbol_issues": "warning", "lib_symbol_mismatch": "warning", "missing_bidi_pin": "warning",
    "missing_input_pin": "warning", "missing_power_pin": "error", "missing_unit": "warning",
    "multiple_net_names": "warning", "net_not_bus_member": "warning", "no_connect_connected": "warning",
    "no_connect_dangling": "warning", "overlapping_rule_areas": "error", "pin_not_connected": "error",
    "pin_not_driven": "error", "pin_to_pin": "warning", "power_pin_not_driven": "error",
    "same_local_global_label": "warning", "similar_label_and_power": "warning",
    "similar_labels": "warning", "similar_power": "warning", "simulation_model_issue": "ignore",
    "single_global_label": "ignore", "stacked_pin_name": "warning", "unannotated": "error",
    "unconnected_wire_endpoint": "warning", "undefined_netclass": "error", "unit_value_mismatch": "error",
    "unresolved_variable": "error", "wire_dangling": "error", "generic_warning": "warning",
    "generic_error": "error",
}
ERC_TYPES = tuple(ERC_DEFAULTS)

# KiCad's ELECTRICAL_PINTYPE order, the rows and columns of erc.pin_map.
PIN_TYPES = ("input", "output", "bidirectional", "tri_state", "passive", "free", "unspecified",
             "power_in", "power_out", "open_collector", "open_emitter", "no_connect")
PIN_MAP_OK, PIN_MAP_WARNING, PIN_MAP_ERROR = 0, 1, 2
# KiCad 9's default pin map (ERC_SETTINGS::m_defaultPinMap), as a new project writes it.
DEFAULT_PIN_MAP = (
    (0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 2),
    (0, 2, 0, 1, 0, 0, 1, 0, 2, 2, 2, 2),
    (0, 0, 0, 0, 0, 0, 1, 0, 1, 0, 1, 2),
    (0, 1, 0, 0, 0, 0, 1, 1, 2, 1, 1, 2),
    (0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 2),
    (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2),
    (1, 1, 1, 1, 1, 0, 1, 1, 1, 1, 1, 2),
    (0, 0, 0, 1, 0, 0, 1, 0, 0, 0, 0, 2),
    (0, 2, 1, 2, 0, 0, 1, 0, 2, 2, 2, 2),
    (0, 2, 0, 1, 0, 0, 1, 0, 2, 0, 0, 2),
    (0, 2, 1, 1, 0, 0, 1, 0, 2, 0, 0, 2),
    (2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2),
)


@dataclass(frozen=True)
class Exclusion:
    """One excluded marker of the project file."""

    domain: str                    # "drc" or "erc"
    kicad_type: str
    x: float | None                # mm
    y: float | None
    uuids: frozenset[str]          # the KiCad items it names (nil uuids left out)
    layer: str | None = None
    comment: str = ""
    text: str = ""                 # the serialised string, as in the file


@dataclass
class ProjectSettings:
    drc_severities: dict[str, str] = field(default_factory=dict)   # only what the file names
    erc_severities: dict[str, str] = field(default_factory=dict)
    drc_exclusions: list[Exclusion] = field(default_factory=list)
    erc_exclusions: list[Exclusion] = field(default_factory=list)
    pin_map: tuple[tuple[int, ...], ...] = DEFAULT_PIN_MAP

    def severity(self, domain: str, kicad_type: str) -> str:
        """'error', 'warning' or 'ignore': the project's setting, else KiCad 9's default, else error."""
        own = self.drc_severities if domain == "drc" else self.erc_severities
        defaults = DRC_DEFAULTS if domain == "drc" else ERC_DEFAULTS
        return own.get(kicad_type) or defaults.get(kicad_type, "error")

    def pin_conflict(self, first: str, second: str) -> int:
        """0 ok, 1 warning, 2 error for two pin types (PIN_TYPES names) on one net."""
        try:
            return self.pin_map[PIN_TYPES.index(first)][PIN_TYPES.index(second)]
        except ValueError:
            return PIN_MAP_OK

    def exclusion_for(self, domain: str, kicad_type: str, uuids, places) -> Exclusion | None:
        """The exclusion that covers a finding of this type naming ``uuids`` at ``places`` ((x, y) in mm)."""
        named = {u for u in uuids if u and u != NIL_UUID}
        for exclusion in self.drc_exclusions if domain == "drc" else self.erc_exclusions:
            if exclusion.kicad_type != kicad_type:
                continue
            if exclusion.uuids:
                if exclusion.uuids <= named:
                    return exclusion
            elif exclusion.x is not None and any(
                    math.hypot(x - exclusion.x, y - exclusion.y) <= POSITION_TOLERANCE_MM for x, y in places):
                return exclusion
        return None


def _dict(value) -> dict:
    return value if isinstance(value, dict) else {}


def read_project_settings(pro: dict | None) -> ProjectSettings:
    """The settings of a parsed ``.kicad_pro``; anything malformed is left at KiCad's default."""
    pro = _dict(pro)
    board = _dict(_dict(pro.get("board")).get("design_settings"))
    erc = _dict(pro.get("erc"))
    settings = ProjectSettings(drc_severities=_severities(board.get("rule_severities")),
                               erc_severities=_severities(erc.get("rule_severities")))
    # KiCad 8 named hole-to-hole 'hole_near_hole'; KiCad 9 reads it first, then 'hole_to_hole'.
    legacy = _severities(_dict(board.get("rule_severities")))
    if "hole_near_hole" in legacy and "hole_to_hole" not in legacy:
        settings.drc_severities["hole_to_hole"] = legacy["hole_near_hole"]
    settings.drc_exclusions = [e for e in (parse_exclusion("drc", entry) for entry in _list(board.get("drc_exclusions")))
                               if e is not None]
    settings.erc_exclusions = [e for e in (parse_exclusion("erc", entry) for entry in _list(erc.get("erc_exclusions")))
                               if e is not None]
    settings.pin_map = _pin_map(erc.get("pin_map"))
    return settings


def _list(value) -> list:
    return value if isinstance(value, list) else []


def _severities(value) -> dict[str, str]:
    return {key: level for key, level in _dict(value).items()
            if isinstance(key, str) and isinstance(level, str) and level in KICAD_SEVERITIES}


def _pin_map(value) -> tuple[tuple[int, ...], ...]:
    """The project's pin map as KiCad 9 reads it (ERC_SETTINGS, the "pin_map" parameter): a
    12x12 array or nothing; cell by cell, an integer 0-3 replaces the default (3, UNCONNECTED,
    rates as an error), anything else keeps it; a malformed row stops the reading there."""
    size = len(PIN_TYPES)
    if not isinstance(value, list) or len(value) != size:
        return DEFAULT_PIN_MAP
    rows = [list(row) for row in DEFAULT_PIN_MAP]
    for i, row in enumerate(value):
        if not isinstance(row, list) or len(row) != size:
            break
        for j, cell in enumerate(row):
            if isinstance(cell, int) and not isinstance(cell, bool) and 0 <= cell <= 3:
                rows[i][j] = cell
    return tuple(tuple(row) for row in rows)


def parse_exclusion(domain: str, entry) -> Exclusion | None:
    """One ``drc_exclusions``/``erc_exclusions`` entry (a string or KiCad 9's [string, comment])."""
    comment = ""
    if isinstance(entry, list) and entry and isinstance(entry[0], str):
        comment = entry[1] if len(entry) > 1 and isinstance(entry[1], str) else ""
        entry = entry[0]
    if not isinstance(entry, str) or "|" not in entry:
        return None
    props = entry.split("|")
    kicad_type = props[0]
    scale = PCB_UNITS_PER_MM if domain == "drc" else SCH_UNITS_PER_MM
    x, y = _coordinate(props, 1, scale), _coordinate(props, 2, scale)
    layer = None
    if domain == "drc":
        if kicad_type in ("copper_sliver", "generic_warning", "generic_error"):
            uuids, layer = props[3:4], _at(props, 4)
        elif kicad_type == "unconnected_items" and len(props) >= 7:
            uuids, layer = props[5:7], _at(props, 3)
        elif kicad_type == "starved_thermal":
            uuids, layer = props[3:5], _at(props, 5)
        else:
            uuids = props[3:5]
    elif kicad_type in ("generic_warning", "generic_error", "unresolved_variable") and _at(props, 4) \
            and not _looks_like_uuid(props[4]):
        uuids = props[3:4]       # the aux slot is the field's text; the item is its parent
    else:
        uuids = props[3:5]
    return Exclusion(domain=domain, kicad_type=kicad_type, x=x, y=y,
                     uuids=frozenset(u for u in uuids if u and u != NIL_UUID), layer=layer or None,
                     comment=comment, text=entry)


def _at(props: list[str], index: int) -> str | None:
    return props[index] if len(props) > index else None


def _coordinate(props: list[str], index: int, scale: int) -> float | None:
    try:
        return int(props[index]) / scale
    except (IndexError, ValueError):
        return None


def _looks_like_uuid(text: str) -> bool:
    return len(text) == 36 and text.count("-") == 4


def domain_of(finding) -> str | None:
    """'drc' or 'erc' for a finding that mirrors a KiCad type; None otherwise.

    A type KiCad has in both (``unresolved_variable``, ``generic_*``) belongs to
    where the finding was made: an imported ERC report, or a schematic rule.
    """
    kicad_type = getattr(finding, "kicad_type", None)
    if not kicad_type:
        return None
    if kicad_type in DRC_DEFAULTS and kicad_type not in ERC_DEFAULTS:
        return "drc"
    if kicad_type in ERC_DEFAULTS and kicad_type not in DRC_DEFAULTS:
        return "erc"
    if finding.source == "kicad-erc" or finding.rule_id.startswith(("sch.", "erc.", "kicad.erc")):
        return "erc"
    return "drc"


EXCLUDED_SEVERITY = "info"


def exclude(finding) -> None:
    """Mark a finding excluded by the project. Like KiCad's own "exclusion" severity it
    is reported at ``info``: so every reader of the run result, the service's gate
    included, leaves it out of the verdict without knowing about exclusions."""
    finding.excluded = True
    finding.severity = EXCLUDED_SEVERITY


def apply_project_settings(findings: list, settings: ProjectSettings) -> list:
    """The findings the project reports, at the project's severities, with its exclusions marked.

    Only findings that carry a ``kicad_type`` are touched; the rest keep the
    catalogue's severity. An imported kicad-cli finding already carries the
    project's severity and exclusion (kicad-cli applied them), so it is left as
    KiCad said it.
    """
    kept = []
    for finding in findings:
        domain = domain_of(finding)
        if domain is None or finding.source in ("kicad-drc", "kicad-erc"):
            kept.append(finding)
            continue
        level = settings.severity(domain, finding.kicad_type)
        if level == "ignore":
            continue
        if finding.extra.get("rule_severity") in ("error", "warning"):
            level = finding.extra["rule_severity"]     # a custom rule's own (severity ...) (DRC_ENGINE::ReportViolation)
        if finding.kicad_type == "pin_to_pin" and "pin_map_level" in finding.extra:
            # ERC_SETTINGS::GetSeverity: the pin_to_pin setting only switches pin conflicts off;
            # the pin map says warning or error.
            level = "error" if finding.extra["pin_map_level"] >= PIN_MAP_ERROR else "warning"
        finding.severity = SEVERITY_FOR[level]
        places = [(loc["x"], loc["y"]) for loc in finding.all_locations() if loc.get("x") is not None]
        if settings.exclusion_for(domain, finding.kicad_type, finding.uuids, places) is not None:
            exclude(finding)
        kept.append(finding)
    return kept

"""Every rule the checker can report: id, default severity, what it checks,
the KiCad ERC/DRC key it mirrors, and how to fix it.

docs/rules.md is generated from this table (``python -m checker.docs``) and a
test keeps the two identical, so the documentation cannot drift.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Rule:
    id: str
    severity: str
    title: str
    checks: str
    mirrors: str          # KiCad ERC/DRC violation key, or "-" when KiCad has none
    fix: str
    # The KiCad type whose severity (KiCad 9's default, or the project's own
    # rule_severities) this rule's findings take, and whose exclusions apply;
    # a finding may name another. None: boardready's own severity.
    kicad_type: str | None = None


_RULES = [
    # Schematic
    Rule("sch.unannotated", "error", "Unannotated reference",
         "A placed symbol instance whose reference ends in '?' or has no number (per sheet instance).",
         "ERC unannotated", "Run Tools > Annotate Schematic."),
    Rule("sch.duplicate-reference", "error", "Duplicate reference",
         "Two symbol instances share a reference and unit, or one reference names different parts. "
         "Checked per sheet instance, so a sheet used twice must get distinct references.",
         "ERC duplicate_reference", "Re-annotate, or give the instances distinct references."),
    Rule("sch.footprint-missing", "error", "No footprint assigned",
         "A symbol that goes on the board has an empty Footprint field.",
         "DRC parity missing_footprint", "Assign a footprint (Tools > Assign Footprints).",
         kicad_type="missing_footprint"),
    Rule("sch.footprint-no-library", "error", "Footprint without library",
         "The Footprint field has no 'Library:' prefix, so KiCad cannot resolve it.",
         "ERC footprint_link_issues", "Use the full 'Library:Footprint' identifier."),
    Rule("sch.footprint-library-unknown", "high", "Footprint library unknown",
         "The footprint's library is neither in the project's fp-lib-table nor a standard KiCad library.",
         "ERC footprint_link_issues / DRC lib_footprint_issues",
         "Add the library to the project fp-lib-table (and commit it) or pick a standard footprint."),
    Rule("sch.title-revision-missing", "low", "Title block has no revision",
         "The root sheet's title block has no 'rev'.", "-", "Fill in Page Settings > Revision."),
    Rule("sch.title-date-missing", "low", "Title block has no date",
         "The root sheet's title block has no 'date'.", "-", "Fill in Page Settings > Issue Date."),
    Rule("sch.sheet-missing", "error", "Sheet file missing or unreachable",
         "A hierarchical sheet names a file that does not exist, cannot be read, or is not a schematic.",
         "-", "Commit the sheet file or fix the sheet's file name."),
    # Schematic / board parity
    Rule("parity.missing-footprint", "error", "Symbol missing from the board",
         "A symbol with 'on board' set has no footprint on the board: none made from it (the footprint's "
         "symbol path) and none with its reference.",
         "DRC parity missing_footprint", "Update PCB from Schematic (F8).",
         kicad_type="missing_footprint"),
    Rule("parity.extra-footprint", "high", "Footprint not in the schematic",
         "A board footprint (not 'board only') was made from no symbol of the schematic (by symbol path) "
         "and no symbol has its reference.",
         "DRC parity extra_footprint", "Delete it, mark it board-only, or add the symbol.",
         kicad_type="extra_footprint"),
    Rule("parity.reference-mismatch", "high", "Reference differs from the schematic",
         "The footprint made from a symbol (paired by the symbol's instance path, which KiCad stores in the "
         "footprint) carries another reference than the symbol.",
         "DRC parity footprint_symbol_mismatch", "Update PCB from Schematic, or re-annotate the side that is wrong.",
         kicad_type="footprint_symbol_mismatch"),
    Rule("parity.footprint-mismatch", "high", "Footprint differs from the schematic",
         "The board footprint's library id differs from the symbol's Footprint field.",
         "DRC parity footprint_symbol_mismatch", "Update PCB from Schematic with 'update footprints'.",
         kicad_type="footprint_symbol_mismatch"),
    # Board
    Rule("board.outline-missing", "error", "No board outline",
         "Nothing is drawn on Edge.Cuts, so a fab cannot cut the board.",
         "DRC invalid_outline", "Draw a closed outline on Edge.Cuts.",
         kicad_type="invalid_outline"),
    Rule("board.outline-open", "error", "Board outline not closed",
         "An Edge.Cuts line or arc ends where no other outline item starts (0.01 mm tolerance).",
         "DRC invalid_outline", "Join the outline segments end to end.",
         kicad_type="invalid_outline"),
    Rule("board.track-width", "error", "Track narrower than the board's minimum",
         "A track (segment or arc) narrower than the board's own minimum track width (board setup, or a "
         "matching .kicad_dru track_width rule): an error, as in KiCad's DRC. A net class's track width is "
         "KiCad's preferred width for new tracks, not a minimum, so a neck-down is not reported. A track "
         "within the board's rules but below the fab profile's minimum is reported at the fab severity (high "
         "when the project chose the fab, medium under generic). One finding per net and width.",
         "DRC track_width", "Widen the track, or fix the rule if the fab can make it."),
    Rule("board.via-drill", "error", "Via drill below the minimum",
         "A via's drill below the board's own minimum through-hole size (error) or the fab profile's minimum "
         "via drill (fab severity). Vias are grouped by size; microvias are not held to these limits.",
         "DRC drill_out_of_range", "Use a larger via drill."),
    Rule("board.hole-size", "error", "Hole size outside a custom rule's range",
         "A via's or pad's hole smaller than the minimum or larger than the maximum of the last .kicad_dru rule "
         "with a hole_size constraint whose condition matches it (a pad: its smaller hole dimension against "
         "the minimum, its larger against the maximum), as KiCad's DRC; the rule's severity applies.",
         "DRC drill_out_of_range", "Change the drill, or the rule if the fab can make it."),
    Rule("board.via-diameter", "error", "Via diameter below the minimum",
         "A via's pad diameter below the board's own minimum via diameter (error) or the fab profile's "
         "(fab severity).",
         "DRC via_diameter", "Use a larger via."),
    Rule("board.annular-ring", "error", "Via or pad annular ring below the minimum",
         "(via diameter - drill) / 2 below the board's own minimum annular width (error) or the fab "
         "profile's (fab severity); a plated through-hole pad's copper around its hole (with or without a "
         "net) below the board's own minimum annular width (error), as KiCad 9 measures it.",
         "DRC annular_width", "Increase the via or pad size, or reduce its drill."),
    Rule("board.short", "error", "Copper of two nets touches",
         "Copper of two different nets touches or overlaps on a copper layer: tracks and arcs, vias and "
         "through-hole pads on the layers KiCad flashes them on (remove/keep unused layers: elsewhere only "
         "their hole), pads of every shape with their rotation and custom primitives, copper shapes drawn on "
         "the board or in footprints (a footprint's shape touching its no-net pads too; a net tie's shapes "
         "may touch its tied nets) and zone fills as last saved; a track, via or copper shape touching a "
         "pad or shape of no net is one too (as KiCad 9 reports a footprint's no-net copper over its own "
         "pad). The finding names both items, their nets, "
         "the layer and the point. KiCad type: tracks_crossing when two tracks' centre lines cross, clearance "
         "(actual 0) against a zone fill, else shorting_items.", "DRC shorting_items / tracks_crossing / clearance (actual 0)",
         "Reroute or move one of the items; refill zones after moving copper."),
    Rule("board.clearance", "error", "Copper closer than the board's clearance",
         "Copper of two different nets closer than the governing clearance: the larger of the two items' net "
         "class clearances, or their local overrides (pad, footprint, zone) when they have one, never below "
         "the board's minimum clearance; a matching .kicad_dru clearance rule (net class, net, item type, "
         "layer conditions) replaces them. A via or pad not flashed on a layer is measured there by its hole. "
         "Two zone fills are held to the net classes and rules (not the zones' own clearance), as KiCad 9's "
         "zone-to-zone test does. Reports the rule, the required and the actual distance. Copper within the "
         "board's rules but closer than the fab profile's minimum spacing is reported at the fab severity, "
         "with no KiCad type. A track's violations are one finding (KiCad reports one error per track), and "
         "many pairs between the same two nets become one finding; either lists every place.",
         "DRC clearance", "Move the copper apart, or correct the rule."),
    Rule("board.hole-clearance", "error", "Drilled holes too close",
         "Two round drilled holes (vias but microvias, plated and non-plated pad holes; not slots) closer, "
         "edge to edge, than the board's hole-to-hole minimum, a footprint's own holes too, as KiCad 9 "
         "compares them; two holes at one place are not this.",
         "DRC hole_to_hole", "Move the via or footprint.", kicad_type="hole_to_hole"),
    Rule("board.unconnected", "error", "Net not connected",
         "KiCad's missing connections: tracks, arcs, vias bridging layers, pads and zone fills that touch "
         "are united per net (a via or pad by its full pad even where it is not flashed; a track end on the "
         "middle of a track joins it); every island of the net's copper beyond the first, a pad-less track "
         "too, is one edge of the net's ratsnest (the minimum spanning tree between islands, by their "
         "nearest anchors: track ends, via centres, pad positions) and one finding naming the two items. "
         "An island of zone fill alone is not one.",
         "DRC unconnected_items", "Route the missing connection (or refill the zone).",
         kicad_type="unconnected_items"),
    Rule("board.dangling-track", "low", "Track end touches nothing",
         "A track end that touches no other copper of its net (a track's end, or lying on a track's copper "
         "anywhere along it: a T-junction is connected, as in KiCad 9; a via, pad or zone fill). One finding "
         "per net with the count and every end.", "DRC track_dangling", "Delete the stub or finish the route.",
         kicad_type="track_dangling"),
    Rule("board.edge-clearance", "high", "Copper too close to the board edge",
         "Copper (tracks, vias, pads, zone fills as last saved) closer to Edge.Cuts, outline or cutout, than "
         "the board's own copper-to-edge minimum (KiCad 9's 0.5 mm when the project sets none; copper on the "
         "edge line even under 0 mm: KiCad's copper_edge_clearance, an error there) or only the "
         "fab profile's (fab severity, no KiCad type). Copper meant to reach the edge is not reported: "
         "edge-connector pads (pad type connector, or surface pads when the board sets an edge connector), "
         "castellated pads and edge-mount footprints. One finding per net and limit, listing every item.",
         "DRC copper_edge_clearance", "Move the copper away from the edge."),
    # KiCad 9 rates duplicate_footprints from the project's rule_severities, a warning by default
    # (BOARD_DESIGN_SETTINGS::BOARD_DESIGN_SETTINGS, pcbnew/board_design_settings.cpp:
    # m_DRCSeverities[ DRCE_DUPLICATE_FOOTPRINT ] = RPT_SEVERITY_WARNING); so does this rule.
    Rule("board.duplicate-reference", "medium", "Duplicate board reference",
         "Two footprints on the board carry the same reference.",
         "DRC duplicate_footprints", "Re-annotate and update the board from the schematic.",
         kicad_type="duplicate_footprints"),
    # KiCad 9's DRC has no type for an unannotated footprint: high puts it before a reviewer
    # (at-risk, the gate waits for a waiver or an approval) without blocking what KiCad passes.
    Rule("board.unannotated", "high", "Unannotated board reference",
         "A footprint with pads whose reference ends in '?' or '*' or has no number (a footprint of "
         "graphics only, such as a logo, is not a part).",
         "-", "Annotate the schematic and update the board, or set a reference."),
    # Design rules
    Rule("rules.below-fab", "medium", "Board rule looser than the fab",
         "A minimum in the board setup, a net class or a .kicad_dru constraint is below what the fab profile "
         "states it can make, so KiCad's DRC would pass a board the fab rejects. One finding per rule naming "
         "both numbers. KiCad's own default values are not reported, nor numbers the fab does not publish.",
         "-", "Raise the rule to the fab minimum (Board Setup > Design Rules)."),
    Rule("rules.unsupported", "info", "Custom rule not applied",
         "A .kicad_dru rule whose condition uses more than boardready evaluates (A./B. NetClass, NetName, "
         "Type or Layer compared with == or != and joined by &&, ||, !): it was skipped, not guessed.",
         "-", "Check that rule with KiCad's own DRC."),
    # BOM
    Rule("bom.mpn-missing", "medium", "BOM part without a manufacturer part number",
         "A part that goes into the BOM has none of the configured MPN-like fields filled in.",
         "-", "Add an MPN field (names are configurable in .boardready.toml)."),
    Rule("bom.dnp-in-bom", "medium", "Do-not-populate part still in the BOM",
         "A symbol marked DNP is still included in the BOM (in_bom yes), or appears in the BOM CSV.",
         "-", "Set 'Exclude from BOM' on the symbol, or remove the row from the BOM."),
    Rule("bom.csv-mismatch", "high", "BOM CSV disagrees with the schematic",
         "A reference is in the BOM CSV but not the schematic (or the reverse), or its value or "
         "footprint differs.", "-", "Regenerate the BOM from the current schematic."),
    # Formats
    Rule("format.legacy", "high", "Legacy KiCad file format",
         "A board in KiCad 5 format (module tokens, version 20171130 or older).",
         "-", "Open and save the project in KiCad 6 or later."),
    Rule("format.too-new", "medium", "File format newer than this checker knows",
         "A file version newer than KiCad 10's (stamped after 2026); it was read best-effort.", "-",
         "Update boardready, or save with a supported KiCad version."),
    # KiCad ERC/DRC
    Rule("kicad.erc", "error", "KiCad ERC violation",
         "A violation from KiCad's own ERC report (severity taken from the report: error stays "
         "error, warning becomes medium; excluded violations are skipped).",
         "ERC (any key; the key is in the finding's title)", "Fix it in Eeschema, or exclude it there."),
    Rule("kicad.drc", "error", "KiCad DRC violation",
         "A violation, unconnected item or schematic-parity entry from KiCad's own DRC report "
         "(severity as for ERC).", "DRC (any key; the key is in the finding's title)",
         "Fix it in Pcbnew, or exclude it there."),
    Rule("kicad.erc-unverified", "high", "ERC could not be verified",
         "An ERC report was asked for but is missing or unreadable, or kicad-cli exited with an error, "
         "timed out or wrote no report. A missing report is never read as clean.", "-",
         "Provide a readable report or fix kicad-cli."),
    Rule("kicad.drc-unverified", "high", "DRC could not be verified",
         "A DRC report was asked for but is missing or unreadable, or kicad-cli exited with an error, "
         "timed out or wrote no report.",
         "-", "Provide a readable report or fix kicad-cli."),
    Rule("kicad.cli-unusable", "info", "kicad-cli present but not usable",
         "kicad-cli is on the PATH but `kicad-cli version` does not say KiCad 8 or later (KiCad 7 writes "
         "no JSON reports), so KiCad's own ERC and DRC were not run, as when kicad-cli is absent.",
         "-", "Install KiCad 8 or later, or pass --erc-report/--drc-report."),
    Rule("report.truncated", "info", "Findings truncated",
         "More findings than the run-result contract carries (10000); the least severe were dropped.",
         "-", "Fix the most frequent finding first."),
    Rule("checker.rule-failed", "error", "Check incomplete: a rule failed",
         "A rule stopped on something the checker did not expect (the finding names the rule and the "
         "error); the other rules' findings still travel, but the check is incomplete, so the verdict is "
         "blocked and bin/check exits 3. It cannot be waived or overridden in .boardready.toml.",
         "-", "Report it with the board file; a fix in the checker, not in the board, clears it."),
]

from .drc_catalogue import DRC_RULES  # noqa: E402  (it needs Rule, defined above)
from .erc_catalogue import ERC_RULES  # noqa: E402  (it needs Rule, defined above)

_RULES += ERC_RULES + DRC_RULES
RULES: dict[str, Rule] = {rule.id: rule for rule in _RULES}

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
    _drc("board.starved-thermal", "starved_thermal", "error", "Thermal relief with too few spokes",
         "A pad of a zone's net, flashed on the zone's layer and joined to it by a thermal relief (the pad's, "
         "its footprint's or the zone's connection setting), whose relief in the fill as last saved has "
         "fewer spokes than the board setup's minimum (min_resolved_spokes, KiCad's default 2). Spokes are counted as KiCad 9 counts them: the "
         "crossings of the fill's outline with the pad's outline grown by half the thermal gap, two per "
         "spoke; spokes into an island of the fill that connects only this pad do not count unless they are "
         "all there is; a track of the net from inside that ring into the fill counts as one. A pad the "
         "fill does not reach is not reported here.",
         "Widen the thermal spokes or the gap around them, clear what blocks a spoke, or connect the pad "
         "solidly; then refill the zones."),
    _drc("board.courtyards-overlap", "courtyards_overlap", "error", "Courtyards overlap",
         "The courtyards (F.CrtYd / B.CrtYd outlines, closed into areas) of two footprints on the same side "
         "overlap, as KiCad 9 measures it: each courtyard shrunk by 0.005 mm still touches the other (an "
         "overlap 0.01 mm deep or more, whatever its area).",
         "Move the footprints apart, or correct the courtyard."),
    _drc("board.footprint-type-mismatch", "footprint_type_mismatch", "error", "Footprint type contradicts its pads",
         "A footprint typed SMD or through hole whose pads say otherwise, as KiCad guesses it: through hole when "
         "it has a plated hole, else SMD when it has a surface pad on copper (fiducial, heatsink, castellated "
         "and mechanical pads left out). A footprint typed neither is not second-guessed.",
         "Set the footprint's type (Footprint Properties > Fabrication attributes) to what it is."),
    _drc("board.item-in-keepout", "items_not_allowed", "error", "Item inside a keepout",
         "A track, via, pad or zone fill whose copper overlaps a rule area (keepout) that does not allow "
         "that kind of item on a layer they share, or a footprint whose courtyard overlaps a rule area that "
         "does not allow footprints. The outline's second and later polygons are cutouts (as KiCad reads "
         "them): copper wholly inside one is allowed.",
         "Move the item out of the rule area, or allow it there."),
    _drc("board.zones-intersect", "zones_intersect", "error", "Zones of one net and priority overlap",
         "Two copper zones of the same net (no net counts as one) and the same priority whose outlines "
         "overlap or touch on a layer they share: which one fills the shared area is undefined (KiCad 9's "
         "zone-to-zone test). Rule areas may overlap at will.",
         "Give the zones distinct priorities, or merge them."),
    _drc("board.mask-bridge", "solder_mask_bridge", "error", "Solder mask opening bridges two nets",
         "A pad's solder mask opening (its copper grown by its solder mask margin: the pad's, its "
         "footprint's or the board setup's) reaching copper of another net on the same side (track, via, "
         "zone fill, pad), or nearer another pad's opening than the board's minimum mask web: bare copper of "
         "two nets side by side. Once per side. Pads of one footprint that allows solder mask bridges are "
         "not compared with each other. A shape drawn on F.Mask / B.Mask (a solder jumper's window) is an "
         "opening too: copper of two nets under it is bridged.",
         "Shrink the mask margin, move the copper, or allow bridges in the footprint if they are meant."),
    _drc("board.silk-edge-clearance", "silk_edge_clearance", "medium", "Silkscreen clipped by the board edge",
         "A line, arc, circle, rectangle or polygon on F.SilkS or B.SilkS (the board's or a footprint's) "
         "touching or crossing an Edge.Cuts item (its centreline), or nearer it than the board setup's silk "
         "clearance: the fab clips it. One place per silk item, one finding per footprint and side. Texts are "
         "not checked (the checker does not draw KiCad's stroke font).",
         "Move or shorten the silkscreen so it stays inside the board."),
    _drc("board.silk-over-mask", "silk_over_copper", "medium", "Silkscreen clipped by the solder mask",
         "A line, arc, circle, rectangle or polygon on F.SilkS or B.SilkS reaching a solder mask opening on its "
         "side (a pad's copper grown by its solder mask margin: the pad's, its footprint's or the board "
         "setup's), or nearer it than the board setup's silk clearance: the fab does not print silk on bare "
         "copper. One place per silk item, one finding per footprint and side. Via openings and shapes drawn on "
         "a mask layer are not taken as openings; texts are not checked.",
         "Move the silkscreen off the pad's opening."),
    _drc("board.text-height", "text_height", "medium", "Silkscreen text too small",
         "A visible text on F.SilkS or B.SilkS (footprint fields and texts, board texts) whose font height is "
         "below the board setup's minimum text height (KiCad 9's 0.8 mm when the project sets none). One "
         "finding listing every text.",
         "Make the text larger, or hide it."),
    _drc("board.text-thickness", "text_thickness", "medium", "Silkscreen text too thin",
         "A visible text on F.SilkS or B.SilkS whose pen width, as KiCad draws it (the written thickness, at "
         "most a quarter of the font's smaller size), is below the board setup's minimum text thickness "
         "(KiCad 9's 0.08 mm when the project sets none). One finding listing every text.",
         "Make the text's stroke (and so its size) larger."),
    _drc("board.dangling-via", "via_dangling", "medium", "Via joins nothing",
         "A via that fewer than two items of its net (tracks, pads, zone fills, other vias) touch, so it "
         "joins nothing to anything. One finding per net listing every via.",
         "Delete the via or connect it on a second layer."),
]

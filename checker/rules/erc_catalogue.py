"""The checker's own ERC rules (checker/erc.py): one per KiCad 9 ERC type, at KiCad 9's
default severity for it (error -> error, warning -> medium). The project's
``erc.rule_severities`` and ``erc_exclusions`` then apply as in KiCad."""
from __future__ import annotations

from .catalogue import Rule


def _erc(kicad_type: str, severity: str, title: str, checks: str, fix: str) -> Rule:
    return Rule("erc." + kicad_type.replace("_", "-"), severity, title, checks, f"ERC {kicad_type}", fix)


ERC_RULES = [
    _erc("pin_not_connected", "error", "Pin not connected",
         "A symbol pin whose wires reach no other pin, label or sheet pin and that has no no-connect flag "
         "(a hidden power pin counts as connected when a label or power symbol of its name exists); a sheet "
         "pin with nothing attached; a hierarchical label on the root sheet, which has no parent to reach.",
         "Wire the pin, or place a no-connect flag on it."),
    _erc("label_dangling", "error", "Label not connected",
         "A local or hierarchical label on no wire, pin or other label, or whose whole net reaches fewer than "
         "two pins and no no-connect flag.", "Attach the label to its wire, or delete it."),
    _erc("isolated_pin_label", "medium", "Label connected to only one pin",
         "A label whose whole net reaches one pin and no no-connect flag, in a "
         "schematic written by KiCad 10, whose ERC reports it as this warning (KiCad 9's files: label_dangling).",
         "Connect the net to its other pins, or delete the label."),
    _erc("global_label_dangling", "medium", "Global label not connected",
         "A global label whose net reaches fewer than two pins and no no-connect flag.",
         "Connect the net or delete the label."),
    _erc("wire_dangling", "error", "Wires not connected to anything",
         "Wires (with their junctions) that reach no pin, label or sheet pin.", "Delete the stray wires."),
    _erc("unconnected_wire_endpoint", "medium", "Unconnected wire endpoint",
         "A wire end that touches no other wire end, pin, label, junction or no-connect flag (a wire end on "
         "the middle of another wire does not join it).", "Extend the wire to its target, or add a junction."),
    _erc("pin_to_pin", "medium", "Pin conflict",
         "Pins on one net whose types conflict in the pin map (KiCad's default or the project's "
         "erc.pin_map), one finding per pin as KiCad places its markers: an error where the map says error "
         "(two outputs), else medium, whatever the project's pin_to_pin severity (which can only turn it off).",
         "Fix the connection or the pin types."),
    _erc("pin_not_driven", "error", "Input pin not driven",
         "A net with an input pin and no output, bidirectional, tri-state, passive or power output pin.",
         "Connect a driver to the net."),
    _erc("power_pin_not_driven", "error", "Power input not driven",
         "A net with a power input pin and no power output pin (a PWR_FLAG is one).",
         "Connect the supply, or place a PWR_FLAG on the net."),
    _erc("no_connect_connected", "medium", "No-connect flag on a connected pin",
         "A no-connect flag on a net that has more than one pin.", "Remove the flag or the connection."),
    _erc("no_connect_dangling", "medium", "No-connect flag not on a pin",
         "A no-connect flag whose net has no pin and no label.", "Move the flag onto the pin or delete it."),
    _erc("hier_label_mismatch", "error", "Sheet pin and hierarchical label do not match",
         "A sheet pin with no hierarchical label of its name in the sheet, or a hierarchical label with no "
         "sheet pin of its name on the sheet symbol.", "Add or rename the pin or the label (Sync Sheet Pins)."),
    _erc("same_local_global_label", "medium", "Local and global label with the same name",
         "A local label and a global label carry the same text.", "Rename one of them."),
    _erc("similar_labels", "medium", "Labels differ only by case",
         "Two labels whose texts differ only in upper/lower case.", "Use one spelling."),
    _erc("similar_power", "medium", "Power symbols differ only by case",
         "Two power symbols whose names differ only in upper/lower case.", "Use one spelling."),
    _erc("similar_label_and_power", "medium", "Label and power symbol differ only by case",
         "A label and a power symbol whose names differ only in upper/lower case.", "Use one spelling."),
    _erc("multiple_net_names", "medium", "Two names on one net",
         "Labels or power symbols of different names attached to the same wires; KiCad uses one of them.",
         "Keep one name on the net."),
    _erc("label_multiple_wires", "medium", "Label joins several wires",
         "A local label in the middle of two or more wires (not at their ends), so it joins them.",
         "End the wires at the label or move it."),
    _erc("bus_to_net_conflict", "error", "Bus joined to a net",
         "Bus and net items joined by drawing: a net label on a bus, a bus label on a wire.",
         "Use a bus entry and a member name, or the right kind of label."),
    _erc("duplicate_sheet_names", "error", "Duplicate sheet names",
         "Two sheets in one sheet whose names differ at most in upper/lower case.", "Rename one of the sheets."),
    _erc("undefined_netclass", "error", "Undefined net class",
         "A netclass directive, or a label's or symbol's Netclass field, names a net class the project does not define.",
         "Define the class in Schematic Setup > Net Classes or fix the directive."),
    _erc("endpoint_off_grid", "medium", "Connection point off grid",
         "A wire, bus or bus entry end, or a symbol's pin, off the project's connection grid (50 mil unless set).",
         "Move the item onto the grid."),
    _erc("missing_unit", "medium", "Unplaced symbol unit",
         "A multi-unit symbol with units that are not placed.", "Place the missing units."),
    _erc("missing_input_pin", "medium", "Unplaced unit has input pins",
         "An unplaced unit of a symbol has input pins.", "Place the unit and tie its inputs."),
    _erc("missing_power_pin", "error", "Unplaced unit has power pins",
         "An unplaced unit of a symbol has power input pins, so the part gets no supply.",
         "Place the power unit."),
    _erc("missing_bidi_pin", "medium", "Unplaced unit has bidirectional pins",
         "An unplaced unit of a symbol has bidirectional pins.", "Place the unit."),
    _erc("different_unit_net", "error", "A repeated pin of a multi-unit part on two nets",
         "Units of one part repeat a pin (a shared power pin) and the copies are wired to different nets.",
         "Connect every copy of the pin to the same net."),
    _erc("different_unit_footprint", "error", "Units with different footprints",
         "Units of one reference carry different footprints.", "Give every unit the same footprint."),
    _erc("net_not_bus_member", "medium", "Net on a bus entry is not a bus member",
         "A wire joined to a bus through a bus entry whose net is none of the bus's members (by full name: "
         "a member carries the sheet path of what names the bus); a net named by a power symbol or global label "
         "is exempt.", "Rename the net to a member of the bus, or add it to the bus."),
    _erc("lib_symbol_mismatch", "medium", "Symbol differs from its library",
         "A placed symbol's copy embedded in the schematic differs from the symbol in the project's own library "
         "(sym-lib-table, inside the project) as KiCad's ERC compares them: power flag, units, graphics, pins, "
         "fields, footprint filters, keywords, pin name offset.",
         "Update the symbol from its library (Tools > Update Symbols from Library), or the library from it."),
    Rule("erc.lib-symbol-mismatch-installed", "medium", "Symbol differs from the installed library",
         "As erc.lib-symbol-mismatch, against KiCad's standard library of that name where it is installed on the "
         "machine the checker runs on; never blocking, since what a machine has installed does not decide a release.",
         "ERC lib_symbol_mismatch",
         "Update the symbol from its library, or ignore if the installed library is not the one the design uses."),
]

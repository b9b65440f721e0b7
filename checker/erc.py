"""The checker's own electrical rules check, KiCad 9's ERC on the connectivity model.

Each finding mirrors one KiCad violation: it carries the KiCad type
(``kicad_type``), the uuids of the items KiCad names and their sheet X/Y in mm,
and starts at KiCad 9's default severity for the type (error -> ``error``,
warning -> ``medium``); the project's ``erc.rule_severities`` and
``erc_exclusions`` are applied afterwards by ``project_settings``.

What KiCad does, and so what this does (eeschema/erc/erc.cpp and
connection_graph.cpp of KiCad 9):

* per subgraph (what one sheet's drawing joins): a pin alone with nothing but
  wires is ``pin_not_connected``; a label on nothing is ``label_dangling``, as
  is a label whose whole net reaches fewer than two pins and no no-connect;
  wires that reach no pin, label or sheet pin are ``wire_dangling``; a wire
  end that touches nothing is ``unconnected_wire_endpoint``;
* per net: every pair of pins is looked up in the pin conflict map and the
  conflicts reduced to one marker per pin as KiCad places them (``pin_to_pin``,
  rated by the map, see ``_pin_conflicts``), and a net with an input but no driver is
  ``pin_not_driven`` (``power_pin_not_driven`` when it has a power input,
  which only a power output drives: a PWR_FLAG is one);
* per sheet: sheet pins and hierarchical labels must match by name
  (``hier_label_mismatch``), a sheet pin must be connected, and a
  hierarchical label on the root sheet has no parent to connect to.

A sheet file used by several sheets is one *screen*; KiCad shows a marker that
is not tied to a sheet once per screen, so such findings are reported once.
"""
from __future__ import annotations

import os
import re
from collections import defaultdict
from pathlib import Path

from .connectivity import (
    LABEL_KINDS,
    PRIORITY_HIER_LABEL,
    PRIORITY_LOCAL_POWER_PIN,
    PRIORITY_NONE,
    Connectivity,
    Item,
    Net,
    SegmentIndex,
    SheetInstance,
    Subgraph,
    bus_members,
    driver_priority,
    power_net_name,
    to_mm,
)
from .erc_library import Libraries, available_libraries, signatures_match
from .findings import Finding
from .model import ProjectModel
from .project_settings import DEFAULT_PIN_MAP, PIN_MAP_ERROR, PIN_TYPES, read_project_settings
from .schematic import Schematic
from .versions import major_for

_DRIVING = frozenset(("output", "power_out", "passive", "tri_state", "bidirectional"))
_DRIVEN = frozenset(("input", "power_in"))
_PIN_TYPE_TEXT = {"input": "Input", "output": "Output", "bidirectional": "Bidirectional",
                  "tri_state": "Tri-State", "passive": "Passive", "free": "Free", "unspecified": "Unspecified",
                  "power_in": "Power input", "power_out": "Power output", "open_collector": "Open collector",
                  "open_emitter": "Open emitter", "no_connect": "Unconnected"}
DEFAULT_GRID_MM = 1.27          # KiCad's connection grid (50 mil) unless the project sets another


ERC_PREFIX = "erc."   # of every rule id ERC gives its findings


def rule_id(kicad_type: str) -> str:
    return ERC_PREFIX + kicad_type.replace("_", "-")


def wanted(model: ProjectModel) -> bool:
    """Whether the model asks for findings of any ERC rule."""
    return model.wanted_rules is None or any(rule.startswith(ERC_PREFIX) for rule in model.wanted_rules)


class _Report:
    def __init__(self, graph: Connectivity, kicad_major: int | None = None):
        self.graph = graph
        # The KiCad release that wrote the root sheet: its ERC's meaning applies where releases differ.
        self.kicad_major = kicad_major or 9
        self.findings: list[Finding] = []
        self.seen: set[tuple] = set()

    def add(self, kicad_type: str, message: str, items: list[tuple[Item, SheetInstance]],
            sheet_specific: bool = False) -> None:
        uuids = [item.uuid for item, _ in items]
        main, instance = items[0]
        key = (kicad_type, tuple(uuids), instance.key if sheet_specific else "")
        if key in self.seen:
            return
        self.seen.add(key)
        locations = [{"x": to_mm(item.position[0]), "y": to_mm(item.position[1]), "layer": None,
                      "uuids": [item.uuid]} for item, _ in items]
        extra = {"x": locations[0]["x"], "y": locations[0]["y"], "uuids": uuids, "sheet": instance.path}
        pins = [f"{self.graph.reference(item, where)}:{item.number}" for item, where in items if item.kind == "pin"]
        if pins:
            extra["pins"] = pins        # KiCad names a pin by reference and number too
        self.findings.append(Finding(
            rule_id(kicad_type), f"{message} (sheet {instance.path})",
            identity=(kicad_type, instance.key if sheet_specific else instance.screen.file, *uuids),
            path=instance.screen.file, line=main.location.line, column=main.location.column,
            kicad_type=kicad_type, locations=locations, extra=extra))


def describe(item: Item, graph: Connectivity, instance: SheetInstance) -> str:
    if item.kind == "pin":
        return f"{graph.reference(item, instance) or '?'} pin {item.number}" + (f" ({item.text})" if item.text else "") \
            + f" [{_PIN_TYPE_TEXT.get(item.type, item.type)}]"
    if item.kind in LABEL_KINDS:
        return {"label": "label", "global_label": "global label",
                "hierarchical_label": "hierarchical label"}[item.kind] + f" {item.text!r}"
    if item.kind == "sheet_pin":
        return f"sheet pin {item.text!r}"
    return item.kind.replace("_", " ")


def check(model: ProjectModel) -> list[Finding]:
    if model.schematic is None or not model.schematic.instances:
        return []
    return run(model.schematic, model.pro, model.files.folder)


def run(schematic: Schematic, pro: dict, project_folder: Path | None = None, reader=None) -> list[Finding]:
    """Every ERC finding of a loaded schematic, under the project file's settings (``pro``).

    With ``project_folder`` the embedded symbols are compared with the libraries
    available (``lib_symbol_mismatch``)."""
    graph = schematic.connectivity
    settings = read_project_settings(pro)
    report = _Report(graph, major_for("schematic", schematic.version))
    _subgraph_rules(graph, report)
    _hierarchy_rules(graph, report)
    _sheet_name_rules(graph, report)
    _net_rules(graph, report, settings.pin_map)
    _unit_net_rules(graph, report)
    _label_name_rules(graph, report)
    _wire_end_rules(graph, report)
    _label_on_wires_rules(graph, report)
    _netclass_rules(graph, report, pro)
    _grid_rules(graph, report, pro)
    _unit_rules(graph, report, schematic)
    _bus_entry_rules(graph, report)
    if project_folder is not None:
        from .limits import DEFAULT_LIMITS
        from .project import InputReader

        folder = Path(os.path.abspath(project_folder))
        _library_rules(graph, report, available_libraries(folder, reader or InputReader(folder, DEFAULT_LIMITS)),
                       reader or InputReader(folder, DEFAULT_LIMITS))
    return report.findings


def main(argv: list[str] | None = None) -> int:
    """``python -m checker.erc PROJECT.kicad_pro|SCHEMATIC.kicad_sch``: the ERC alone, counts per KiCad type."""
    import json
    import sys
    import time
    from collections import Counter
    from pathlib import Path

    from .limits import DEFAULT_LIMITS
    from .project import InputReader
    from .schematic import load_schematic

    started = time.perf_counter()
    target = Path((argv if argv is not None else sys.argv[1:])[0]).resolve()
    reader = InputReader(target.parent, DEFAULT_LIMITS)
    pro_path = target.with_suffix(".kicad_pro")
    pro = reader.read_json(pro_path) if pro_path.exists() else {}
    schematic = load_schematic(target.with_suffix(".kicad_sch"), reader, target.stem)
    findings = run(schematic, pro if isinstance(pro, dict) else {}, target.parent, reader)
    counts = Counter(f.kicad_type for f in findings)
    print(json.dumps({"schematic": schematic.root_file, "findings": dict(sorted(counts.items())),
                      "seconds": round(time.perf_counter() - started, 3)}, indent=1))
    return 0



# -- per subgraph ---------------------------------------------------------------------

def _subgraph_rules(graph: Connectivity, report: _Report) -> None:
    global_names = set()
    local_names = set()
    for sub in graph.subgraphs:
        for item in sub.items:
            if item.kind == "global_label":
                global_names.add(item.text)
            elif item.kind == "label":
                local_names.add((sub.instance.key, item.text))
            elif item.kind == "pin" and item.is_power_symbol_pin and item.is_global_power:
                global_names.add(power_net_name(item))
    for sub in graph.subgraphs:
        _bus_to_net_rule(sub, report)
        if sub.is_bus:
            continue
        _no_connect_rules(sub, graph, report, global_names, local_names)
        _label_rules(sub, graph, report)
        if not any(driver_priority(item) > PRIORITY_NONE for item in sub.items):
            wires = sub.of_kind("wire", "bus_entry")
            if wires:
                report.add("wire_dangling", "Wires not connected to anything",
                           [(wire, sub.instance) for wire in wires[:4]])


def _bus_to_net_rule(sub: Subgraph, report: _Report) -> None:
    """Bus and net things joined by drawing (a net label on a bus, a wire on a bus label)."""
    net_item = bus_item = None
    for item in sub.items:
        if item.kind == "wire" or (item.kind in LABEL_KINDS + ("sheet_pin",) and not item.is_bus):
            net_item = net_item or item
        elif item.is_bus:
            bus_item = bus_item or item
    if net_item is not None and bus_item is not None:
        report.add("bus_to_net_conflict", "Invalid connection between bus and net items",
                   [(net_item, sub.instance), (bus_item, sub.instance)])


def _stacked(a: Item, b: Item) -> bool:
    return a.symbol is b.symbol and a.position == b.position and a.text == b.text


def _no_connect_rules(sub: Subgraph, graph: Connectivity, report: _Report,
                      global_names: set, local_names: set) -> None:
    instance = sub.instance
    no_connect = sub.no_connect
    if no_connect is not None:
        # A flag on a sheet pin or hierarchical label says the other side of the link may be
        # connected or not: KiCad checks nothing more for it.
        if any(item.kind in ("sheet_pin", "hierarchical_label") and item.position == no_connect.position
               for item in sub.items):
            return
        first_pin = next((item for item in sub.items if item.kind == "pin"), None)
        unique, labels = _net_pins_and_labels(sub)
        if unique > 1:
            items = [(first_pin, instance), (no_connect, instance)] if first_pin else [(no_connect, instance)]
            report.add("no_connect_connected", "A pin with a no-connect flag is connected", items)
        if not unique and not labels:
            report.add("no_connect_dangling", "Unconnected no-connect flag", [(no_connect, instance)])
        return
    pins: list[Item] = []
    has_other = False
    for item in sub.items:
        if item.kind == "pin":
            if not has_other and pins and any(not _stacked(item, other) for other in pins):
                has_other = True
            pins.append(item)
        elif driver_priority(item) != PRIORITY_NONE:
            has_other = True
    if not pins:
        return
    pin = next((p for p in pins if p.type == "power_in"), pins[0])
    if not has_other and pin.is_global_power and not pin.is_power_symbol_pin:
        if pin.text in global_names or (instance.key, pin.text) in local_names:
            has_other = True
    if not has_other and pin.type not in ("no_connect", "free"):
        report.add("pin_not_connected", f"Pin not connected: {describe(pin, graph, instance)}", [(pin, instance)])


def _net_pins_and_labels(sub: Subgraph) -> tuple[int, int]:
    """Distinct pins (stacked pins, same part, place and name, count once) and labels of the net."""
    net = sub.net
    if net is not None and net.pins_and_labels is not None:
        return net.pins_and_labels
    unique: set[tuple] = set()
    labels = 0
    for other in (net.subgraphs if net is not None else [sub]):
        for item in other.items:
            if item.kind == "pin":
                unique.add((id(other.instance), id(item.symbol), item.position, item.text))
            elif item.kind in LABEL_KINDS:
                labels += 1
    if net is not None:
        net.pins_and_labels = (len(unique), labels)
    return len(unique), labels


def _net_summary(sub: Subgraph) -> tuple[int, bool]:
    """Pins of the subgraph's whole net, and whether any of its subgraphs has a no-connect flag."""
    net = sub.net
    if net is None:
        return len(sub.pins), sub.no_connect is not None
    if net.summary is None:
        net.summary = (sum(len(other.pins) for other in net.subgraphs),
                       any(other.no_connect is not None for other in net.subgraphs))
    return net.summary


def _label_rules(sub: Subgraph, graph: Connectivity, report: _Report) -> None:
    labels = [item for item in sub.items if item.kind in LABEL_KINDS]
    if not labels:
        return
    instance = sub.instance
    for label in labels:
        if id(label) in graph.dangling:
            # CONNECTION_GRAPH::ercCheckLabels: a floating global label is ERCE_GLOBLABEL_DANGLING
            # (a warning), any other floating label ERCE_LABEL_NOT_CONNECTED.
            # KiCad 10 reports a floating global label as label_dangling, "Label not connected", an
            # error (kicad-cli 10.0.7: 9 on the corpus's bluescsi desktop board, where kicad-cli
            # 9.0.8 gives 9 global_label_dangling warnings).
            if label.kind == "global_label" and report.kicad_major < 10:
                report.add("global_label_dangling", "Global label not connected anywhere else in the schematic: "
                           f"{describe(label, graph, instance)}", [(label, instance)])
            else:
                report.add("label_dangling", f"Label not connected to anything: {describe(label, graph, instance)}",
                           [(label, instance)])
            return
    pin_count = len(sub.pins)
    if pin_count > 1:
        return
    net_pins, net_no_connect = _net_summary(sub)
    all_pins = net_pins if sub.net else pin_count
    has_nc = sub.no_connect is not None or net_no_connect
    if all_pins == 0 or (all_pins == 1 and not has_nc):
        for label in labels:
            if label.kind == "global_label" and _named_elsewhere(sub, label.text):
                # CONNECTION_GRAPH::ercCheckLabels: a global label whose name other subgraphs carry
                # has "other connections", even when that other label floats (KiCad reports the
                # floating one only: the cut erc-global-label-floating).
                continue
            kicad_type = "global_label_dangling" if label.kind == "global_label" else "label_dangling"
            if all_pins == 1 and report.kicad_major >= 10:
                # KiCad 10 reports a local or hierarchical label whose net reaches one pin as its own
                # type, ERCE_ISOLATED_PIN_LABEL "Label connected to only one pin", a warning by
                # default (KiCad 9: label_dangling, an error). kicad-cli 10.0.7 on the fixture
                # `electric`: 33 isolated_pin_label where kicad-cli 9.0.8 gives 33 label_dangling; a
                # global label too (bluescsi desktop's USB_DM, KiCad 9's global_label_dangling).
                kicad_type = "isolated_pin_label"
            text = "Global label only connects to one pin" if label.kind == "global_label" \
                else "Label connected to only one pin" if all_pins else "Label not connected to any pins"
            report.add(kicad_type, f"{text}: {describe(label, graph, instance)}", [(label, instance)])


def _named_elsewhere(sub: Subgraph, text: str) -> bool:
    """Whether another subgraph of the net carries a global label ``text``."""
    return sub.net is not None and any(
        other is not sub and any(item.kind == "global_label" and item.text == text for item in other.items)
        for other in sub.net.subgraphs)


# -- hierarchy ------------------------------------------------------------------------

def _hierarchy_rules(graph: Connectivity, report: _Report) -> None:
    children: dict[tuple[int, str], SheetInstance] = {}
    for instance in graph.instances:
        if instance.parent is not None and instance.sheet is not None:
            children[(id(instance.parent), instance.sheet.uuid)] = instance
    for instance in graph.instances:
        if instance.parent is None:
            for item in instance.screen.items:
                if item.kind == "hierarchical_label":
                    report.add("pin_not_connected",
                               f"Hierarchical label {item.text!r} in the root sheet cannot be connected to a "
                               "parent sheet", [(item, instance)], sheet_specific=True)
        for box in instance.screen.sheets:
            for pin in box.pins:
                if id(pin) in graph.dangling:
                    report.add("pin_not_connected", f"Sheet pin {pin.text!r} not connected", [(pin, instance)])
            child = children.get((id(instance), box.uuid))
            if child is None:
                continue
            pins = {pin.text: pin for pin in box.pins}
            labels: dict[str, Item] = {}
            matched = set()
            for item in child.screen.items:
                if item.kind == "hierarchical_label":
                    if item.text in pins:
                        matched.add(item.text)
                    else:
                        labels[item.text] = item
            for name, pin in sorted(pins.items()):
                if name not in matched:
                    report.add("hier_label_mismatch",
                               f"Sheet pin {name!r} has no matching hierarchical label inside the sheet",
                               [(pin, instance)], sheet_specific=True)
            for name, label in sorted(labels.items()):
                report.add("hier_label_mismatch",
                           f"Hierarchical label {name!r} has no matching sheet pin in the parent sheet",
                           [(label, child)], sheet_specific=True)


def _sheet_name_rules(graph: Connectivity, report: _Report) -> None:
    """Two sheets of one screen whose names differ at most in case: ``duplicate_sheet_names``."""
    done = set()
    for instance in graph.instances:
        if id(instance.screen) in done:
            continue
        done.add(id(instance.screen))
        sheets = instance.screen.sheets
        for i, sheet in enumerate(sheets):
            for other in sheets[i + 1:]:
                if sheet.name.lower() == other.name.lower():
                    message = f"Duplicate sheet name {sheet.name!r} (and {other.name!r})"
                    first = Item("sheet", sheet.uuid, (sheet.position,), sheet.location)
                    second = Item("sheet", other.uuid, (other.position,), other.location)
                    report.add("duplicate_sheet_names", message, [(first, instance), (second, instance)])


# -- per net ---------------------------------------------------------------------------

_NUMBER_RUN = re.compile(r"(\d+)")


def _natural(text: str) -> tuple:
    return tuple((0, int(part), "") if part.isdigit() else (1, 0, part)
                 for part in _NUMBER_RUN.split(text) if part)


def _net_rules(graph: Connectivity, report: _Report, pin_map) -> None:
    pin_map = pin_map or DEFAULT_PIN_MAP
    for net in graph.nets:
        if any(sub.is_bus for sub in net.subgraphs):
            continue
        pins = net.pins
        if not pins:
            continue
        has_no_connect = any(sub.no_connect is not None for sub in net.subgraphs)
        pins.sort(key=lambda p: (_natural(graph.reference(p[0], p[1])), _natural(p[0].number)))
        power_net = any(pin.type == "power_in" for pin, _ in pins)
        # KiCad accumulates "driven" over every pair; every pin is in one, so over every pin.
        if power_net:
            has_driver = any(pin.type == "power_out" for pin, _ in pins)
        else:
            has_driver = any(pin.type in _DRIVING for pin, _ in pins)
        needs: tuple[Item, SheetInstance] | None = None
        for ref_pin, ref_instance in pins:
            ref_type = ref_pin.type
            if ref_type in _DRIVEN:
                current = needs[0] if needs else None
                if (current is None or (current.hidden and not ref_pin.hidden)
                        or (power_net != (current.type == "power_in") and power_net == (ref_type == "power_in"))):
                    needs = (ref_pin, ref_instance)
        for marked, other, level in _pin_conflicts(pins, pin_map):
            (pin, instance), (other_pin, other_instance) = pins[marked], pins[other]
            finding_count = len(report.findings)
            report.add("pin_to_pin",
                       f"Pins of type {_PIN_TYPE_TEXT[pin.type]} and {_PIN_TYPE_TEXT[other_pin.type]} are "
                       f"connected: {describe(pin, graph, instance)} and "
                       f"{describe(other_pin, graph, other_instance)}",
                       [(pin, instance), (other_pin, other_instance)], sheet_specific=True)
            if len(report.findings) > finding_count:
                finding = report.findings[-1]
                # The pin map's level is the finding's (ERC_SETTINGS::GetSeverity): the project's
                # pin_to_pin setting only decides whether it is reported at all.
                finding.severity = "error" if level >= PIN_MAP_ERROR else "medium"
                finding.extra["pin_map_level"] = level
        if needs is not None and not has_driver and not has_no_connect:
            if report.kicad_major >= 10 and power_net:
                # kicad-cli 10.0.7 marks a power symbol's pin of the net where it has one (#PWR06's
                # hidden +5F pin where kicad-cli 9.0.8 marks U3's visible VI pin, on the corpus's
                # bluescsi boards); without one, the pin KiCad 9 marks.
                needs = next(((pin, instance) for pin, instance in pins
                              if pin.is_power_symbol_pin and pin.type in _DRIVEN), needs)
            pin, instance = needs
            kicad_type = "power_pin_not_driven" if power_net else "pin_not_driven"
            text = ("Input Power pin not driven by any Output Power pins" if power_net
                    else "Input pin not driven by any Output pins")
            report.add(kicad_type, f"{text}: {describe(pin, graph, instance)}", [(pin, instance)], sheet_specific=True)


# KiCad 9's pin weights (ERC_SETTINGS constructor, m_PinTypeWeights, sorting metric SM_HEURISTICS):
# the pin of the highest weight in a conflict gets the marker.
_PIN_WEIGHT = {"free": 11, "unspecified": 10, "passive": 9, "open_collector": 8, "open_emitter": 7, "input": 6,
               "tri_state": 5, "bidirectional": 4, "output": 3, "power_in": 2, "power_out": 1, "no_connect": 0}


def _pin_conflicts(pins: list, pin_map) -> list[tuple[int, int, int]]:
    """KiCad 9's pin conflict markers of one net, as ERC_TESTER::TestPinToPin places them:
    (marked pin, other pin, pin map level), indices into ``pins`` (in KiCad's order).

    Every pair of conflicting pins (stacked pins of one sheet skipped) is a mismatch. The pins
    in any mismatch are visited by weight, heaviest first (ties in KiCad's order); a visited pin
    takes every mismatch still left that involves it and gets one marker naming the nearest
    of those other pins on its own sheet (by distance, the first of equals), else the last one
    on another sheet; the marker's level is that pair's. So ~140 ground pins against one
    regulator pin are one marker, not 140.
    """
    types = [PIN_TYPES.index(pin.type) for pin, _ in pins]
    by_type: dict[int, list[int]] = defaultdict(list)
    for position, kind in enumerate(types):
        by_type[kind].append(position)

    def level(a: int, b: int) -> int:
        return pin_map[types[a]][types[b]] if a < b else pin_map[types[b]][types[a]]

    def conflicts(a: int, b: int) -> bool:
        if not level(a, b):
            return False
        (pin_a, where_a), (pin_b, where_b) = pins[a], pins[b]
        return not (where_a is where_b and _stacked(pin_a, pin_b))

    # The pins in at least one mismatch: per pair of conflicting types, look only as far as the first partner.
    in_mismatch: set[int] = set()
    for kind, positions in by_type.items():
        partners = [other for other in by_type if pin_map[kind][other] or pin_map[other][kind]]
        for position in positions:
            if any(conflicts(position, other) for partner in partners for other in by_type[partner]
                   if other != position):
                in_mismatch.add(position)
    order = sorted(in_mismatch, key=lambda position: (-_PIN_WEIGHT[pins[position][0].type], position))
    done: set[int] = set()
    markers = []
    for position in order:
        pin, instance = pins[position]
        partners = [other for other in by_type if pin_map[types[position]][other] or pin_map[other][types[position]]]
        nearest = None
        nearest_distance = None
        other_sheet = None
        for other in sorted(other for partner in partners for other in by_type[partner]
                            if other != position and other not in done):
            if not conflicts(position, other):
                continue
            other_pin, other_instance = pins[other]
            if other_instance.key != instance.key:
                other_sheet = other
                continue
            dx = other_pin.position[0] - pin.position[0]
            dy = other_pin.position[1] - pin.position[1]
            distance = dx * dx + dy * dy
            if nearest_distance is None or distance < nearest_distance:
                nearest, nearest_distance = other, distance
        done.add(position)
        chosen = nearest if nearest is not None else other_sheet
        if chosen is not None:
            markers.append((position, chosen, level(position, chosen)))
    return markers


def _unit_net_rules(graph: Connectivity, report: _Report) -> None:
    """A pin number of a multi-unit part (a power pin every unit repeats) on two nets: ``different_unit_net``."""
    first: dict[str, tuple[Net, Item, SheetInstance]] = {}
    for net in graph.nets:
        for pin, instance in net.pins:
            if pin.symbol is None or pin.symbol.lib.unit_count < 2:
                continue
            key = f"{graph.reference(pin, instance)}:{pin.number}"
            seen = first.setdefault(key, (net, pin, instance))
            if seen[0] is not net:
                report.add("different_unit_net", f"Pin {pin.number} of {key.split(':')[0]} is connected to two nets",
                           [(pin, instance), (seen[1], seen[2])], sheet_specific=True)


# -- names -----------------------------------------------------------------------------

def _label_name_rules(graph: Connectivity, report: _Report) -> None:
    first_local: dict[str, tuple[Item, SheetInstance]] = {}
    first_global: dict[str, tuple[Item, SheetInstance]] = {}
    first_lower: dict[str, tuple[str, Item, SheetInstance]] = {}
    for net in graph.nets:
        for sub in net.subgraphs:
            instance = sub.instance
            for item in sub.items:
                if item.kind == "label":
                    first_local.setdefault(item.text, (item, instance))
                elif item.kind == "global_label":
                    first_global.setdefault(item.text, (item, instance))
                if item.kind in LABEL_KINDS:
                    text = item.text
                elif item.kind == "pin" and item.is_power_symbol_pin and item.is_global_power:
                    text = power_net_name(item)
                else:
                    continue
                other = first_lower.setdefault(text.lower(), (text, item, instance))
                if other[0] != text:
                    both_pins = item.kind == "pin" and other[1].kind == "pin"
                    one_pin = item.kind == "pin" or other[1].kind == "pin"
                    kicad_type = "similar_power" if both_pins else "similar_label_and_power" if one_pin \
                        else "similar_labels"
                    report.add(kicad_type, f"Labels are similar (differ only by case): {text!r} and {other[0]!r}",
                               [(item, instance), (other[1], other[2])], sheet_specific=True)
        _multiple_names(net, graph, report)
    for text, (global_label, global_instance) in first_global.items():
        if text in first_local:
            local_label, local_instance = first_local[text]
            report.add("same_local_global_label",
                       f"Local and global labels have the same name {text!r}",
                       [(global_label, global_instance), (local_label, local_instance)], sheet_specific=True)


def _driver_name(item: Item) -> str:
    return power_net_name(item) if item.kind == "pin" else item.text


def _multiple_names(net, graph: Connectivity, report: _Report) -> None:
    for sub in net.subgraphs:
        strong = [item for item in sub.items if driver_priority(item) >= PRIORITY_HIER_LABEL
                  and (item.kind != "pin" or item.is_global_power)]
        if len(strong) < 2:
            continue
        strong.sort(key=lambda item: (-driver_priority(item), _driver_name(item)))
        primary = strong[0]
        for other in strong[1:]:
            if _driver_name(other) != _driver_name(primary):
                report.add("multiple_net_names",
                           f"Both {_driver_name(primary)!r} and {_driver_name(other)!r} are attached to the same "
                           f"items; {_driver_name(primary)!r} will be used in the netlist",
                           [(other, sub.instance), (primary, sub.instance)])
                break


# -- wires -----------------------------------------------------------------------------

def _wire_end_rules(graph: Connectivity, report: _Report) -> None:
    first_instance = {}
    for instance in graph.instances:
        first_instance.setdefault(id(instance.screen), instance)
    for wire, point, screen in graph.dangling_wire_ends:
        instance = first_instance[id(screen)]
        report.findings.append(_at_point("unconnected_wire_endpoint", "Unconnected wire endpoint", wire, point,
                                         instance))


def _label_on_wires_rules(graph: Connectivity, report: _Report) -> None:
    """A local label in the middle of two or more wires joins them all: ``label_multiple_wires``."""
    for instance in graph.instances:
        screen = instance.screen
        labels = [item for item in screen.items if item.kind == "label"]
        if not labels:
            continue
        wires = SegmentIndex([item for item in screen.items if item.kind == "wire"])
        for label in labels:
            crossed = [wire for wire in wires.at(label.position) if label.position not in wire.points]
            if len(crossed) > 1:
                report.add("label_multiple_wires", "Label connects more than one wire",
                           [(label, instance)] + [(wire, instance) for wire in crossed[:3]], sheet_specific=True)


def _at_point(kicad_type: str, message: str, item: Item, point: tuple[int, int], instance: SheetInstance) -> Finding:
    x, y = to_mm(point[0]), to_mm(point[1])
    return Finding(rule_id(kicad_type), f"{message} at ({x:g}, {y:g}) mm (sheet {instance.path})",
                   identity=(kicad_type, instance.screen.file, item.uuid, f"{point[0]},{point[1]}"),
                   path=instance.screen.file, line=item.location.line, column=item.location.column,
                   kicad_type=kicad_type, locations=[{"x": x, "y": y, "layer": None, "uuids": [item.uuid]}],
                   extra={"x": x, "y": y, "uuids": [item.uuid], "sheet": instance.path})


def _grid_rules(graph: Connectivity, report: _Report, pro: dict) -> None:
    schematic_settings = pro.get("schematic") if isinstance(pro, dict) else None
    grid_mils = schematic_settings.get("connection_grid_size") if isinstance(schematic_settings, dict) else None
    grid_mm = grid_mils * 0.0254 if isinstance(grid_mils, (int, float)) and grid_mils > 0 else DEFAULT_GRID_MM
    grid = round(grid_mm * 10_000)
    done = set()
    for instance in graph.instances:
        screen = instance.screen
        if id(screen) in done:
            continue
        done.add(id(screen))
        placed_reported = set()
        for item in screen.items:
            if item.kind in ("wire", "bus", "bus_entry"):
                for point in item.points:
                    if point[0] % grid or point[1] % grid:
                        what = item.kind.replace("_", " ").capitalize()
                        report.findings.append(_at_point("endpoint_off_grid", f"{what} end off the connection grid",
                                                         item, point, instance))
                        break
            elif item.kind == "pin" and id(item.symbol) not in placed_reported:
                if item.position[0] % grid or item.position[1] % grid:
                    placed_reported.add(id(item.symbol))
                    report.findings.append(_at_point("endpoint_off_grid", "Symbol pin off the connection grid",
                                                     item, item.position, instance))


# -- net classes -------------------------------------------------------------------------

def _netclass_rules(graph: Connectivity, report: _Report, pro: dict) -> None:
    net_settings = pro.get("net_settings") if isinstance(pro, dict) else None
    classes = net_settings.get("classes") if isinstance(net_settings, dict) else None
    known = {"Default"}
    if isinstance(classes, list):
        known |= {c.get("name") for c in classes if isinstance(c, dict) and isinstance(c.get("name"), str)}
    done = set()
    for instance in graph.instances:
        if id(instance.screen) in done:
            continue
        done.add(id(instance.screen))
        for item in instance.screen.netclass_flags:
            if item.netclass and item.netclass not in known:
                report.add("undefined_netclass", f"Netclass {item.netclass!r} is not defined", [(item, instance)])
        for placement in instance.screen.placements:
            if placement.netclass and placement.netclass not in known:
                symbol = Item("symbol", placement.uuid, (placement.at,), placement.location)
                report.add("undefined_netclass", f"Netclass {placement.netclass!r} is not defined", [(symbol, instance)])


# -- units -------------------------------------------------------------------------------

def _unit_rules(graph: Connectivity, report: _Report, schematic) -> None:
    by_reference: dict[str, list] = defaultdict(list)
    for instance in graph.instances:
        for placement in instance.screen.placements:
            reference = graph.references.get(instance.key + placement.uuid, "")
            if not reference or reference.startswith("#") or reference.endswith("?"):
                continue
            by_reference[reference].append((placement, instance))
    footprints = {symbol.instance_path: symbol.footprint for symbol in schematic.symbols}
    for reference, units in by_reference.items():
        first_fp = None
        first = None
        for placement, instance in units:
            footprint = footprints.get(instance.key + placement.uuid, "")
            if footprint and first is None:
                first, first_fp = (placement, instance), footprint
        for placement, instance in units:
            footprint = footprints.get(instance.key + placement.uuid, "")
            # ERC_TESTER::TestMultiunitFootprints looks at multi-unit symbols only
            # (GetMultiUnitSymbols): two one-unit parts sharing a reference are another matter.
            if placement.lib.unit_count < 2:
                continue
            if first is not None and footprint and footprint != first_fp:
                _placement_finding(report, "different_unit_footprint",
                                   f"Different footprints assigned to units of {reference}: {first_fp} and {footprint}",
                                   placement, instance)
        lib = units[0][0].lib
        if len(units) == lib.unit_count:
            continue
        placed = {placement.unit for placement, _ in units}
        missing = sorted(set(range(1, lib.unit_count + 1)) - placed)
        if not missing:
            continue
        base, base_instance = units[0]
        names = ", ".join(_unit_name(u) for u in missing[:3]) + (", ....." if len(missing) > 3 else "")
        _placement_finding(report, "missing_unit", f"Symbol {reference} has unplaced units [ {names} ]",
                           base, base_instance)
        kinds = {"power_in": set(), "input": set(), "bidirectional": set()}
        for unit in missing:
            for pin in lib.pins:
                if pin.unit in (0, unit) and pin.body in (0, 1) and pin.type in kinds:
                    kinds[pin.type].add(unit)
        for pin_type, kicad_type, what in (("power_in", "missing_power_pin", "input power"),
                                           ("input", "missing_input_pin", "input"),
                                           ("bidirectional", "missing_bidi_pin", "bidirectional")):
            if kinds[pin_type]:
                units_text = ", ".join(_unit_name(u) for u in sorted(kinds[pin_type])[:3])
                _placement_finding(report, kicad_type,
                                   f"Symbol {reference} has {what} pins in units [ {units_text} ] that are not placed",
                                   base, base_instance)


def _unit_name(unit: int) -> str:
    # KiCad names units A, B, ... Z, AA, AB ...
    name = ""
    while unit > 0:
        unit, rest = divmod(unit - 1, 26)
        name = chr(ord("A") + rest) + name
    return name


# -- bus entries ------------------------------------------------------------------------

def _bus_entry_rules(graph: Connectivity, report: _Report) -> None:
    """``net_not_bus_member`` (CONNECTION_GRAPH::ercCheckBusToBusEntryConflicts): a wire joined to a
    bus through a bus entry whose net is none of the bus's members, by full name: a member's name
    carries the sheet path of what names the bus (a sheet pin: its sheet's; a global label: none),
    the wire's the path of its own labels. A net named by a power pin or global label is exempt."""
    aliases: dict[str, list[str]] = {}
    for instance in graph.instances:
        for name, members in instance.screen.bus_aliases.items():
            aliases.setdefault(name, members)
    child_path = {(id(instance.parent), instance.sheet.uuid): instance.path for instance in graph.instances
                  if instance.parent is not None and instance.sheet is not None}
    bus_index: dict[int, SegmentIndex] = {}
    for sub in graph.subgraphs:
        if sub.is_bus:
            continue
        entry = next((item for item in sub.items if item.kind == "bus_entry"), None)
        if entry is None:
            continue
        screen = sub.instance.screen
        index = bus_index.get(id(screen))
        if index is None:
            index = bus_index[id(screen)] = SegmentIndex([item for item in screen.items if item.kind == "bus"])
        bus = next((found for found in map(index.first, entry.points) if found is not None), None)
        if bus is None:
            continue
        bus_sub = graph.subgraph_of.get((id(sub.instance), id(bus)))
        named = _bus_name(bus_sub, aliases, child_path) if bus_sub is not None else None
        if named is None:
            continue        # a bus no label names has no members to be one of
        bus_name, members = named
        driver = sub.driver
        if driver is not None and driver_priority(driver) >= PRIORITY_LOCAL_POWER_PIN:
            continue
        names = {_full_name(item, sub.instance, child_path) for item in sub.items
                 if item.kind in LABEL_KINDS or item.kind == "sheet_pin"}
        if names & members:
            continue
        net = _full_name(driver, sub.instance, child_path) if driver is not None else "(unnamed net)"
        report.add("net_not_bus_member",
                   f"Net {net} is graphically connected to bus {bus_name} but is not a member of that bus",
                   [(entry, sub.instance), (bus, sub.instance)], sheet_specific=True)


def _full_name(item: Item, instance: SheetInstance, child_path: dict) -> str:
    if item.kind == "global_label" or (item.kind == "pin" and item.is_global_power):
        return item.text if item.kind == "global_label" else power_net_name(item)
    if item.kind == "sheet_pin":
        return child_path.get((id(instance), item.sheet_uuid), instance.path) + item.text
    if item.kind == "pin":
        return ""
    return instance.path + item.text


def _bus_name(bus_sub: Subgraph, aliases: dict, child_path: dict) -> tuple[str, set[str]] | None:
    """The bus's name as KiCad shows it and its members' full names, from the label that names it
    (a global label first, as KiCad's driver priority)."""
    best = None
    for item in bus_sub.items:
        if (item.kind in LABEL_KINDS or item.kind == "sheet_pin") and item.is_bus and bus_members(item.text, aliases):
            if best is None or driver_priority(item) > driver_priority(best):
                best = item
    if best is None:
        return None
    name = _full_name(best, bus_sub.instance, child_path)
    prefix = name[:len(name) - len(best.text)]
    return name, {prefix + member for _, member in bus_members(best.text, aliases)}


def _library_rules(graph: Connectivity, report: _Report, libraries: Libraries, reader) -> None:
    """``lib_symbol_mismatch``: once per placed symbol of a screen (KiCad marks the screen's symbol)."""
    seen_screens = set()
    for instance in graph.instances:
        if instance.screen.file in seen_screens:
            continue
        seen_screens.add(instance.screen.file)
        for placement in instance.screen.placements:
            if not placement.lib.signature:
                continue
            nickname, _, name = placement.lib_id.partition(":")
            symbols, installed = libraries.symbols(nickname, reader)
            library_symbol = symbols.get(name) if symbols is not None else None
            if library_symbol is None or signatures_match(placement.lib.signature, library_symbol):
                continue
            _placement_finding(report, "lib_symbol_mismatch",
                               f"Symbol '{name}' doesn't match copy in library '{nickname}'"
                               + (" (the library installed where the checker ran)" if installed else ""),
                               placement, instance, rule=rule_id("lib_symbol_mismatch") + ("-installed" if installed else ""))


def _placement_finding(report: _Report, kicad_type: str, message: str, placement, instance: SheetInstance,
                       rule: str | None = None) -> None:
    x, y = to_mm(placement.at[0]), to_mm(placement.at[1])
    key = (kicad_type, placement.uuid, instance.key)
    if key in report.seen:
        return
    report.seen.add(key)
    report.findings.append(Finding(
        rule or rule_id(kicad_type), f"{message} (sheet {instance.path})",
        identity=(kicad_type, instance.key, placement.uuid), path=instance.screen.file,
        line=placement.location.line, column=placement.location.column, kicad_type=kicad_type,
        locations=[{"x": x, "y": y, "layer": None, "uuids": [placement.uuid]}],
        extra={"x": x, "y": y, "uuids": [placement.uuid], "sheet": instance.path}))


if __name__ == "__main__":
    raise SystemExit(main())

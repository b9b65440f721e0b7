"""The schematic's connectivity, as KiCad 9's connection graph builds it.

Read from the schematic files alone (the library symbols embedded in each
file give the pins), per *screen* (one file) and then per *sheet instance*
(a file used twice is two instances with their own nets):

* items: wires, buses, bus entries, junctions, no-connect flags, local /
  global / hierarchical labels, netclass directives, sheet pins and symbol
  pins (placed by the symbol's position, rotation and mirror; a pin is in the
  placed unit and body style, or in all of them when its library unit is 0);
* a **subgraph** is what is joined by drawing on one sheet instance: items
  sharing a connection point, plus labels and sheet pins anywhere on a wire
  (KiCad attaches a label to the segment it sits on; pins and wire ends join
  only at exact points, and a wire end in the middle of another wire does not
  join it);
* a **net** is subgraphs joined by name: a local label's text on the same
  sheet instance, a global label's or global power pin's name anywhere
  (power symbols are named by their Value since KiCad 7; a hidden power input
  pin of an ordinary symbol by its pin name), a hierarchical label to the
  parent instance's sheet pin of the same name.

Coordinates are KiCad's schematic units (100 nm) as integers, so "the same
point" is exact, as in KiCad.

Buses are kept apart from wires (a bus never joins a wire's subgraph); bus
member resolution is not modelled.
"""
from __future__ import annotations

import math
import re
from bisect import bisect_right
from collections import defaultdict
from dataclasses import dataclass, field

from .erc_library import file_version, symbol_signature
from .sexpr import Label, Location, Node, Pin, Points, Wire

UNITS_PER_MM = 10_000

PIN_TYPES = ("input", "output", "bidirectional", "tri_state", "passive", "free", "unspecified",
             "power_in", "power_out", "open_collector", "open_emitter", "no_connect")
# Spellings of pin types seen outside KiCad 6-9's own writer (KiCad 5 imports, hand-written files).
_PIN_TYPE_ALIASES = {"unconnected": "no_connect", "bidi": "bidirectional", "tristate": "tri_state",
                     "openCol": "open_collector", "openEm": "open_emitter"}

LABEL_KINDS = ("label", "global_label", "hierarchical_label")
_BUS_TEXT = re.compile(r"\[\d+\.\.\d+\]|\{.*\}")
# Not bus syntax: KiCad's escapes for characters a net name cannot hold ({slash}) and text markup
# (~{overbar}, ^{superscript}, _{subscript}).
_NOT_BUS_BRACES = re.compile(r"\{(?:slash|backslash|lt|gt|colon|dblquote|quote|tab|return|space|brace|"
                             r"hash|pipe|comma|dollar|tilde|caret|underscore)\}|[~^_]\{[^{}]*\}")


_ESCAPES = {"slash": "/", "backslash": "\\", "lt": "<", "gt": ">", "colon": ":", "dblquote": '"',
            "quote": "'", "tab": "\t", "return": "\n", "space": " ", "brace": "{"}
_ESCAPE = re.compile(r"\{(" + "|".join(_ESCAPES) + r")\}")


def unescape(text: str) -> str:
    """A label's text as KiCad shows it and names its net by: ``VPP{slash}MCLR`` is ``VPP/MCLR``."""
    return _ESCAPE.sub(lambda m: _ESCAPES[m.group(1)], text) if "{" in text else text


def is_bus_text(text: str) -> bool:
    return ("[" in text or "{" in text) and bool(_BUS_TEXT.search(_NOT_BUS_BRACES.sub("", text)))


def _iu(text: str | None) -> int:
    try:
        return round(float(text) * UNITS_PER_MM)
    except (TypeError, ValueError):
        return 0


def to_mm(value: int) -> float:
    return value / UNITS_PER_MM


@dataclass(frozen=True)
class LibPin:
    unit: int                   # 0: every unit
    body: int                   # 0: every body style
    number: str
    name: str
    type: str
    x: int                      # library coordinates (Y up), schematic units
    y: int
    hidden: bool
    alternates: tuple[tuple[str, str], ...]   # (name, type)


@dataclass(frozen=True)
class LibSymbol:
    name: str
    power: bool                 # a power symbol (its pin names a global net by the Value)
    local_power: bool
    unit_count: int
    pins: tuple[LibPin, ...]
    # What KiCad's ERC compares with the library's copy (erc_library.symbol_signature)
    signature: tuple = field(default=(), compare=False, hash=False)


@dataclass(eq=False)
class Item:
    """One connectable thing on a screen (shared by every instance of the screen)."""

    kind: str                   # wire bus bus_entry junction no_connect label global_label
                                # hierarchical_label directive sheet_pin pin
    uuid: str
    points: tuple[tuple[int, int], ...]
    location: Location
    text: str = ""              # label text, sheet pin name, pin name
    # pins
    symbol: Placement | None = None
    number: str = ""
    type: str = ""
    hidden: bool = False
    # sheet pins: the sheet's uuid; directives: the netclass
    sheet_uuid: str = ""
    netclass: str = ""

    @property
    def position(self) -> tuple[int, int]:
        return self.points[0]

    @property
    def is_bus(self) -> bool:
        if self.kind == "bus":
            return True
        return self.kind in LABEL_KINDS + ("sheet_pin",) and is_bus_text(self.text)

    @property
    def is_global_power(self) -> bool:
        """KiCad's SCH_PIN::IsGlobalPower: a power input pin of a power symbol, or a hidden one."""
        return (self.kind == "pin" and self.type == "power_in" and self.symbol is not None
                and ((self.symbol.lib.power and not self.symbol.lib.local_power) or self.hidden))

    @property
    def is_power_symbol_pin(self) -> bool:
        return self.kind == "pin" and self.symbol is not None and self.symbol.lib.power


@dataclass(eq=False)
class Placement:
    """A symbol placed on a screen."""

    uuid: str
    lib_id: str
    lib: LibSymbol
    unit: int
    body: int
    value: str
    netclass: str
    location: Location
    at: tuple[int, int]
    pins: list[Item] = field(default_factory=list)


@dataclass(eq=False)
class SheetBox:
    uuid: str
    name: str
    location: Location
    position: tuple[int, int] = (0, 0)
    pins: list[Item] = field(default_factory=list)


@dataclass(eq=False)
class Screen:
    """The connectable content of one schematic file."""

    file: str
    items: list[Item] = field(default_factory=list)
    placements: list[Placement] = field(default_factory=list)
    sheets: list[SheetBox] = field(default_factory=list)
    libs: dict[str, LibSymbol] = field(default_factory=dict)
    netclass_flags: list[Item] = field(default_factory=list)
    bus_aliases: dict[str, list[str]] = field(default_factory=dict)
    placement_index: dict[str, int] | None = None      # placement uuid -> its place in placements
    pins_stale: bool = False


# -- reading ------------------------------------------------------------------------

def _at(node: Node) -> tuple[int, int, int]:
    if type(node) is Label:     # read as one node: its at's words by place
        x, y, angle = node[2], node[3], node[4]
        return _iu(x), _iu(y), round(float(angle) if _is_number(angle) else 0)
    at = node.first("at")
    if at is None:
        return 0, 0, 0
    return _iu(at.atom(0)), _iu(at.atom(1)), round(float(at.atom(2) or 0) if _is_number(at.atom(2)) else 0)


def _is_number(text: str | None) -> bool:
    try:
        float(text)  # type: ignore[arg-type]
        return True
    except (TypeError, ValueError):
        return False


def _points(node: Node) -> list[tuple[int, int]]:
    if type(node) is Wire:      # read as one node: its two points by place
        return [(_iu(node[1]), _iu(node[2])), (_iu(node[3]), _iu(node[4]))]
    pts = node.first("pts")
    if pts is None:
        return []
    if isinstance(pts, Points):
        return [(round(x * UNITS_PER_MM), round(y * UNITS_PER_MM)) for x, y in pts.array.tolist()]
    return [(_iu(xy.atom(0)), _iu(xy.atom(1))) for xy in pts.nodes("xy")]


def _pin_type(text: str | None) -> str:
    text = text or "unspecified"
    text = _PIN_TYPE_ALIASES.get(text, text)
    return text if text in PIN_TYPES else "unspecified"


def read_lib_symbols(file_node: Node) -> dict[str, LibSymbol]:
    libs: dict[str, LibSymbol] = {}
    block = file_node.first("lib_symbols")
    if block is None:
        return libs
    version = file_version(file_node)
    for definition in block.nodes("symbol"):
        name = definition.atom(0) or ""
        power_node = definition.first("power")
        power = power_node is not None or bool(definition.flag("power"))
        local_power = power_node is not None and power_node.atom(0) == "local"
        pins: list[LibPin] = []
        units: set[int] = set()
        for sub in definition.nodes("symbol"):
            parts = (sub.atom(0) or "").rsplit("_", 2)
            unit = int(parts[1]) if len(parts) == 3 and parts[1].isdigit() else 0
            body = int(parts[2]) if len(parts) == 3 and parts[2].isdigit() else 0
            if unit:
                units.add(unit)
            for pin in sub.nodes("pin"):
                pins.append(_lib_pin(pin, unit, body))
        for pin in definition.nodes("pin"):
            pins.append(_lib_pin(pin, 0, 0))
        libs[name] = LibSymbol(name=name, power=power, local_power=local_power,
                               unit_count=max(units) if units else 1, pins=tuple(pins),
                               signature=symbol_signature(definition, embedded=True, version=version))
    return libs


def _lib_pin(pin: Node, unit: int, body: int) -> LibPin:
    if type(pin) is Pin:    # read as one node: its words by place
        _, kind, shape, x, y, angle, _, hide, name, _, number, _, _, _ = pin
        # pin.flag("hide"): a bare atom "hide" first, else the (hide ..) list's word.
        hidden = True if "hide" in (kind, shape) else hide in ("yes", "true")
        return LibPin(unit=unit, body=body, number=number, name=name, type=_pin_type(kind), x=_iu(x), y=_iu(y),
                      hidden=hidden, alternates=())
    x, y, _ = _at(pin)
    name_node, number_node = pin.first("name"), pin.first("number")
    alternates = tuple((alt.atom(0) or "", _pin_type(alt.atom(1))) for alt in pin.nodes("alternate"))
    return LibPin(unit=unit, body=body, number=(number_node.atom(0) if number_node else "") or "",
                  name=(name_node.atom(0) if name_node else "") or "", type=_pin_type(pin.atom(0)),
                  x=x, y=y, hidden=bool(pin.flag("hide")), alternates=alternates)


def _transform(px: int, py: int, angle: int, mirror: str | None) -> tuple[int, int]:
    """Library point (Y up) to the symbol's frame on the sheet (Y down): rotate, then mirror."""
    x, y = px, -py
    angle %= 360
    if angle == 90:
        x, y = y, -x
    elif angle == 180:
        x, y = -x, -y
    elif angle == 270:
        x, y = -y, x
    if mirror == "x":
        y = -y
    elif mirror == "y":
        x = -x
    return x, y


_EMPTY_LIB = LibSymbol(name="", power=False, local_power=False, unit_count=1, pins=())


# Files older than this name a power symbol's net by its pin; KiCad 9 loads them so
# (SCH_SCREEN::FixLegacyPowerSymbolMismatches sets the Value to the pin name).
POWER_VALUE_NAMES_FROM = 20230221


def read_screen(file_node: Node, rel: str) -> Screen:
    screen = Screen(file=rel, libs=read_lib_symbols(file_node))
    version = _int(file_node.value("version"), POWER_VALUE_NAMES_FROM)
    legacy_power = version < POWER_VALUE_NAMES_FROM
    items = screen.items
    for child in file_node.nodes():
        kind = child[0]
        if kind == "wire" or kind == "bus":
            points = _points(child)
            if len(points) >= 2:
                items.append(Item(kind, child.value("uuid") or "", (points[0], points[-1]), child.location))
        elif kind == "junction" or kind == "no_connect":
            x, y, _ = _at(child)
            items.append(Item(kind, child.value("uuid") or "", ((x, y),), child.location))
        elif kind in LABEL_KINDS:
            x, y, _ = _at(child)
            label = Item(kind, child.value("uuid") or "", ((x, y),), child.location,
                         text=unescape(child.atom(0) or ""), netclass=_netclass_field(child))
            items.append(label)
            if label.netclass:
                screen.netclass_flags.append(label)
        elif kind == "netclass_flag" or kind == "directive_label":
            x, y, _ = _at(child)
            item = Item("directive", child.value("uuid") or "", ((x, y),), child.location,
                        netclass=_netclass_field(child))
            items.append(item)
            screen.netclass_flags.append(item)
        elif kind == "bus_alias":
            members = child.first("members")
            screen.bus_aliases[child.atom(0) or ""] = members.atoms() if members is not None else []
        elif kind == "bus_entry":
            x, y, _ = _at(child)
            size = child.first("size")
            dx, dy = (_iu(size.atom(0)), _iu(size.atom(1))) if size is not None else (0, 0)
            items.append(Item(kind, child.value("uuid") or "", ((x, y), (x + dx, y + dy)), child.location))
        elif kind == "sheet":
            screen.sheets.append(_sheet(child, items))
        elif kind == "symbol":
            placement = _placement(child, screen.libs)
            if placement is not None:
                if legacy_power and placement.lib.power and placement.pins:
                    placement.value = placement.pins[0].text
                screen.placements.append(placement)
                items.extend(placement.pins)
    return screen


def _netclass_field(node: Node) -> str:
    """The Netclass field a directive, label or symbol carries ("" when none)."""
    for prop in node.nodes("property"):
        if (prop.atom(0) or "").lower() == "netclass":
            return prop.atom(1) or ""
    return ""


def _sheet(node: Node, items: list[Item]) -> SheetBox:
    uuid = node.value("uuid") or ""
    name = ""
    for prop in node.nodes("property"):
        if prop.atom(0) in ("Sheetname", "Sheet name") or prop.value("id") == "0":
            name = prop.atom(1) or ""
            break
    x, y, _ = _at(node)
    box = SheetBox(uuid=uuid, name=name, location=node.location, position=(x, y))
    for pin in node.nodes("pin"):
        x, y, _ = _at(pin)
        item = Item("sheet_pin", pin.value("uuid") or "", ((x, y),), pin.location, text=unescape(pin.atom(0) or ""),
                    sheet_uuid=uuid, type=pin.atom(1) or "")
        box.pins.append(item)
        items.append(item)
    return box


def place_unit(screen: Screen, node: Node, unit: int) -> None:
    """The unit a symbol instance really places, when the hierarchy says another than the symbol's own
    ``(unit)`` (KiCad 6 keeps it in the root's symbol_instances): its pins are that unit's."""
    if screen.placement_index is None:
        screen.placement_index = {placement.uuid: index for index, placement in enumerate(screen.placements)}
    index = screen.placement_index.get(node.value("uuid") or "")
    if index is None or screen.placements[index].unit == unit:
        return
    screen.placements[index] = _placement(node, screen.libs, unit)
    screen.pins_stale = True


def refresh_pins(screen: Screen) -> None:
    """After ``place_unit``: the screen's pins are its placements' (one pass, however many changed)."""
    if screen.pins_stale:
        screen.items = [item for item in screen.items if item.kind != "pin"] + [
            pin for placement in screen.placements for pin in placement.pins]
        screen.pins_stale = False


def _placement(node: Node, libs: dict[str, LibSymbol], unit: int | None = None) -> Placement | None:
    lib_id = node.value("lib_id") or ""
    lib = libs.get(node.value("lib_name") or lib_id) or libs.get(lib_id) or _EMPTY_LIB
    x, y, angle = _at(node)
    unit = unit if unit is not None else _int(node.value("unit"), 1)
    body = _int(node.value("body_style") or node.value("convert"), 1)
    fields = {}
    for prop in node.nodes("property"):
        if prop.atom(0) is not None:
            fields[prop.atom(0)] = prop.atom(1) or ""
    placement = Placement(uuid=node.value("uuid") or "", lib_id=lib_id, lib=lib, unit=unit, body=body,
                          value=fields.get("Value", ""), netclass=fields.get("Netclass", ""),
                          location=node.location, at=(x, y))
    mirror = node.value("mirror")
    instance_pins: dict[str, list[Node]] = defaultdict(list)
    for pin in node.nodes("pin"):
        instance_pins[pin.atom(0) or ""].append(pin)
    for lib_pin in lib.pins:
        if lib_pin.unit not in (0, unit) or lib_pin.body not in (0, body):
            continue
        dx, dy = _transform(lib_pin.x, lib_pin.y, angle, mirror)
        pin_nodes = instance_pins.get(lib_pin.number)
        pin_node = pin_nodes.pop(0) if pin_nodes else None
        pin_type, name = lib_pin.type, lib_pin.name
        if pin_node is not None:
            alternate = pin_node.value("alternate")
            for alt_name, alt_type in lib_pin.alternates:
                if alt_name == alternate:
                    pin_type, name = alt_type, alt_name
        placement.pins.append(Item("pin", (pin_node.value("uuid") if pin_node is not None else "") or "",
                                   ((x + dx, y + dy),), pin_node.location if pin_node is not None else node.location,
                                   text=name, symbol=placement, number=lib_pin.number, type=pin_type,
                                   hidden=lib_pin.hidden))
    return placement


def _int(text: str | None, default: int) -> int:
    try:
        return int(text) if text is not None else default
    except ValueError:
        return default


# -- the graph --------------------------------------------------------------------

@dataclass(eq=False)
class SheetInstance:
    """One use of a screen: its sheet-uuid chain from the root, its human path."""

    chain: tuple[str, ...]
    path: str                   # "/" for the root, "/power/" below
    screen: Screen
    parent: SheetInstance | None = None
    sheet: SheetBox | None = None          # the sheet symbol in the parent that places it

    @property
    def key(self) -> str:
        return "/" + "".join(part + "/" for part in self.chain)


@dataclass(eq=False)
class Subgraph:
    instance: SheetInstance
    items: list[Item]
    net: Net | None = None

    def of_kind(self, *kinds: str) -> list[Item]:
        return [item for item in self.items if item.kind in kinds]

    @property
    def pins(self) -> list[Item]:
        return [item for item in self.items if item.kind == "pin"]

    @property
    def no_connect(self) -> Item | None:
        for item in self.items:
            if item.kind == "no_connect":
                return item
        return None

    @property
    def is_bus(self) -> bool:
        """What the subgraph's driver is (its strongest label or pin), else whether it has a bus wire."""
        driver = self.driver
        if driver is not None:
            return driver.is_bus
        return any(item.kind == "bus" for item in self.items)

    @property
    def driver(self) -> Item | None:
        best, best_priority = None, PRIORITY_PIN
        for item in self.items:
            priority = driver_priority(item)
            if priority > best_priority:
                best, best_priority = item, priority
        return best


# KiCad's CONNECTION_SUBGRAPH::PRIORITY
PRIORITY_NONE, PRIORITY_PIN, PRIORITY_SHEET_PIN, PRIORITY_HIER_LABEL, PRIORITY_LOCAL_LABEL, \
    PRIORITY_LOCAL_POWER_PIN, PRIORITY_GLOBAL_POWER_PIN, PRIORITY_GLOBAL = range(8)


def driver_priority(item: Item) -> int:
    kind = item.kind
    if kind == "global_label":
        return PRIORITY_GLOBAL
    if kind == "label":
        return PRIORITY_LOCAL_LABEL
    if kind == "hierarchical_label":
        return PRIORITY_HIER_LABEL
    if kind == "sheet_pin":
        return PRIORITY_SHEET_PIN
    if kind == "pin":
        if item.is_global_power:
            return PRIORITY_GLOBAL_POWER_PIN
        if item.symbol is not None and item.symbol.lib.local_power and item.type == "power_in":
            return PRIORITY_LOCAL_POWER_PIN
        return PRIORITY_PIN
    return PRIORITY_NONE


def power_net_name(item: Item) -> str:
    """The global net a power pin names: a power symbol's Value, else the hidden pin's name."""
    if item.symbol is not None and item.symbol.lib.power:
        return item.symbol.value or item.text
    return item.text


@dataclass(eq=False)
class Net:
    code: int
    subgraphs: list[Subgraph] = field(default_factory=list)
    name: str = ""
    summary: tuple[int, bool] | None = None      # (pins, has a no-connect flag), computed once by the ERC
    pins_and_labels: tuple[int, int] | None = None  # (distinct pins, labels), computed once by the ERC

    @property
    def pins(self) -> list[tuple[Item, SheetInstance]]:
        return [(item, sub.instance) for sub in self.subgraphs for item in sub.items if item.kind == "pin"]


@dataclass
class Connectivity:
    instances: list[SheetInstance]
    subgraphs: list[Subgraph]
    nets: list[Net]
    subgraph_of: dict[tuple[int, int], Subgraph]     # (id(instance), id(item)) -> subgraph
    dangling: set[int]                                # id(item) of labels / sheet pins not on anything
    dangling_wire_ends: list[tuple[Item, tuple[int, int], Screen]]
    references: dict[str, str]                        # instance path ("/chain/uuid") -> reference

    def reference(self, item: Item, instance: SheetInstance) -> str:
        if item.symbol is None:
            return ""
        return self.references.get(instance.key + item.symbol.uuid, "")


class _UnionFind:
    def __init__(self, size: int):
        self.parent = list(range(size))

    def find(self, i: int) -> int:
        parent = self.parent
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    def union(self, a: int, b: int) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[max(ra, rb)] = min(ra, rb)


def _on_segment(point: tuple[int, int], a: tuple[int, int], b: tuple[int, int]) -> bool:
    (px, py), (ax, ay), (bx, by) = point, a, b
    if not (min(ax, bx) - 1 <= px <= max(ax, bx) + 1 and min(ay, by) - 1 <= py <= max(ay, by) + 1):
        return False
    cross = (bx - ax) * (py - ay) - (by - ay) * (px - ax)
    length = max(abs(bx - ax), abs(by - ay), 1)
    return abs(cross) <= length      # within about one unit of the line, as KiCad's accuracy of 1


class _Line:
    """The segments along one horizontal or vertical line, sorted by where they start, with the
    farthest end reached so far: whether any covers a point is a binary search."""

    __slots__ = ("starts", "segments", "ends", "reach", "reach_at")

    def __init__(self, spans: list[tuple[int, int, Item]]):
        spans.sort(key=lambda span: span[0])
        self.starts = [start for start, _, _ in spans]
        self.ends = [end for _, end, _ in spans]
        self.segments = [segment for _, _, segment in spans]
        self.reach, self.reach_at = [], []
        best, best_at = None, -1
        for index, end in enumerate(self.ends):
            if best is None or end > best:
                best, best_at = end, index
            self.reach.append(best)
            self.reach_at.append(best_at)

    def first(self, along: int) -> Item | None:
        count = bisect_right(self.starts, along)
        if count and self.reach[count - 1] >= along:
            return self.segments[self.reach_at[count - 1]]
        return None

    def all(self, along: int, limit: int) -> list[Item]:
        found = []
        if self.first(along) is None:
            return found
        for index in range(bisect_right(self.starts, along) - 1, -1, -1):
            if self.ends[index] >= along:
                found.append(self.segments[index])
                if len(found) >= limit:
                    break
        return found


class _Diagonals:
    """The segments that are neither horizontal nor vertical, bucketed in a grid of cells along
    each segment (not its bounding box), so a point is tested against the few segments crossing
    its cell, not all of them: a hostile file with many slanted wires stays linear. The cell size
    grows with the segments' total length, keeping the buckets about 4 per segment; candidates
    come back in file order, as KiCad attaches a label to the first wire it finds."""

    __slots__ = ("segments", "cell", "cells")
    MIN_CELL = 12700            # 1.27 mm

    def __init__(self, segments: list[Item]):
        self.segments = segments
        total = sum(max(abs(s.points[1][0] - s.points[0][0]), abs(s.points[1][1] - s.points[0][1]))
                    for s in segments)
        self.cell = max(self.MIN_CELL, total // (4 * len(segments)) + 1) if segments else self.MIN_CELL
        self.cells: dict[tuple[int, int], list[int]] = defaultdict(list)
        for index, segment in enumerate(segments):
            for key in self._cells_along(segment.points[0], segment.points[1]):
                self.cells[key].append(index)

    def _cells_along(self, a: tuple[int, int], b: tuple[int, int]) -> set[tuple[int, int]]:
        """Every cell the segment passes within one unit of (column by column)."""
        cell = self.cell
        (ax, ay), (bx, by) = (a, b) if a[0] <= b[0] else (b, a)
        slope = (by - ay) / (bx - ax)
        keys = set()
        for column in range((ax - 1) // cell, (bx + 1) // cell + 1):
            x_low, x_high = max(ax, column * cell - 1), min(bx, (column + 1) * cell + 1)
            y_a, y_b = ay + slope * (x_low - ax), ay + slope * (x_high - ax)
            for row in range(math.floor(min(y_a, y_b) - 1) // cell, math.ceil(max(y_a, y_b) + 1) // cell + 1):
                keys.add((column, row))
        return keys

    def near(self, point: tuple[int, int]) -> list[Item]:
        """The segments that may pass within one unit of ``point``, in file order."""
        if not self.segments:
            return []
        x, y, cell = point[0], point[1], self.cell
        found: set[int] = set()
        for key in {((x - 1) // cell, (y - 1) // cell), ((x + 1) // cell, (y - 1) // cell),
                    ((x - 1) // cell, (y + 1) // cell), ((x + 1) // cell, (y + 1) // cell)}:
            found.update(self.cells.get(key, ()))
        return [self.segments[index] for index in sorted(found)]


class SegmentIndex:
    """Wires (or buses) of a screen, found by a point lying on them."""

    def __init__(self, segments: list[Item]):
        horizontal: dict[int, list] = defaultdict(list)
        vertical: dict[int, list] = defaultdict(list)
        self.other: list[Item] = []
        for segment in segments:
            (ax, ay), (bx, by) = segment.points
            if ay == by:
                horizontal[ay].append((min(ax, bx), max(ax, bx), segment))
            elif ax == bx:
                vertical[ax].append((min(ay, by), max(ay, by), segment))
            else:
                self.other.append(segment)
        self.horizontal = {y: _Line(spans) for y, spans in horizontal.items()}
        self.vertical = {x: _Line(spans) for x, spans in vertical.items()}
        self.diagonals = _Diagonals(self.other)

    def first(self, point: tuple[int, int]) -> Item | None:
        """One segment the point lies on (KiCad attaches a label to one), or None."""
        x, y = point
        line = self.horizontal.get(y)
        found = line.first(x) if line is not None else None
        if found is None:
            line = self.vertical.get(x)
            found = line.first(y) if line is not None else None
        if found is None and self.other:
            found = next((segment for segment in self.diagonals.near(point) if _on_segment(point, *segment.points)),
                         None)
        return found

    def at(self, point: tuple[int, int], limit: int = 8) -> list[Item]:
        """Up to ``limit`` segments the point lies on."""
        x, y = point
        found: list[Item] = []
        line = self.horizontal.get(y)
        if line is not None:
            found += line.all(x, limit)
        line = self.vertical.get(x)
        if line is not None and len(found) < limit:
            found += line.all(y, limit - len(found))
        if self.other and len(found) < limit:
            for segment in self.diagonals.near(point):
                if _on_segment(point, *segment.points):
                    found.append(segment)
                    if len(found) >= limit:
                        break
        return found


_ATTACHING = frozenset(("pin", "label", "global_label", "hierarchical_label", "sheet_pin", "no_connect"))


@dataclass
class _ScreenShape:
    """What one screen's drawing joins, computed once per screen and reused by its instances."""

    groups: list[list[Item]]
    dangling: set[int]
    dangling_wire_ends: list[tuple[Item, tuple[int, int]]]


def _screen_shape(screen: Screen) -> _ScreenShape:
    items = screen.items
    index_of = {id(item): i for i, item in enumerate(items)}
    uf = _UnionFind(len(items))
    at_point: dict[tuple[int, int], list[Item]] = defaultdict(list)
    for item in items:
        for point in item.points:
            at_point[point].append(item)
    wires = SegmentIndex([item for item in items if item.kind == "wire"])
    buses = SegmentIndex([item for item in items if item.kind == "bus"])
    # A bus entry's end on a bus (anywhere along it) is its bus side: members join by name there, not by
    # drawing, so two entries meeting on a bus stay apart.
    bus_side = {(id(item), point) for item in items if item.kind == "bus_entry"
                for point in item.points if buses.first(point) is not None}
    # Items sharing a point join, a bus only with bus things.
    for point, here in at_point.items():
        if len(here) < 2:
            continue
        first_net = first_bus = None
        for item in here:
            if item.kind == "bus":
                if first_bus is None:
                    first_bus = item
                else:
                    uf.union(index_of[id(first_bus)], index_of[id(item)])
            elif item.kind == "bus_entry" and (id(item), point) in bus_side:
                continue
            else:
                if first_net is None:
                    first_net = item
                else:
                    uf.union(index_of[id(first_net)], index_of[id(item)])
    dangling: set[int] = set()
    label_like = [item for item in items if item.kind in LABEL_KINDS or item.kind == "sheet_pin"]
    attaching: dict[tuple[int, int], int] = defaultdict(int)
    for item in items:
        if item.kind in _ATTACHING:
            attaching[item.points[0]] += 1
    for item in label_like:
        point = item.position
        on_wire = wires.first(point)
        on_bus = buses.first(point)
        # A label joins what it sits on, a wire or a bus, even the wrong kind for its text (KiCad then
        # reports bus_to_net_conflict); one of each, as KiCad attaches it to the first it finds.
        for segment in (on_wire, on_bus):
            if segment is not None:
                uf.union(index_of[id(item)], index_of[id(segment)])
        # Another pin, label, sheet pin or no-connect flag at the very point (the label is one of them).
        others = attaching.get(point, 0) - 1
        if not others and on_wire is None and on_bus is None:
            dangling.add(id(item))
    ends: list[tuple[Item, tuple[int, int]]] = []
    not_bus = {point: sum(1 for other in here if other.kind != "bus") for point, here in at_point.items()}
    for item in items:
        if item.kind != "wire":
            continue
        for point in item.points:
            if not_bus[point] - item.points.count(point) <= 0:     # nothing else but buses touches it
                ends.append((item, point))
    groups: dict[int, list[Item]] = defaultdict(list)
    for i, item in enumerate(items):
        groups[uf.find(i)].append(item)
    return _ScreenShape(groups=list(groups.values()), dangling=dangling, dangling_wire_ends=ends)


class _KeyedUnion:
    """Union-find over subgraph numbers and name keys."""

    def __init__(self):
        self.parent: dict = {}

    def add(self, node) -> None:
        self.parent.setdefault(node, node)

    def find(self, node):
        parent = self.parent
        parent.setdefault(node, node)
        root = node
        while parent[root] != root:
            root = parent[root]
        while parent[node] != root:
            parent[node], node = root, parent[node]
        return root

    def union(self, a, b) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            # A subgraph number stays the root when there is one: roots name nets.
            if isinstance(rb, int) and (not isinstance(ra, int) or rb < ra):
                ra, rb = rb, ra
            self.parent[rb] = ra


def _name_key(item: Item, instance: SheetInstance, child_of: dict) -> tuple | None:
    # Local names are qualified by the sheet's path of names, as KiCad names the net
    # (/SHEET/LABEL): two sheets of one parent named alike (duplicate_sheet_names) share their
    # local nets, as kicad-cli 9.0.8 merges them (corpus hellen-ep91-starlet: a pin conflict
    # between the two instances of one symbol).
    kind = item.kind
    if kind == "label":
        return ("local", instance.path, item.text)
    if kind == "global_label":
        return ("global", item.text)
    if kind == "pin":
        return ("global", power_net_name(item)) if item.is_global_power else None
    # A hierarchical label names its net like a local label of its sheet (/sheet/NAME),
    # so the two join by name; a sheet pin reaches the labels of its sheet's instance.
    if kind == "hierarchical_label":
        return ("local", instance.path, item.text)
    if kind == "sheet_pin":
        child = child_of.get((id(instance), item.sheet_uuid))
        return ("local", child.path, item.text) if child is not None else None
    return None


_VECTOR = re.compile(r"^(.*?)\[(\d+)\.\.(\d+)\](.*)$")
_GROUP = re.compile(r"^([^{]*)\{(.*)\}$")
MAX_BUS_MEMBERS = 1024


def bus_members(text: str, aliases: dict[str, list[str]] | None = None, depth: int = 0) -> list[tuple[object, str]]:
    """(match key, member net name) of a bus label: ``D[0..7]`` (keys: places in the range), ``{SDA SCL}`` or
    ``I2C{SDA SCL}`` (members ``I2C.SDA``...; keys: the names without the prefix), a bus alias in braces
    expanded to its members."""
    aliases = aliases or {}
    vector = _VECTOR.match(text)
    if vector and "{" not in text:
        prefix, first, last, suffix = vector.group(1), int(vector.group(2)), int(vector.group(3)), vector.group(4)
        low, high = min(first, last), max(first, last)
        if high - low >= MAX_BUS_MEMBERS:
            return []
        numbers = range(first, last + 1) if first <= last else range(first, last - 1, -1)
        return [(ordinal, f"{prefix}{n}{suffix}") for ordinal, n in enumerate(numbers)]
    group = _GROUP.match(text)
    if group is None or depth > 4:
        return []
    prefix = group.group(1)
    found: list[tuple[object, str]] = []
    for part in group.group(2).replace(",", " ").split():
        if part in aliases:
            names = [name for alias_member in aliases[part]
                     for _, name in (bus_members(alias_member, aliases, depth + 1) or [(alias_member, alias_member)])]
        else:
            names = [name for _, name in (bus_members(part, aliases, depth + 1) or [(part, part)])]
        for name in names:
            found.append((name, f"{prefix}.{name}" if prefix else name))
            if len(found) >= MAX_BUS_MEMBERS:
                return found
    return found


def _bus_members(sub: Subgraph, aliases: dict[str, list[str]]) -> list[tuple[object, str]]:
    if not any(item.kind == "bus" for item in sub.items):
        return []
    for kind in ("global_label", "label", "hierarchical_label", "sheet_pin"):
        for item in sub.items:
            if item.kind == kind and item.is_bus:
                members = bus_members(item.text, aliases)
                if members:
                    return members
    return []


def build(screens: dict[str, Screen], instances: list[SheetInstance], references: dict[str, str]) -> Connectivity:
    shapes: dict[int, _ScreenShape] = {}
    subgraphs: list[Subgraph] = []
    subgraph_of: dict[tuple[int, int], Subgraph] = {}
    for instance in instances:
        shape = shapes.get(id(instance.screen))
        if shape is None:
            shape = shapes[id(instance.screen)] = _screen_shape(instance.screen)
        for group in shape.groups:
            sub = Subgraph(instance=instance, items=group)
            subgraphs.append(sub)
            for item in group:
                subgraph_of[(id(instance), id(item))] = sub
    # Nets: subgraphs joined by name, then bus members joined through their buses.
    uf = _KeyedUnion()
    child_of: dict[tuple[int, str], SheetInstance] = {}
    for instance in instances:
        if instance.parent is not None and instance.sheet is not None:
            child_of[(id(instance.parent), instance.sheet.uuid)] = instance
    for i, sub in enumerate(subgraphs):
        instance = sub.instance
        uf.add(i)
        for item in sub.items:
            key = _name_key(item, instance, child_of)
            if key is not None:
                uf.union(i, key)
    # A local label named as a power net that a power symbol of the same sheet instance drives is
    # that net (kicad-cli 9.0.8 on the corpus entry keyboard-labs-keyboard-wabble-60: a "GND"
    # label joins the GND power symbols, a "VBUS" label the VBUS one; cut erc-label-power-net).
    power_here: dict[int, set[str]] = defaultdict(set)
    labels_here: dict[int, set[str]] = defaultdict(set)
    for sub in subgraphs:
        for item in sub.items:
            if item.kind == "pin" and item.is_global_power:
                power_here[id(sub.instance)].add(power_net_name(item))
            elif item.kind == "label":
                labels_here[id(sub.instance)].add(item.text)
    for instance in instances:
        for name in power_here[id(instance)] & labels_here[id(instance)]:
            uf.union(("local", instance.path, name), ("global", name))
    aliases: dict[str, list[str]] = {}
    for screen in screens.values():
        for name, members in screen.bus_aliases.items():
            aliases.setdefault(name, members)
    # A bus's members come from any label of its bus net; every piece of the bus on every sheet
    # instance carries them (a bus drawn in pieces is labelled once).
    members_of: dict = {}
    for i, sub in enumerate(subgraphs):
        members = _bus_members(sub, aliases)
        if members:
            members_of.setdefault(uf.find(i), members)
    # Vector members pair by their place in the range (a sheet's D[0..7] can be its parent's
    # D[16..23]), group members by name; a piece with its own label names its members itself.
    joins = []
    for i, sub in enumerate(subgraphs):
        if not any(item.kind == "bus" for item in sub.items):
            continue
        bus_net = uf.find(i)
        for key, member in _bus_members(sub, aliases) or members_of.get(bus_net, ()):
            joins.append((("local", sub.instance.path, member), ("member", bus_net, key)))
    for local, member in joins:
        uf.union(local, member)
    nets_by_root: dict[int, Net] = {}
    nets: list[Net] = []
    for i, sub in enumerate(subgraphs):
        root = uf.find(i)
        net = nets_by_root.get(root)
        if net is None:
            net = nets_by_root[root] = Net(code=len(nets) + 1)
            nets.append(net)
        net.subgraphs.append(sub)
        sub.net = net
    dangling: set[int] = set()
    ends: list[tuple[Item, tuple[int, int], Screen]] = []
    for screen_id, shape in shapes.items():
        dangling |= shape.dangling
        screen = next(inst.screen for inst in instances if id(inst.screen) == screen_id)
        ends += [(item, point, screen) for item, point in shape.dangling_wire_ends]
    return Connectivity(instances=instances, subgraphs=subgraphs, nets=nets, subgraph_of=subgraph_of,
                        dangling=dangling, dangling_wire_ends=ends, references=references)

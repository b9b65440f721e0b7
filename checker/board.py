"""The board: footprints and their pads, tracks, arcs, vias, the Edge.Cuts outline, zones
and the board-level settings the copper rules need (layer stack, edge connector).

Layers are matched by *name* everywhere: KiCad 9 renumbered the layer table
(B.Cu is 2, not 31), so ordinal numbers mean different layers in different
files. KiCad 5 boards use ``module`` instead of ``footprint`` and centre/angle
arcs; both are read, and the board is flagged legacy.

Zone fills are most of a large board's text (80 000 points on a 4 MB board):
their points go straight from the parsed atoms into numpy arrays in C
(``np.fromiter``) rather than through a Python tuple per point.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import chain
from operator import itemgetter
from pathlib import Path

import numpy as np

from .errors import NotKicadFile
from .geometry import ARC_TOLERANCE_MM, Point, arc_from_center, arc_through, rotate
from .project import InputReader
from .sexpr import FootprintLine, Located, Location, Node, Points, Segment, to_float
from .versions import parse_version

# Board format 20220211: KiCad stops reading or writing KiCad 5's zone fill strategy.
V5_FILL_DROPPED = 20220211

EDGE_LAYER = "Edge.Cuts"
_XY = itemgetter(1, 2)
_NAME = itemgetter(0)


@dataclass
class Primitive:
    """One drawn shape of a custom pad, in the pad's own frame (unrotated, at 0,0)."""

    kind: str               # poly, line, circle, arc, rect
    points: list[Point]     # poly/rect corners, line ends, arc samples; circle: centre then a rim point
    width: float            # stroke width; 0 for a filled shape without outline
    filled: bool


@dataclass(eq=False)
class Pad(Located):
    number: str
    x: float
    y: float
    width: float
    height: float
    rotation: float         # absolute: KiCad 6+ write the footprint's rotation into the pad's
    shape: str              # circle, oval, rect, roundrect, trapezoid, custom
    drill: float | None     # the smaller drill dimension; None for SMD pads
    net: str
    layers: list[str]
    kind: str = "smd"       # smd, thru_hole, np_thru_hole, connect (edge connector)
    corner_ratio: float = 0.0   # roundrect: corner radius / the smaller side
    drill_size: tuple[float, float] | None = None   # (x, y) of the hole; oval when they differ
    drill_offset: Point = (0.0, 0.0)
    chamfer_ratio: float = 0.0
    chamfer: frozenset[str] = frozenset()           # top_left, top_right, bottom_left, bottom_right
    delta: Point = (0.0, 0.0)                       # trapezoid rect_delta
    anchor: str = "circle"                          # custom pads: the anchor's shape
    primitives: list[Primitive] = field(default_factory=list)
    clearance: float | None = None                  # local clearance override
    castellated: bool = False
    # KiCad's "remove unused layers": the pad is flashed only where something connects
    # (and on the outer layers when "keep end layers" is set); we take the outer ones.
    unused_layers_removed: bool = False
    end_layers_kept: bool = True
    # KiCad 9 saves the layers where its zone filler flashed the pad for a zone of its net.
    zone_layers: list[str] = field(default_factory=list)
    properties: frozenset[str] = frozenset()        # pad_prop_heatsink, pad_prop_fiducial_glbl, ...
    mask_margin: float | None = None                # solder_mask_margin: the pad's own
    zone_connect: int | None = None     # 0 none, 1 thermal, 2 solid, 3 thermal for THT only; None: inherit
    thermal_gap: float | None = None
    pin_type: str = ""                  # the schematic pin's electrical type (pintype), KiCad 6+
    uuid: str = ""
    location: Location | None = field(default=None, repr=False)


@dataclass(eq=False)
class Footprint(Located):
    reference: str
    value: str
    lib_id: str
    uuid: str
    sheet_link: str         # the (path ...) linking it to a schematic symbol instance
    x: float
    y: float
    rotation: float
    layer: str
    attributes: set[str]
    pads: list[Pad]
    location: Location = field(repr=False)
    description: str = ""
    tags: str = ""
    clearance: float | None = None                  # local clearance for all its pads
    net_tie: bool = False
    zone_connect: int | None = None                 # its pads' zone connection unless they set one
    thermal_gap: float | None = None
    # KiCad 7+ net ties: the groups of pad numbers its copper may join (net_tie_pad_groups).
    net_tie_groups: list[frozenset[str]] = field(default_factory=list)
    mask_margin: float | None = None                # solder_mask_margin for its pads
    # Courtyard outlines (board coordinates) per side, "F.CrtYd" / "B.CrtYd": polylines of its shapes.
    courtyards: dict[str, list[list[Point]]] = field(default_factory=dict)


@dataclass(eq=False)
class Track(Located):
    kind: str               # segment or arc
    points: list[Point]     # start, (arc samples,) end
    width: float
    layer: str
    net: str
    uuid: str
    location: Location = field(repr=False)


@dataclass(eq=False)
class Via(Located):
    x: float
    y: float
    diameter: float | None
    drill: float | None
    net: str
    uuid: str
    layers: list[str]
    location: Location = field(repr=False)
    via_type: str = "through"   # through, blind (blind or buried), micro
    # KiCad's "remove unused layers": flashed only where something of its net connects,
    # on its two end layers when "keep end layers" is set, and (KiCad 9) on the layers
    # its zone filler saved in (zone_layer_connections ...).
    unused_layers_removed: bool = False
    end_layers_kept: bool = False
    zone_layers: list[str] = field(default_factory=list)


@dataclass(eq=False)
class EdgeItem(Located):
    kind: str               # gr_line, gr_arc, gr_circle, gr_rect, gr_poly, fp_* (inside a footprint)
    points: list[Point]     # polyline through the item
    closed: bool            # circles, rectangles and polygons close themselves
    uuid: str
    owner: str              # footprint reference when drawn inside one
    location: Location = field(repr=False)


@dataclass(eq=False)
class CopperShape(Located):
    """A drawn shape on a copper layer (gr_* on the board, fp_* in a footprint): copper, with
    the board's net it carries (KiCad 8+), none in a footprint."""

    kind: str               # line, arc, circle, rect, poly, curve
    layer: str
    points: list[Point]     # polyline through it (closed shapes end where they start)
    width: float            # stroke width
    filled: bool
    net: str
    uuid: str
    footprint: Footprint | None
    location: Location = field(repr=False)


@dataclass(eq=False)
class SilkText(Located):
    """A visible text on F.SilkS / B.SilkS (a footprint's field or text, or the board's own),
    with its font as KiCad 9 checks it (text_height, text_thickness)."""

    kind: str               # KiCad's words: "Reference field", "Value field", "Footprint text", "Text"
    text: str
    layer: str
    height: float           # the font's height (KiCad writes (size height width))
    width: float
    thickness: float | None  # the pen width as written; None when the file gives none
    bold: bool
    x: float
    y: float
    uuid: str
    footprint: Footprint | None
    location: Location = field(repr=False)


@dataclass(eq=False)
class Zone(Located):
    net: str
    layers: list[str]
    polygon: list[Point]    # the outline the user drew
    uuid: str
    # The copper KiCad poured, per layer, as saved by the last fill (an N x 2
    # array of one fractured outline: holes joined by zero-width slits); empty
    # when the zone was never filled (or is a keepout / rule area).
    fills: list[tuple[str, np.ndarray]] = field(default_factory=list)
    location: Location | None = field(default=None, repr=False)
    clearance: float | None = None      # the zone's own clearance (connect_pads (clearance ..))
    min_thickness: float = 0.0
    outline_thickness: bool = False     # KiCad 5 fills: the outline is stroked with min_thickness
    keepout: bool = False
    name: str = ""
    # How its pads connect (connect_pads): "thermal" (KiCad's default), "yes" (solid), "no",
    # "thru_hole_only" (thermal for through-hole pads, solid for the others).
    connect: str = "thermal"
    thermal_gap: float = 0.5
    teardrop: bool = False
    priority: int = 0                   # (priority N): which of two overlapping zones fills first
    # A rule area's "not_allowed" items: tracks, vias, pads, copperpour, footprints.
    disallowed: frozenset[str] = frozenset()
    # The outline's cutouts: every (polygon ...) after the first. KiCad 9 reads each one as a
    # hole of the first (ZONE::AddPolygon: the first chain is the outline, the others holes).
    holes: list[list[Point]] = field(default_factory=list)


@dataclass
class Board:
    file: str
    version: int | None
    legacy: bool
    layers: dict[str, str] = field(default_factory=dict)        # name -> type
    footprints: list[Footprint] = field(default_factory=list)
    tracks: list[Track] = field(default_factory=list)
    vias: list[Via] = field(default_factory=list)
    edges: list[EdgeItem] = field(default_factory=list)
    zones: list[Zone] = field(default_factory=list)
    copper_shapes: list[CopperShape] = field(default_factory=list)
    # Lines, arcs, circles, rectangles and polygons drawn on F.SilkS / B.SilkS (the board's and
    # the footprints'), as CopperShape (no net); texts are not drawn here.
    silk_shapes: list[CopperShape] = field(default_factory=list)
    # Shapes drawn on F.Mask / B.Mask: openings in the solder mask (KiCad's solder_mask_bridge).
    mask_shapes: list[CopperShape] = field(default_factory=list)
    silk_texts: list[SilkText] = field(default_factory=list)
    nets: dict[str, str] = field(default_factory=dict)
    title_block: dict[str, str] = field(default_factory=dict)
    edge_connector: str = ""            # stackup (edge_connector yes|bevelled)
    castellated_pads: bool = False      # stackup (castellated_pads yes)
    setup: dict[str, float] = field(default_factory=dict)      # KiCad 5 boards keep their rules here

    # Top-level items by uuid (KiCad's reports name items by uuid), gathered while loading.
    uuids: dict[str, Location] = field(default_factory=dict, repr=False)
    # For a board built from the lists of other files (checker/base_check.py: the head's
    # and the base's own), where an item's list starts in the board's own file; None: at
    # its location's offset, the board's items being read from its file.
    file_offsets: Callable[[Location], int] | None = field(default=None, repr=False, compare=False)

    def offset_of(self, location: Location) -> int:
        """Where the list at ``location`` starts in the board's file (items sort by it as KiCad saved them)."""
        if self.file_offsets is not None:
            return self.file_offsets(location)
        return location.source.offset(location.ordinal)

    def position_of(self, uuid: str) -> tuple[int, int] | None:
        """Line and column of the top-level item with this uuid."""
        location = self.uuids.get(uuid)
        return (location.line, location.column) if location is not None else None

    def copper_layers(self) -> set[str]:
        named = {name for name, kind in self.layers.items() if kind in ("signal", "power", "mixed", "jumper")}
        return named or {name for name in self.layers if name.endswith(".Cu")}

    def copper_order(self) -> list[str]:
        """Copper layers from top to bottom, as the layer table lists them (F.Cu, In1.Cu, ..., B.Cu)."""
        copper = self.copper_layers()
        order = [name for name in self.layers if name in copper] or sorted(copper)
        # KiCad 6-8 list B.Cu (31) after the inner layers already; KiCad 9 numbers it 2,
        # before In1.Cu (4): put it last either way.
        if "B.Cu" in order:
            order.remove("B.Cu")
            order.append("B.Cu")
        return order


def load_board(path: Path, reader: InputReader) -> Board:
    rel = reader.relative(path)
    root = reader.read_sexpr(path, dense_points=True)
    if root.name != "kicad_pcb":
        raise NotKicadFile(f"expected (kicad_pcb ...), found ({root.name} ...)", path=rel,
                           line=root.line, column=root.column)
    version = parse_version(root.value("version"))
    has_module = root.first("module") is not None
    board = Board(file=rel, version=version, legacy=has_module or (version is not None and version <= 20171130))
    layers = root.first("layers")
    if layers is not None:
        for entry in layers.nodes():
            name, kind = entry.atom(0), entry.atom(1)
            if name:
                board.layers[name] = kind or ""
    for net in root.nodes("net"):
        number, name = net.atom(0), net.atom(1)
        if number is not None:
            board.nets[number] = name if name is not None else number
    title = root.first("title_block")
    if title is not None:
        for child in title.nodes():
            if child.atom(0) is not None:
                board.title_block[child.name or ""] = child.atom(0) or ""
    _setup(root.first("setup"), board)
    uuids = board.uuids
    # One pass over the items; the model keeps what the rules use and Locations,
    # not nodes, so the tree is freed when this returns.
    for child in root.nodes():
        name = child.name
        item = None
        if name in ("footprint", "module"):
            item = _footprint(child, board)
            board.footprints.append(item)
        elif name == "segment" or name == "arc":
            item = _track(child, board)
            if item is not None:
                board.tracks.append(item)
        elif name == "via":
            item = _via(child, board)
            board.vias.append(item)
        elif name in ("gr_line", "gr_arc", "gr_circle", "gr_rect", "gr_poly", "gr_curve"):
            layer = _layer_of(child)
            if layer == EDGE_LAYER:
                item = _edge(child, (0.0, 0.0, 0.0), "")
                if item is not None:
                    board.edges.append(item)
            elif layer.endswith(".Cu"):
                item = _copper_shape(child, (0.0, 0.0, 0.0), layer, None, board)
                if item is not None:
                    board.copper_shapes.append(item)
            elif layer in SILK_LAYERS:
                item = _copper_shape(child, (0.0, 0.0, 0.0), SILK_LAYERS[layer], None, board)
                if item is not None:
                    board.silk_shapes.append(item)
            elif layer in MASK_LAYERS:
                item = _copper_shape(child, (0.0, 0.0, 0.0), layer, None, board)
                if item is not None:
                    board.mask_shapes.append(item)
        elif name == "gr_text":
            text = _silk_text(child, (0.0, 0.0, 0.0), None)
            if text is not None:
                board.silk_texts.append(text)
        elif name == "zone":
            item = _zone(child, board)
            board.zones.append(item)
        if item is not None:
            if item.uuid and item.uuid not in uuids:
                uuids[item.uuid] = item.location
        else:
            key = _uuid(child)
            if key and key not in uuids:
                uuids[key] = child.location
    if not board.nets:
        _nets_by_name(board)
    return board


def _nets_by_name(board: Board) -> None:
    """KiCad 10 names a net where it is used and keeps no net table (board format 20251028:
    "Stop writing netcodes; they're an internal implementation detail"): the board's nets are
    then the names its items carry, each its own key."""
    names = {pad.net for footprint in board.footprints for pad in footprint.pads}
    names |= {item.net for items in (board.tracks, board.vias, board.zones, board.copper_shapes) for item in items}
    board.nets.update((name, name) for name in sorted(names) if name)


def _setup(setup: Node | None, board: Board) -> None:
    if setup is None:
        return
    stackup = setup.first("stackup")
    if stackup is not None:
        board.edge_connector = stackup.value("edge_connector") or ""
        board.castellated_pads = stackup.value("castellated_pads") == "yes"
    # KiCad 5 boards carry their design rules in the board file.
    for key in ("trace_min", "via_min_size", "via_min_drill", "clearance", "hole_to_hole_min",
                "edge_clearance", "via_min_annulus", "pad_to_mask_clearance", "solder_mask_min_width"):
        number = setup.number(key)
        if number is not None:
            board.setup[key] = number


def _uuid(node: Node) -> str:
    return node.value("uuid") or node.value("tstamp") or ""


def _layer_of(node: Node) -> str:
    """The atom of the node's first (layer ..), "" without one: node.value("layer") or ""."""
    for item in node[1:-2]:
        if type(item) is not str and item[0] == "layer":
            return (item[1] if len(item) > 3 and type(item[1]) is str else item.atom(0)) or ""
    return ""


def _xy(node: Node | None) -> Point | None:
    if node is None:
        return None
    x, y = to_float(node.atom(0)), to_float(node.atom(1))
    if x is None or y is None:
        return None
    return (x, y)


def _points(pts: Node | None) -> np.ndarray:
    """The (xy ..) points of a (pts ...) list as an N x 2 array.

    The reader has made most of them arrays already (Points). Otherwise every
    item is normally an (xy x y) leaf: their numbers are read in C. KiCad 7+
    may put (arc ...) items in a polygon; those and malformed points take the
    slow path.
    """
    if pts is None:
        return np.empty((0, 2))
    if type(pts) is Points:
        return pts.array
    items = pts[1:-2]
    try:
        flat = np.fromiter(chain.from_iterable(map(_XY, items)), dtype=np.float64, count=2 * len(items))
        if set(map(_NAME, items)) == {"xy"} and np.isfinite(flat).all():
            return flat.reshape(-1, 2)
    except (ValueError, IndexError, TypeError):
        pass
    points: list[Point] = []
    for item in items:
        if type(item) is str:
            continue
        if item[0] == "xy":
            point = _xy(item)
            if point is not None:
                points.append(point)
        elif item[0] == "arc":
            start, mid, end = _xy(item.first("start")), _xy(item.first("mid")), _xy(item.first("end"))
            if start and mid and end:
                points.extend(arc_through(start, mid, end)[:-1] + [end])
    return np.array(points, dtype=np.float64).reshape(-1, 2)


def _footprint(node: Node, board: Board) -> Footprint:
    x, y, rotation = 0.0, 0.0, 0.0
    reference = value = description = tags = ""
    attributes: set[str] = set()
    clearance = None
    net_tie = False
    zone_connect = thermal_gap = mask_margin = None
    tie_groups: list[frozenset[str]] = []
    pads: list[Node] = []
    edges: list[Node] = []
    copper: list[tuple[Node, str]] = []
    courtyard: list[tuple[Node, str]] = []
    silk: list[tuple[Node, str]] = []
    mask: list[tuple[Node, str]] = []
    texts: list[Node] = []
    uuid = path = layer = ""
    # One pass over the children: a footprint holds dozens of graphics we skip.
    for item in node[1:-2]:
        if type(item) is str:
            if item in ("dnp", "exclude_from_bom", "board_only", "exclude_from_pos_files"):
                attributes.add(item)   # KiCad 6 flags are bare atoms
            continue
        name = item[0]
        if name == "pad":
            pads.append(item)
        elif name in _EDGE_SHAPES:
            if type(item) is FootprintLine:     # read as one node: its layer by place, its lists made once
                shape_layer = item[7]           # if a rule reads it (fabrication drawings are skipped)
                if shape_layer in _READ_LAYERS or shape_layer.endswith(".Cu"):
                    item = item.as_node()
            else:
                shape_layer = _layer_of(item)
            if shape_layer == EDGE_LAYER:
                edges.append(item)
            elif shape_layer.endswith(".Cu"):
                copper.append((item, shape_layer))
            elif shape_layer in _COURTYARDS:
                courtyard.append((item, shape_layer))
            elif shape_layer in SILK_LAYERS:
                silk.append((item, SILK_LAYERS[shape_layer]))
            elif shape_layer in MASK_LAYERS:
                mask.append((item, shape_layer))
        elif name in ("fp_text", "property"):
            texts.append(item)
            kind, text = item.atom(0), item.atom(1) or ""
            if kind in ("reference", "Reference") and not reference:
                reference = text
            elif kind in ("value", "Value") and not value:
                value = text
        elif name == "at":
            x = to_float(item.atom(0)) or 0.0
            y = to_float(item.atom(1)) or 0.0
            rotation = to_float(item.atom(2)) or 0.0
        elif name == "attr":
            attributes.update(item.atoms())
        elif name in ("dnp", "exclude_from_bom", "board_only", "exclude_from_pos_files"):
            if item.atom(0) in (None, "yes", "true"):
                attributes.add(name)   # KiCad 8+: (dnp yes)
        elif name == "descr":
            description = item.atom(0) or ""
        elif name == "tags":
            tags = item.atom(0) or ""
        elif name == "clearance":
            clearance = to_float(item.atom(0))
        elif name in ("uuid", "tstamp"):
            uuid = uuid or item.atom(0) or ""
        elif name == "path":
            path = item.atom(0) or ""
        elif name == "layer":
            layer = item.atom(0) or ""
        elif name == "net_tie_pad_groups":
            net_tie = True
            tie_groups = [frozenset(n.strip() for n in group.split(",") if n.strip()) for group in item.atoms()]
        elif name == "zone_connect":
            zone_connect = _int(item.atom(0))
        elif name == "thermal_gap":
            thermal_gap = to_float(item.atom(0))
        elif name == "solder_mask_margin":
            mask_margin = to_float(item.atom(0))
    footprint = Footprint(
        reference=reference, value=value, lib_id=node.atom(0) or "", uuid=uuid, sheet_link=path,
        x=x, y=y, rotation=rotation, layer=layer, attributes=attributes, pads=[], location=node.location,
        description=description, tags=tags, clearance=clearance, net_tie=net_tie or "net_tie" in attributes,
        zone_connect=zone_connect, thermal_gap=thermal_gap, net_tie_groups=tie_groups, mask_margin=mask_margin)
    placement = (x, y, rotation)
    for child in pads:
        pad = _pad(child, placement, board)
        if pad is not None:
            footprint.pads.append(pad)
    for child in edges:
        edge = _edge(child, placement, reference)
        if edge is not None:
            board.edges.append(edge)
    for child, shape_layer in copper:
        shape = _copper_shape(child, placement, shape_layer, footprint, board)
        if shape is not None:
            board.copper_shapes.append(shape)
    for child, shape_layer in silk:
        shape = _copper_shape(child, placement, shape_layer, footprint, board)
        if shape is not None:
            board.silk_shapes.append(shape)
    for child, shape_layer in mask:
        shape = _copper_shape(child, placement, shape_layer, footprint, board)
        if shape is not None:
            board.mask_shapes.append(shape)
    for child in texts:
        text = _silk_text(child, placement, footprint)
        if text is not None:
            board.silk_texts.append(text)
    for child, shape_layer in courtyard:
        outline = _edge(child, placement, reference)
        if outline is not None:
            footprint.courtyards.setdefault(_COURTYARDS[shape_layer], []).append(outline.points)
    return footprint


MASK_LAYERS = ("F.Mask", "B.Mask")
SILK_LAYERS = {"F.SilkS": "F.SilkS", "B.SilkS": "B.SilkS", "F.Silkscreen": "F.SilkS", "B.Silkscreen": "B.SilkS"}
_COURTYARDS = {"F.CrtYd": "F.CrtYd", "B.CrtYd": "B.CrtYd", "F.Courtyard": "F.CrtYd", "B.Courtyard": "B.CrtYd"}


_EDGE_SHAPES = frozenset(("fp_line", "fp_arc", "fp_circle", "fp_rect", "fp_poly", "fp_curve"))
# The layers (besides copper) whose footprint shapes the board keeps: edge, courtyards, silkscreen, mask.
_READ_LAYERS = frozenset((EDGE_LAYER, *_COURTYARDS, *SILK_LAYERS, *MASK_LAYERS))


_TEXT_KINDS = {"reference": "Reference field", "value": "Value field", "Reference": "Reference field",
               "Value": "Value field"}


def _silk_text(node: Node, placement: tuple[float, float, float], footprint) -> SilkText | None:
    """A visible text on a silkscreen layer, else None."""
    layer_node = node.first("layer")
    layer = SILK_LAYERS.get(layer_node.atom(0) or "") if layer_node is not None else None
    if layer is None or _hidden(node):
        return None
    if node.name == "gr_text":
        kind, text = "Text", node.atom(0) or ""
    else:
        key, text = node.atom(0) or "", node.atom(1) or ""
        kind = _TEXT_KINDS.get(key, "Footprint text")
        if node.name == "property" and key not in _TEXT_KINDS and not text:
            return None
    effects = node.first("effects")
    font = effects.first("font") if effects is not None else None
    size = font.first("size") if font is not None else None
    if size is None:
        return None
    height = to_float(size.atom(0)) or 0.0
    width = to_float(size.atom(1)) or height
    thickness_node = font.first("thickness")
    thickness = to_float(thickness_node.atom(0)) if thickness_node is not None else None
    bold_node = font.first("bold")
    bold = "bold" in font.atoms() or (bold_node is not None and bold_node.atom(0) in (None, "yes"))
    at = node.first("at")
    local = ((to_float(at.atom(0)) or 0.0, to_float(at.atom(1)) or 0.0) if at is not None else (0.0, 0.0))
    x, y = _place(local, placement)
    return SilkText(kind=kind, text=text, layer=layer, height=height, width=width, thickness=thickness, bold=bold,
                    x=x, y=y, uuid=_uuid(node), footprint=footprint, location=node.location)


def _hidden(node: Node) -> bool:
    """KiCad 5-7 write a bare ``hide`` (in the text or its effects); KiCad 8+ ``(hide yes)``."""
    for holder in (node, node.first("effects")):
        if holder is None:
            continue
        if "hide" in holder.atoms():
            return True
        flag = holder.first("hide")
        if flag is not None and flag.atom(0) in (None, "yes"):
            return True
    return False


def _place(point: Point, placement: tuple[float, float, float]) -> Point:
    x, y, rotation = placement
    if not rotation and not x and not y:
        return point
    rx, ry = rotate(point, rotation)
    return (rx + x, ry + y)


def _pad(node: Node, placement: tuple[float, float, float], board: Board) -> Pad | None:
    fields = _children(node)
    at = fields.get("at")
    local = _leaf_xy(at) if at is not None else None
    size = _leaf_xy(fields.get("size"))
    if local is None or size is None:
        return None
    x, y = _place(local, placement)
    drill_node = fields.get("drill")
    drill = drill_size = None
    offset = (0.0, 0.0)
    if drill_node is not None:
        numbers = [n for n in (to_float(a) for a in drill_node.atoms()) if n is not None]
        if numbers:
            drill_size = (numbers[0], numbers[1] if len(numbers) > 1 else numbers[0])
            drill = min(drill_size)
        offset = _xy(drill_node.first("offset")) or (0.0, 0.0)
    layers_node = fields.get("layers")
    chamfer = fields.get("chamfer")
    options = fields.get("options")
    net = fields.get("net")
    atoms = node.atoms()
    properties = {p.atom(0) for p in node.nodes("property")} if "property" in fields else ()
    pad = Pad(number=atoms[0] if atoms else "", x=x, y=y, width=size[0], height=size[1],
              rotation=(to_float(at.atom(2)) or 0.0), shape=atoms[2] if len(atoms) > 2 else "rect",
              drill=drill, net=_net_of(net, board) if net is not None else "",
              layers=layers_node.atoms() if layers_node is not None else [],
              kind=atoms[1] if len(atoms) > 1 else "smd",
              corner_ratio=_leaf_number(fields.get("roundrect_rratio")) or 0.0,
              drill_size=drill_size, drill_offset=offset,
              chamfer_ratio=_leaf_number(fields.get("chamfer_ratio")) or 0.0,
              chamfer=frozenset(chamfer.atoms()) if chamfer is not None else frozenset(),
              delta=_leaf_xy(fields.get("rect_delta")) or (0.0, 0.0),
              anchor=(options.value("anchor") if options is not None else None) or "circle",
              clearance=_leaf_number(fields.get("clearance")),
              castellated="pad_prop_castellated" in properties, properties=frozenset(properties),
              unused_layers_removed=_set(fields.get("remove_unused_layers")),
              end_layers_kept=_set(fields.get("keep_end_layers")),
              zone_layers=_atoms(fields.get("zone_layer_connections")),
              zone_connect=_int(_leaf_text(fields.get("zone_connect")) or None),
              mask_margin=_leaf_number(fields.get("solder_mask_margin")),
              thermal_gap=_leaf_number(fields.get("thermal_gap")),
              pin_type=_leaf_text(fields.get("pintype")),
              uuid=_leaf_text(fields.get("uuid")) or _leaf_text(fields.get("tstamp")), location=node.location)
    primitives = fields.get("primitives")
    if primitives is not None:
        pad.primitives = [p for p in (_primitive(child) for child in primitives.nodes()) if p is not None]
    return pad


def _primitive(node: Node) -> Primitive | None:
    kind = (node.name or "").split("_", 1)[-1]
    width = node.number("width") or 0.0
    fill = node.first("fill")
    filled = fill is not None and fill.atom(0) in ("yes", "solid", "true")
    start, end = _xy(node.first("start")), _xy(node.first("end"))
    if kind == "poly":
        points = [tuple(p) for p in _points(node.first("pts")).tolist()]
        # KiCad 6 writes custom-pad polygons filled unless told otherwise.
        return Primitive("poly", points, width, fill is None or filled) if len(points) >= 3 else None
    if kind == "line" and start and end:
        return Primitive("line", [start, end], width, False)
    if kind == "rect" and start and end:
        return Primitive("rect", [start, (end[0], start[1]), end, (start[0], end[1])], width, filled or fill is None)
    if kind == "circle":
        centre = _xy(node.first("center")) or start
        if centre and end:
            return Primitive("circle", [centre, end], width, filled or fill is None)
    if kind == "arc" and start and end:
        mid = _xy(node.first("mid"))
        angle = node.number("angle")
        if mid is not None:
            return Primitive("arc", arc_through(start, mid, end), width, False)
        if angle is not None:  # KiCad 6 early files: start is the centre
            return Primitive("arc", arc_from_center(start, end, angle), width, False)
    return None


def _children(node: Node) -> dict[str, Node]:
    """The first child list of each name, in one pass (reversed, so the first one wins)."""
    return {item[0]: item for item in reversed(node[1:-2]) if type(item) is not str}


def _leaf_xy(leaf: Node | None) -> Point | None:
    if leaf is None or len(leaf) < 5:
        return None
    x, y = to_float(leaf[1]), to_float(leaf[2])
    return None if x is None or y is None else (x, y)


def _leaf_number(leaf: Node | None) -> float | None:
    return to_float(leaf[1]) if leaf is not None and len(leaf) > 3 else None


def _leaf_text(leaf: Node | None) -> str:
    if leaf is None:
        return ""
    first = leaf[1] if len(leaf) > 3 else None
    if type(first) is str:   # the usual leaf: its first item is its first atom
        return first
    return leaf.atom(0) or ""


def _track(node: Node, board: Board) -> Track | None:
    if type(node) is Segment:       # the reader's compact segment: its words by place
        x0, y0, x1, y1 = to_float(node[1]), to_float(node[2]), to_float(node[3]), to_float(node[4])
        if x0 is None or y0 is None or x1 is None or y1 is None:
            return None
        net = node[7]
        return Track(kind="segment", points=[(x0, y0), (x1, y1)], width=to_float(node[5]) or 0.0, layer=node[6],
                     net=board.nets.get(net, net), uuid=node[8], location=Location(node[-1], node[-2]))
    fields = _children(node)
    start, end = _leaf_xy(fields.get("start")), _leaf_xy(fields.get("end"))
    if start is None or end is None:
        return None
    points = [start, end]
    if node[0] == "arc":
        mid = _leaf_xy(fields.get("mid"))
        if mid is not None:
            points = arc_through(start, mid, end, tolerance=ARC_TOLERANCE_MM)
    net = fields.get("net")
    return Track(kind=node[0] or "segment", points=points, width=_leaf_number(fields.get("width")) or 0.0,
                 layer=_leaf_text(fields.get("layer")), net=_net_of(net, board) if net is not None else "",
                 uuid=_leaf_text(fields.get("uuid")) or _leaf_text(fields.get("tstamp")), location=node.location)


def _net_of(net: Node, board: Board) -> str:
    if len(net) == 4 and type(net[1]) is str:   # (net 3): the board's net table names it
        return board.nets.get(net[1], net[1])
    if len(net) == 5 and type(net[1]) is str and type(net[2]) is str:   # (net 3 "GND")
        return net[2]
    key = net.atom(0) or ""
    name = net.atom(1)
    return board.nets.get(key, key) if name is None else name


def _via(node: Node, board: Board) -> Via:
    fields = _children(node)
    at = _leaf_xy(fields.get("at")) or (0.0, 0.0)
    layers = fields.get("layers")
    atoms = node.atoms()
    # KiCad 10 writes a buried via as (via buried ...) (board format 20250926, "Split via types into
    # blind/buried/through"; KiCad 9 wrote it as blind): both span only their layers.
    via_type = "micro" if "micro" in atoms else "blind" if "blind" in atoms or "buried" in atoms else "through"
    net = fields.get("net")
    removed = fields.get("remove_unused_layers")
    return Via(x=at[0], y=at[1], diameter=_leaf_number(fields.get("size")), drill=_leaf_number(fields.get("drill")),
               net=_net_of(net, board) if net is not None else "",
               uuid=_leaf_text(fields.get("uuid")) or _leaf_text(fields.get("tstamp")),
               layers=layers.atoms() if layers is not None else [], location=node.location,
               via_type=via_type, unused_layers_removed=_set(removed),
               end_layers_kept=_set(fields.get("keep_end_layers")),
               zone_layers=_atoms(fields.get("zone_layer_connections")))


def _int(text: str | None) -> int | None:
    try:
        return int(text) if text is not None else None
    except ValueError:
        return None


def _atoms(node: Node | None) -> list[str]:
    return node.atoms() if node is not None else []


def _set(flag: Node | None) -> bool:
    """A flag list: (keep_end_layers) in KiCad 6, (keep_end_layers yes|no) later."""
    return flag is not None and flag.atom(0) in (None, "yes", "true")


def _edge(node: Node, placement: tuple[float, float, float], owner: str) -> EdgeItem | None:
    kind = node.name or ""
    shape = kind.split("_", 1)[1]
    start, end = _xy(node.first("start")), _xy(node.first("end"))
    closed = False
    points: list[Point] = []
    if shape == "line" and start and end:
        points = [start, end]
    elif shape == "arc" and start and end:
        mid = _xy(node.first("mid"))
        angle = node.number("angle")
        if mid is not None:
            points = arc_through(start, mid, end, tolerance=ARC_TOLERANCE_MM)
        elif angle is not None:  # KiCad 5: start is the centre, end the arc's first point
            points = arc_from_center(start, end, angle, tolerance=ARC_TOLERANCE_MM)
        else:
            points = [start, end]
    elif shape == "circle":
        centre = start or _xy(node.first("center"))
        rim = end
        if centre and rim:
            radius = math.hypot(rim[0] - centre[0], rim[1] - centre[1])
            points = arc_from_center(centre, (centre[0] + radius, centre[1]), 360.0, tolerance=ARC_TOLERANCE_MM)
            closed = True
    elif shape == "rect" and start and end:
        points = [start, (end[0], start[1]), end, (start[0], end[1]), start]
        closed = True
    elif shape == "poly":
        points = [tuple(p) for p in _points(node.first("pts")).tolist()]
        if points:
            points.append(points[0])
            closed = True
    elif shape == "curve":
        controls = [tuple(p) for p in _points(node.first("pts")).tolist()]
        if len(controls) == 4:
            points = _bezier(controls)
    if len(points) < 2:
        return None
    points = [_place(p, placement) for p in points]
    return EdgeItem(kind=kind, points=points, closed=closed, uuid=_uuid(node), owner=owner,
                    location=node.location)


def _copper_shape(node: Node, placement: tuple[float, float, float], layer: str, footprint, board: Board
                  ) -> CopperShape | None:
    outline = _edge(node, placement, footprint.reference if footprint is not None else "")
    if outline is None:
        return None
    kind = outline.kind.split("_", 1)[1]
    stroke = node.first("stroke")
    width = (stroke.number("width") if stroke is not None else None) or node.number("width") or 0.0
    fill = node.first("fill")
    # KiCad 5/6 polygons are filled unless told otherwise; circles and rectangles only when told.
    filled = (fill.atom(0) in ("yes", "solid", "true")) if fill is not None else kind == "poly"
    net = node.first("net")
    return CopperShape(kind=kind, layer=layer, points=outline.points, width=width, filled=filled and outline.closed,
                       net=_net_of(net, board) if net is not None else "", uuid=outline.uuid,
                       footprint=footprint, location=node.location)


def _bezier(controls: list[Point], pieces: int = 16) -> list[Point]:
    (x0, y0), (x1, y1), (x2, y2), (x3, y3) = controls
    out = []
    for i in range(pieces + 1):
        t = i / pieces
        u = 1 - t
        out.append((u ** 3 * x0 + 3 * u * u * t * x1 + 3 * u * t * t * x2 + t ** 3 * x3,
                    u ** 3 * y0 + 3 * u * u * t * y1 + 3 * u * t * t * y2 + t ** 3 * y3))
    return out


def _zone(node: Node, board: Board) -> Zone:
    layers = [node.value("layer")] if node.first("layer") is not None else []
    multi = node.first("layers")
    if multi is not None:
        layers = multi.atoms()
    outlines = [[tuple(p) for p in _points(outline.first("pts")).tolist()]
                for outline in node.nodes("polygon")]
    polygon, holes = (outlines[0], outlines[1:]) if outlines else ([], [])
    connect = node.first("connect_pads")
    keepout = node.first("keepout") is not None
    thickness = node.first("filled_areas_thickness")
    fills = []
    if not keepout:
        for filled in node.nodes("filled_polygon"):
            points = _points(filled.first("pts"))
            if len(points) >= 3:
                fills.append((filled.value("layer") or (layers[0] if layers else ""), points))
    net_name = node.value("net_name")
    net = node.first("net")
    fill = node.first("fill")
    gap = fill.number("thermal_gap") if fill is not None else None
    attr = node.first("attr")
    return Zone(net=net_name if net_name is not None else (_net_of(net, board) if net is not None else ""),
                layers=[l for l in layers if l], polygon=polygon, uuid=_uuid(node), fills=fills,
                location=node.location,
                clearance=connect.number("clearance") if connect is not None else None,
                min_thickness=node.number("min_thickness") or 0.0,
                # KiCad 6 writes (filled_areas_thickness no): the fill is the copper itself. From board
                # format 20220211 (KiCad 7: "End support for V5 zone fill strategy") KiCad writes
                # no such token and every fill is the copper itself; only older files without it
                # carry KiCad 5's fills, drawn with a pen of min_thickness.
                outline_thickness=(thickness.atom(0) != "no" if thickness is not None
                                   else board.version is None or board.version < V5_FILL_DROPPED),
                keepout=keepout, name=node.value("name") or "",
                connect=(connect.atom(0) if connect is not None else None) or "thermal",
                thermal_gap=gap if gap is not None else 0.5,
                teardrop=attr is not None and attr.first("teardrop") is not None,
                priority=int(node.number("priority") or 0),
                holes=[hole for hole in holes if len(hole) >= 3],
                disallowed=frozenset(flag.name for flag in node.first("keepout").nodes()
                                     if flag.atom(0) == "not_allowed") if keepout else frozenset())

"""The board: footprints, tracks, vias, the Edge.Cuts outline and zones.

Layers are matched by *name* everywhere: KiCad 9 renumbered the layer table
(B.Cu is 2, not 31), so ordinal numbers mean different layers in different
files. KiCad 5 boards use ``module`` instead of ``footprint`` and centre/angle
arcs; both are read, and the board is flagged legacy.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from .errors import NotKicadFile
from .geometry import Point, arc_from_center, arc_through, rotate
from .project import InputReader
from .sexpr import Node, to_float
from .versions import parse_version

EDGE_LAYER = "Edge.Cuts"


@dataclass
class Pad:
    number: str
    x: float
    y: float
    width: float
    height: float
    rotation: float         # absolute: KiCad 6+ write the footprint's rotation into the pad's
    shape: str              # circle, oval, rect, roundrect, trapezoid, custom
    drill: float | None
    net: str
    layers: list[str]
    kind: str = "smd"       # smd, thru_hole, np_thru_hole, connect
    corner_ratio: float = 0.0  # roundrect: corner radius / the smaller side


@dataclass
class Footprint:
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
    line: int
    column: int


@dataclass
class Track:
    kind: str               # segment or arc
    points: list[Point]     # start, (arc samples,) end
    width: float
    layer: str
    net: str
    uuid: str
    line: int
    column: int


@dataclass
class Via:
    x: float
    y: float
    diameter: float | None
    drill: float | None
    net: str
    uuid: str
    layers: list[str]
    line: int
    column: int


@dataclass
class EdgeItem:
    kind: str               # gr_line, gr_arc, gr_circle, gr_rect, gr_poly, fp_* (inside a footprint)
    points: list[Point]     # polyline through the item
    closed: bool            # circles, rectangles and polygons close themselves
    uuid: str
    owner: str              # footprint reference when drawn inside one
    line: int
    column: int


@dataclass
class Zone:
    net: str
    layers: list[str]
    polygon: list[Point]    # the outline the user drew
    uuid: str
    # The copper KiCad poured, per layer, as saved by the last fill; empty
    # when the zone was never filled (or is a keepout / rule area).
    fills: list[tuple[str, list[Point]]] = field(default_factory=list)
    line: int = 1
    column: int = 1


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
    nets: dict[str, str] = field(default_factory=dict)
    title_block: dict[str, str] = field(default_factory=dict)
    uuids: dict[str, tuple[int, int]] = field(default_factory=dict)

    def copper_layers(self) -> set[str]:
        named = {name for name, kind in self.layers.items() if kind in ("signal", "power", "mixed", "jumper")}
        return named or {name for name in self.layers if name.endswith(".Cu")}


def load_board(path: Path, reader: InputReader) -> Board:
    rel = reader.relative(path)
    root = reader.read_sexpr(path)
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
    for child in root.nodes():
        name = child.name
        if name in ("footprint", "module"):
            board.footprints.append(_footprint(child, board))
        elif name == "segment" or name == "arc":
            track = _track(child, board)
            if track is not None:
                board.tracks.append(track)
        elif name == "via":
            board.vias.append(_via(child, board))
        elif name in ("gr_line", "gr_arc", "gr_circle", "gr_rect", "gr_poly", "gr_curve"):
            if _layer_of(child) == EDGE_LAYER:
                edge = _edge(child, (0.0, 0.0, 0.0), "")
                if edge is not None:
                    board.edges.append(edge)
        elif name == "zone":
            board.zones.append(_zone(child, board))
        uuid = _uuid(child)
        if uuid:
            board.uuids.setdefault(uuid, (child.line, child.column))
    return board


def _uuid(node: Node) -> str:
    return node.value("uuid") or node.value("tstamp") or ""


def _layer_of(node: Node) -> str:
    return node.value("layer") or ""


def _xy(node: Node | None) -> Point | None:
    if node is None:
        return None
    x, y = to_float(node.atom(0)), to_float(node.atom(1))
    if x is None or y is None:
        return None
    return (x, y)


def _net_name(node: Node, board: Board) -> str:
    net = node.first("net")
    if net is None:
        return ""
    key = net.atom(0) or ""
    # KiCad 6-9 refer to nets by number; later formats may use the name itself.
    return board.nets.get(key, key) if net.atom(1) is None else (net.atom(1) or "")


def _footprint(node: Node, board: Board) -> Footprint:
    at = node.first("at")
    x, y, rotation = 0.0, 0.0, 0.0
    if at is not None:
        x = to_float(at.atom(0)) or 0.0
        y = to_float(at.atom(1)) or 0.0
        rotation = to_float(at.atom(2)) or 0.0
    reference, value = "", ""
    for prop in node.nodes("property"):   # KiCad 8+
        if prop.atom(0) == "Reference":
            reference = prop.atom(1) or ""
        elif prop.atom(0) == "Value":
            value = prop.atom(1) or ""
    for text in node.nodes("fp_text"):    # KiCad 5-7
        if text.atom(0) == "reference" and not reference:
            reference = text.atom(1) or ""
        elif text.atom(0) == "value" and not value:
            value = text.atom(1) or ""
    attributes: set[str] = set()
    attr = node.first("attr")
    if attr is not None:
        attributes.update(attr.atoms())
    for flag in ("dnp", "exclude_from_bom", "board_only", "exclude_from_pos_files"):
        if node.flag(flag):
            attributes.add(flag)
    footprint = Footprint(
        reference=reference, value=value, lib_id=node.atom(0) or "", uuid=_uuid(node),
        sheet_link=node.value("path") or "", x=x, y=y, rotation=rotation, layer=_layer_of(node),
        attributes=attributes, pads=[], line=node.line, column=node.column)
    placement = (x, y, rotation)
    for child in node.nodes():
        if child.name == "pad":
            pad = _pad(child, placement, board)
            if pad is not None:
                footprint.pads.append(pad)
        elif child.name in ("fp_line", "fp_arc", "fp_circle", "fp_rect", "fp_poly", "fp_curve"):
            if _layer_of(child) == EDGE_LAYER:
                edge = _edge(child, placement, reference)
                if edge is not None:
                    board.edges.append(edge)
    return footprint


def _place(point: Point, placement: tuple[float, float, float]) -> Point:
    x, y, rotation = placement
    if not rotation and not x and not y:
        return point
    rx, ry = rotate(point, rotation)
    return (rx + x, ry + y)


def _pad(node: Node, placement: tuple[float, float, float], board: Board) -> Pad | None:
    at = node.first("at")
    local = _xy(at)
    size = _xy(node.first("size"))
    if local is None or size is None:
        return None
    x, y = _place(local, placement)
    drill_node = node.first("drill")
    drill = None
    if drill_node is not None:
        numbers = [to_float(a) for a in drill_node.atoms() if to_float(a) is not None]
        drill = numbers[0] if numbers else None
    layers_node = node.first("layers")
    return Pad(number=node.atom(0) or "", x=x, y=y, width=size[0], height=size[1],
               rotation=(to_float(at.atom(2)) or 0.0) if at is not None else 0.0,
               shape=node.atom(2) or "rect", drill=drill, net=_net_name(node, board),
               layers=layers_node.atoms() if layers_node is not None else [],
               kind=node.atom(1) or "smd", corner_ratio=node.number("roundrect_rratio") or 0.0)


def _track(node: Node, board: Board) -> Track | None:
    start, end = _xy(node.first("start")), _xy(node.first("end"))
    if start is None or end is None:
        return None
    points = [start, end]
    if node.name == "arc":
        mid = _xy(node.first("mid"))
        if mid is not None:
            points = arc_through(start, mid, end)
    return Track(kind=node.name or "segment", points=points, width=node.number("width") or 0.0,
                 layer=_layer_of(node), net=_net_name(node, board), uuid=_uuid(node),
                 line=node.line, column=node.column)


def _via(node: Node, board: Board) -> Via:
    at = _xy(node.first("at")) or (0.0, 0.0)
    layers = node.first("layers")
    return Via(x=at[0], y=at[1], diameter=node.number("size"), drill=node.number("drill"),
               net=_net_name(node, board), uuid=_uuid(node),
               layers=layers.atoms() if layers is not None else [], line=node.line, column=node.column)


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
            points = arc_through(start, mid, end)
        elif angle is not None:  # KiCad 5: start is the centre, end the arc's first point
            points = arc_from_center(start, end, angle)
        else:
            points = [start, end]
    elif shape == "circle":
        centre = start or _xy(node.first("center"))
        rim = end
        if centre and rim:
            import math
            radius = math.hypot(rim[0] - centre[0], rim[1] - centre[1])
            points = [(centre[0] + radius * math.cos(i * math.pi / 8), centre[1] + radius * math.sin(i * math.pi / 8))
                      for i in range(17)]
            closed = True
    elif shape == "rect" and start and end:
        points = [start, (end[0], start[1]), end, (start[0], end[1]), start]
        closed = True
    elif shape == "poly":
        pts = node.first("pts")
        if pts is not None:
            points = [p for p in (_xy(xy) for xy in pts.nodes("xy")) if p is not None]
            if points:
                points.append(points[0])
                closed = True
    elif shape == "curve":
        pts = node.first("pts")
        if pts is not None:
            controls = [p for p in (_xy(xy) for xy in pts.nodes("xy")) if p is not None]
            if len(controls) == 4:
                points = [controls[0], controls[3]]
    if len(points) < 2:
        return None
    points = [_place(p, placement) for p in points]
    return EdgeItem(kind=kind, points=points, closed=closed, uuid=_uuid(node), owner=owner,
                    line=node.line, column=node.column)


def _zone(node: Node, board: Board) -> Zone:
    layers = [node.value("layer")] if node.first("layer") is not None else []
    multi = node.first("layers")
    if multi is not None:
        layers = multi.atoms()
    polygon: list[Point] = []
    outline = node.first("polygon")
    pts = outline.first("pts") if outline is not None else None
    if pts is not None:
        polygon = [p for p in (_xy(xy) for xy in pts.nodes("xy")) if p is not None]
    fills = []
    for filled in node.nodes("filled_polygon"):
        pts = filled.first("pts")
        points = [p for p in (_xy(xy) for xy in pts.nodes("xy")) if p is not None] if pts is not None else []
        if len(points) >= 3:
            fills.append((filled.value("layer") or (layers[0] if layers else ""), points))
    net_name = node.value("net_name")
    return Zone(net=net_name if net_name is not None else _net_name(node, board),
                layers=[l for l in layers if l], polygon=polygon, uuid=_uuid(node), fills=fills,
                line=node.line, column=node.column)

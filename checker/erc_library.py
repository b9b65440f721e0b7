"""KiCad 9's ``lib_symbol_mismatch``: a symbol's copy embedded in the schematic
against the symbol in its library, where that library is available here.

KiCad (eeschema/erc/erc.cpp, TestLibSymbolIssues) looks each placed symbol's
library nickname up in the symbol library table, flattens the library's
symbol (a derived symbol takes its parent's drawing) and compares it with the
schematic's embedded copy by ``LIB_SYMBOL::Compare`` under the EQUALITY and
ERC flags: the power flag, the unit count, the graphic shapes (sorted), the
pins (matched by number, unit and body style), the fields (mandatory ones by
role, others by name; their positions are ignored), the footprint filters,
the keywords and the pin name offset. Names, show-pin settings and the
exclude-from flags are not compared under ERC. One marker per placed symbol.

Which libraries are available decides what can be compared:

* the project's own ``sym-lib-table`` libraries inside the project folder
  (``${KIPRJMOD}/...``): part of the repository, so the finding is the
  repository's (``erc.lib-symbol-mismatch``);
* a library the project table does not list is KiCad's standard library of
  that nickname, compared only when installed where the checker runs
  (``KICAD9_SYMBOL_DIR`` or the usual install folders); such a finding
  depends on that machine (``erc.lib-symbol-mismatch-installed``) and the
  verdict never lets it block;
* otherwise nothing is compared (KiCad reports ``lib_symbol_issues`` there,
  which the checker does not mirror).

The embedded copies are reduced to their signature when the schematic is read
(``symbol_signature``), so no parse tree is kept for this.
"""
from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from pathlib import Path

from .errors import HostileInputError
from .sexpr import Effects, Node, Pin, Property

UNITS_PER_MM = 10000
DEFAULT_PIN_NAME_OFFSET = 5080          # 20 mil, KiCad's default when a symbol gives none
_MANDATORY = {"reference": "Reference", "value": "Value", "footprint": "Footprint", "datasheet": "Datasheet",
              "description": "Description", "ki_description": "Description"}
_MANDATORY_DEFAULT_HIDDEN = {"Reference": False, "Footprint": True, "Datasheet": True, "Description": True}
_LEGACY_SIM_FIELDS = frozenset(("spice_primitive", "spice_model", "spice_netlist_enabled", "spice_node_sequence",
                                "spice_lib_file"))
_MIGRATED = "\0simulation model migrated"
EPSILON = 2                 # EDA_SHAPE::Compare's tolerance for computed points and widths
_SHAPES = ("polyline", "rectangle", "circle", "arc", "bezier")
_INSTALLED_FOLDERS = ("/usr/share/kicad/symbols", "/usr/local/share/kicad/symbols",
                      "/Applications/KiCad/KiCad.app/Contents/SharedSupport/symbols")


def _iu(text: str | None) -> int:
    try:
        return round(float(text) * UNITS_PER_MM)
    except (TypeError, ValueError):
        return 0


def _unit_body(name: str) -> tuple[int, int]:
    parts = name.rsplit("_", 2)
    if len(parts) == 3 and parts[1].isdigit() and parts[2].isdigit():
        return int(parts[1]), int(parts[2])
    return 0, 0


def _stroke_fill(node: Node) -> tuple:
    stroke = node.first("stroke")
    width = _iu(stroke.value("width")) if stroke is not None else 0
    style = (stroke.value("type") or "default") if stroke is not None else "default"
    fill = node.first("fill")
    return width, style, (fill.value("type") or "none") if fill is not None else "none"


def _shape(node: Node, unit: int, body: int, version: int) -> tuple:
    kind = node[0]
    if kind in ("polyline", "bezier"):
        pts = node.first("pts")
        geometry = tuple((_iu(xy.atom(0)), _iu(xy.atom(1))) for xy in pts.nodes("xy")) if pts is not None else ()
    elif kind == "rectangle":
        geometry = tuple((_iu(n.atom(0)), _iu(n.atom(1))) for n in (node.first("start"), node.first("end"))
                         if n is not None)
    elif kind == "circle":
        center = node.first("center")
        geometry = ((_iu(center.atom(0)), _iu(center.atom(1))) if center is not None else (0, 0),
                    _iu(node.value("radius")))
    else:
        geometry = _arc(node, version)
    return (unit, body, kind, geometry, _stroke_fill(node))


def _arc(node: Node, version: int) -> tuple:
    """An arc as KiCad 9 loads it (SCH_IO_KICAD_SEXPR_PARSER::parseSymbolArc): its ends (in
    either order) and its centre, with Y pointing down.

    A KiCad 6+ arc is written start, mid, end and its centre computed; in a file older than
    KiCad 7 (version 20230121 or less) an arc of more than 180 degrees is turned into its
    complement and one of exactly 180 degrees is redrawn as 179.5. An older library's arc gives
    its centre (``radius (at ..)``).
    """
    def point(n: Node | None) -> tuple[int, int]:
        return (_iu(n.atom(0)), -_iu(n.atom(1))) if n is not None else (0, 0)

    start, end = point(node.first("start")), point(node.first("end"))
    mid, radius = node.first("mid"), node.first("radius")
    if mid is not None:
        center = _circle_center(start, point(mid), end)
        if version <= 20230121:
            angle = _arc_angle(start, end, center)
            if angle > 180:
                start, end = end, start
                center = _center_for_angle(start, end, 360 - angle)
            elif angle == 180:
                center = _center_for_angle(start, end, 179.5)
    elif radius is not None and radius.first("at") is not None:
        center = point(radius.first("at"))
    else:
        center = start
    # The ends are compared in either order: a file saved since has them the other way round
    # (the pspice demo's INDUCTOR, which KiCad 9.0.8 does not flag).
    return (*sorted((start, end)), center)


def _angle_of(x: float, y: float) -> float:
    """EDA_ANGLE( VECTOR2D ) in degrees (exact on the axes, -180 on the negative X axis)."""
    if x == 0:
        return 0.0 if y == 0 else (-90.0 if y < 0 else 90.0)
    if y == 0:
        return -180.0 if x < 0 else 0.0
    return math.degrees(math.atan2(y, x))


def _arc_angle(start: tuple[int, int], end: tuple[int, int], center: tuple[int, int]) -> float:
    """EDA_SHAPE::CalcArcAngles: end angle minus start angle, in (0, 360]."""
    a_start = _angle_of(start[0] - center[0], start[1] - center[1])
    a_end = _angle_of(end[0] - center[0], end[1] - center[1])
    if a_end == a_start:
        a_end = a_start + 360
    while a_end < a_start:
        a_end += 360
    return a_end - a_start


def _center_for_angle(start: tuple[int, int], end: tuple[int, int], angle: float) -> tuple[int, int]:
    """CalcArcCenter( start, end, angle ): the centre of the arc from start to end through ``angle``."""
    if angle > 180:
        start, end = end, start
        angle = 360 - angle
    dx, dy = end[0] - start[0], end[1] - start[1]
    chord = math.hypot(dx, dy)
    if chord == 0:
        return start
    r = (chord / 2) / math.sin(math.radians(angle / 2))
    d = math.sqrt(max(r * r - chord * chord / 4, 0.0))
    ux, uy = dx / chord, dy / chord
    # the half-chord along the chord, then d along the chord rotated by -90 degrees (x, y) -> (-y, x)
    cx = start[0] + ux * chord / 2 - uy * d
    cy = start[1] + uy * chord / 2 + ux * d
    return _round(cx), _round(cy)


def _round(value: float) -> int:
    return int(math.floor(value + 0.5)) if value >= 0 else -int(math.floor(-value + 0.5))


def _circle_center(a: tuple[int, int], b: tuple[int, int], c: tuple[int, int]) -> tuple[int, int]:
    ax, ay, bx, by, cx, cy = float(a[0]), float(a[1]), float(b[0]), float(b[1]), float(c[0]), float(c[1])
    d = 2 * (ax * (by - cy) + bx * (cy - ay) + cx * (ay - by))
    if d == 0:
        return b
    ux = ((ax * ax + ay * ay) * (by - cy) + (bx * bx + by * by) * (cy - ay) + (cx * cx + cy * cy) * (ay - by)) / d
    uy = ((ax * ax + ay * ay) * (cx - bx) + (bx * bx + by * by) * (ax - cx) + (cx * cx + cy * cy) * (bx - ax)) / d
    return _round(ux), _round(uy)


def _text_size(node: Node | None) -> tuple:
    if node is None:
        return ()
    effects = node.first("effects")
    if type(effects) is Effects:      # read as one node: its size by place
        return (_iu(effects[1]), _iu(effects[2]))
    font = effects.first("font") if effects is not None else None
    size = font.first("size") if font is not None else None
    return (_iu(size.atom(0)), _iu(size.atom(1))) if size is not None else ()


def _pin(node: Node, unit: int, body: int) -> tuple[tuple, tuple]:
    if type(node) is Pin:   # read as one node: its words by place, its effects as Effects
        _, kind, shape, x, y, angle, length, hide, name, name_effects, number, number_effects, _, _ = node
        # node.flag("hide"): a bare atom "hide" first, else the (hide ..) list; then (hide ..) not "no".
        flag = True if "hide" in (kind, shape) else (hide in ("yes", "true")) if hide else None
        return (number, unit, body), (
            _iu(x), _iu(y), round(float(angle)) if angle else 0, _iu(length), kind, shape, name,
            bool(flag) or (bool(hide) and hide != "no"), (_iu(name_effects[1]), _iu(name_effects[2])),
            (_iu(number_effects[1]), _iu(number_effects[2])), ())
    # The first child list of each name, in one pass (reversed: the first one wins); pins
    # are most of a symbol's signature (thousands on the video demo).
    fields = {item[0]: item for item in reversed(node[1:-2]) if type(item) is not str}
    at, name, number, hide, length = (fields.get("at"), fields.get("name"), fields.get("number"),
                                      fields.get("hide"), fields.get("length"))
    key = ((number.atom(0) if number is not None else "") or "", unit, body)
    hidden = bool(node.flag("hide")) or (hide is not None and hide.atom(0) != "no")
    angle = at.atom(2) if at is not None else None
    value = (_iu(at.atom(0)) if at is not None else 0, _iu(at.atom(1)) if at is not None else 0,
             round(float(angle or 0)) if angle else 0,
             _iu(length.atom(0) if length is not None else None), node.atom(0) or "", node.atom(1) or "",
             (name.atom(0) if name is not None else "") or "", hidden, _text_size(name), _text_size(number),
             tuple((alt.atom(0) or "", alt.atom(1) or "", alt.atom(2) or "") for alt in node.nodes("alternate"))
             if "alternate" in fields else ())
    return key, value


def _field(node: Node) -> tuple[str, tuple]:
    name = node.atom(0) or ""
    effects = node.first("effects")
    if type(effects) is Effects:      # read as one node: (hide word) is its fifth item, "" without one
        hidden = effects[4] not in ("", "no")
    else:
        hidden = bool(effects is not None and (effects.flag("hide") or (
            effects.first("hide") is not None and effects.first("hide").atom(0) != "no")))
    if type(node) is Property:        # read as one node: its (hide word) by place, "" without one
        hidden = hidden or node[6] not in ("", "no")
    else:
        hide = node.first("hide")
        hidden = hidden or (hide is not None and hide.atom(0) != "no")
    return name, (node.atom(1) or "", hidden)


# Schematic and symbol library format 20250318: "~" is text, no longer an empty name.
TILDE_IS_TEXT = 20250318


def symbol_signature(definition: Node, parent: Node | None = None, embedded: bool = False,
                     version: int = 99999999) -> tuple:
    """What KiCad's ERC compares of a library symbol, as one comparable value.

    ``parent`` is the symbol a library symbol ``extends`` (flattened as KiCad's
    LIB_SYMBOL::Flatten does); embedded copies (``embedded``: read from a
    schematic) are flat already. ``version`` is the file's format version (its arcs load
    differently before KiCad 7).
    """
    base = parent if parent is not None else definition
    power = base.first("power")
    power_kind = (power.atom(0) or "global") if power is not None else ("global" if base.flag("power") else "")
    shapes: list[tuple] = []
    pins: dict[tuple, tuple] = {}
    units: set[int] = set()
    for sub in base.nodes("symbol"):
        unit, body = _unit_body(sub.atom(0) or "")
        if unit:
            units.add(unit)
        for child in sub.nodes():
            if child[0] in _SHAPES:
                shapes.append(_shape(child, unit, body, version))
            elif child[0] == "pin":
                key, value = _pin(child, unit, body)
                pins.setdefault(key, value)
    fields: dict[str, tuple] = {}
    keywords, filters = "", ""
    legacy_sim = False
    for source in ((base, definition) if parent is not None else (definition,)):
        for prop in source.nodes("property"):
            name, value = _field(prop)
            if name == "ki_keywords":
                keywords = value[0] if value[0] or source is base else keywords
                continue
            if name == "ki_fp_filters":
                filters = value[0] if value[0] or source is base else filters
                continue
            if name.startswith("ki_") and name != "ki_description":
                continue
            if embedded and name.lower() in _LEGACY_SIM_FIELDS:
                legacy_sim = True
            role = _MANDATORY.get(name.lower(), name) if name.lower() in _MANDATORY else name
            if source is not base and role in _MANDATORY.values() and not value[0]:
                continue        # an empty mandatory field of a derived symbol inherits its parent's
            if role == "Value":
                continue        # the embedded copy's Value is its (possibly renamed, R_1) cache name; KiCad 9.0.8 does not flag that
            fields[role] = value
    for role, hidden in _MANDATORY_DEFAULT_HIDDEN.items():
        fields.setdefault(role, ("", hidden))       # KiCad creates every mandatory field, empty
    if legacy_sim:
        # KiCad 9 moves a schematic's legacy Spice_* fields to Sim.* fields on load
        # (SCH_SCREEN::MigrateSimModels); the library's copy keeps them, so the two differ.
        fields[_MIGRATED] = ("", False)
    if version < TILDE_IS_TEXT:
        # Before format 20250318 ("~ no longer means empty text", KiCad 10's schematic and symbol
        # library formats) a pin named "~" has no name; KiCad 10 reads it so and saves it as "".
        # A library of that age beside a schematic KiCad 10 saved (its "~" pins written "") still
        # matches, as kicad-cli 10.0.7 finds (no lib_symbol_mismatch on tests/fixtures/kicad10).
        pins = {key: value[:6] + ("" if value[6] == "~" else value[6],) + value[7:] for key, value in pins.items()}
    offset_node = base.first("pin_names")
    offset = offset_node.value("offset") if offset_node is not None else None
    return (power_kind, max(units) if units else 1, tuple(sorted(shapes)), tuple(sorted(pins.items())),
            tuple(sorted(fields.items())), tuple(filters.split()), keywords,
            _iu(offset) if offset is not None else DEFAULT_PIN_NAME_OFFSET)


def signatures_match(embedded: tuple, library: tuple) -> bool:
    """LIB_SYMBOL::Compare(...) == 0 under ERC: exact, except shapes' points and widths within EPSILON."""
    if embedded[:2] != library[:2] or embedded[3:] != library[3:]:
        return False
    shapes_a, shapes_b = embedded[2], library[2]
    return len(shapes_a) == len(shapes_b) and all(_shapes_match(a, b) for a, b in zip(shapes_a, shapes_b))


def _shapes_match(a: tuple, b: tuple) -> bool:
    unit_a, body_a, kind_a, geometry_a, (width_a, style_a, fill_a) = a
    unit_b, body_b, kind_b, geometry_b, (width_b, style_b, fill_b) = b
    if (unit_a, body_a, kind_a, style_a, fill_a) != (unit_b, body_b, kind_b, style_b, fill_b):
        return False
    if abs(width_a - width_b) > EPSILON or len(geometry_a) != len(geometry_b):
        return False
    for pa, pb in zip(geometry_a, geometry_b):
        if isinstance(pa, int):
            if abs(pa - pb) > EPSILON:
                return False
        elif abs(pa[0] - pb[0]) > EPSILON or abs(pa[1] - pb[1]) > EPSILON:
            return False
    return True


def file_version(file_node: Node) -> int:
    try:
        return int(file_node.value("version") or 99999999)
    except ValueError:
        return 99999999


# -- the libraries available here -----------------------------------------------------

def project_library_paths(table: Node | None, project_folder: Path) -> dict[str, Path | None]:
    """Nickname -> library file inside the project folder (None: listed but not readable here)."""
    paths: dict[str, Path | None] = {}
    if table is None:
        return paths
    folder = Path(os.path.abspath(project_folder))
    for lib in table.nodes("lib"):
        name = lib.value("name") or ""
        uri = (lib.value("uri") or "").replace("\\", "/")
        disabled = lib.first("disabled") is not None
        path = None
        if not disabled and uri.startswith("${KIPRJMOD}/") and (lib.value("type") or "KiCad") == "KiCad":
            candidate = Path(os.path.normpath(folder / uri[len("${KIPRJMOD}/"):]))
            if candidate.is_relative_to(folder) and candidate.suffix == ".kicad_sym":
                path = candidate
        paths.setdefault(name, path)
    return paths


def installed_library_folder() -> Path | None:
    """KiCad's standard symbol libraries where the checker runs, if any."""
    for variable in ("KICAD9_SYMBOL_DIR", "KICAD_SYMBOL_DIR"):
        if os.environ.get(variable) and Path(os.environ[variable]).is_dir():
            return Path(os.environ[variable])
    for folder in _INSTALLED_FOLDERS:
        if Path(folder).is_dir():
            return Path(folder)
    return None


def library_signatures(library: Node) -> LibrarySignatures:
    """Every symbol of a ``.kicad_sym`` file, flattened, by name (each worked out when first asked for)."""
    # Old libraries write "nickname:name"; KiCad keeps the item name only.
    definitions = {(node.atom(0) or "").rpartition(":")[2]: node for node in library.nodes("symbol")}
    return LibrarySignatures(definitions, file_version(library))


class LibrarySignatures:
    """A library's flattened symbol signatures by name, each made on its first ``get``.

    A schematic places a few of a library's symbols (40 of the video demo's 128):
    the rest are never compared, so never flattened. A symbol whose text cannot be
    read as numbers is None, not compared, like a library that cannot be read."""

    def __init__(self, definitions: dict[str, Node], version: int):
        self._definitions = definitions
        self._version = version
        self._made: dict[str, tuple | None] = {}

    def __len__(self) -> int:
        return len(self._definitions)

    def __contains__(self, name: str) -> bool:
        return name in self._definitions

    def get(self, name: str, default=None):
        if name not in self._definitions:
            return default
        if name not in self._made:
            self._made[name] = self._signature(name)
        made = self._made[name]
        return default if made is None else made

    def _signature(self, name: str) -> tuple | None:
        definitions = self._definitions
        definition, parent, seen = definitions[name], None, {name}
        extends = (definition.value("extends") or "").rpartition(":")[2]
        while extends and extends in definitions and extends not in seen:
            seen.add(extends)
            parent = definitions[extends]
            extends = (parent.value("extends") or "").rpartition(":")[2]
        try:
            return symbol_signature(definition, parent, version=self._version)
        except ValueError:
            return None


@dataclass
class Libraries:
    """The symbol libraries this run can compare against, read once each and on demand."""

    project_folder: Path
    project: dict[str, Path | None] = field(default_factory=dict)   # the project's sym-lib-table
    installed: Path | None = None                                   # KiCad's standard libraries here
    _read: dict[str, LibrarySignatures | None] = field(default_factory=dict)

    def symbols(self, nickname: str, reader) -> tuple[LibrarySignatures | None, bool]:
        """(flattened signatures by symbol name or None when unavailable, from an installed library)."""
        if nickname in self.project:
            path, installed = self.project[nickname], False
        elif self.installed is not None and nickname and "/" not in nickname and "\\" not in nickname:
            path, installed = self.installed / f"{nickname}.kicad_sym", True
        else:
            return None, False
        if nickname not in self._read:
            self._read[nickname] = _read_library(path, reader, installed)
        return self._read[nickname], installed


def _read_library(path: Path | None, reader, installed: bool) -> LibrarySignatures | None:
    if path is None or not path.is_file():
        return None
    try:
        if installed:
            from .project import InputReader  # a library outside the repository: its own bounded reader

            reader = InputReader(path.parent, reader.limits)
        return library_signatures(reader.read_sexpr(path))
    except (HostileInputError, OSError, ValueError):
        return None         # unreadable here: not compared, as KiCad would report it elsewhere


def available_libraries(project_folder: Path, reader) -> Libraries:
    table_path = project_folder / "sym-lib-table"
    table = None
    if table_path.is_file():
        try:
            table = reader.read_sexpr(table_path)
        except (HostileInputError, OSError, ValueError):
            table = None
    return Libraries(project_folder=project_folder, project=project_library_paths(table, project_folder),
                     installed=installed_library_folder())

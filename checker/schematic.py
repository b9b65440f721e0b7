"""The schematic hierarchy: sheets, symbol instances and their real references.

Format facts this module exists to get right:

* KiCad 6 keeps the per-instance references of every symbol in the *root*
  schematic's ``symbol_instances`` (paths ``/<sheet uuid>.../<symbol uuid>``);
  the ``Reference`` property inside a sub-sheet file is only the last one
  written and is wrong for a sheet used twice.
* From KiCad 7 each symbol carries ``(instances (project ...) (path
  "/<root uuid>/<sheet uuid>..." (reference ..) (unit ..)))``.
* A sheet file used twice yields two instances with different references.
* KiCad 6 sheet fields can be localised ("Sheet file" in another language),
  so the sheet file is field id 1, not a field name; KiCad 7+ write the fixed
  names ``Sheetname``/``Sheetfile`` without ids.
* Flags are bare atoms in KiCad 6 (``hide``) and ``(dnp yes)`` from KiCad 7.
"""
from __future__ import annotations

import os
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path

from . import connectivity
from .errors import HostileInputError, NotKicadFile, SheetCycle, TooManySheetInstances
from .project import InputReader
from .sexpr import Located, Location, Node
from .versions import parse_version


@dataclass
class SymbolInstance(Located):
    reference: str
    unit: int
    lib_id: str
    value: str
    footprint: str
    fields: dict[str, str]
    in_bom: bool
    on_board: bool
    dnp: bool
    uuid: str
    instance_path: str          # "/<sheet uuid>.../<symbol uuid>": unique per placed instance
    sheet_path: str             # human sheet path, "/ampli_ht_vertical/"
    file: str                   # repository-relative schematic file holding the symbol
    location: Location          # line and column on demand: most symbols never appear in a finding
    is_power: bool

    @property
    def is_virtual(self) -> bool:
        """Power flags and other '#' symbols never reach the board or the BOM."""
        return self.is_power or self.reference.startswith("#")


@dataclass
class SheetProblem:
    """A sheet whose file is missing or unreadable (not hostile, just broken)."""

    sheet_name: str
    sheet_file: str
    parent_file: str
    line: int
    column: int
    reason: str


@dataclass
class Schematic:
    root_file: str
    version: int | None
    versions: dict[str, int | None] = field(default_factory=dict)
    title_block: dict[str, str] = field(default_factory=dict)
    title_block_location: Location | None = None
    symbols: list[SymbolInstance] = field(default_factory=list)
    sheet_instances: int = 1
    files: list[str] = field(default_factory=list)
    problems: list[SheetProblem] = field(default_factory=list)
    uuids: dict[str, tuple[str, Location]] = field(default_factory=dict)  # uuid -> file, where in it
    screens: dict[str, connectivity.Screen] = field(default_factory=dict)  # file -> its connectable items
    instances: list[connectivity.SheetInstance] = field(default_factory=list)  # every sheet use, root first
    _connectivity: connectivity.Connectivity | None = None

    @property
    def connectivity(self) -> connectivity.Connectivity:
        """Subgraphs and nets of the whole hierarchy, built on first use."""
        if self._connectivity is None:
            references = {symbol.instance_path: symbol.reference for symbol in self.symbols}
            self._connectivity = connectivity.build(self.screens, self.instances, references)
        return self._connectivity

    @property
    def title_block_line(self) -> int:
        return self.title_block_location.line if self.title_block_location is not None else 1

    def footprint_by_reference(self) -> dict[str, str]:
        """A reference's footprint as KiCad takes it: the first of its units that has one
        (a unit placed with an empty Footprint field does not empty the part's)."""
        found: dict[str, str] = {}
        for symbol in self.symbols:
            if symbol.footprint.strip() and symbol.reference not in found:
                found[symbol.reference] = symbol.footprint
        return found

    def position_of(self, uuid: str) -> tuple[str, int, int] | None:
        """File, line and column of the item with this uuid (KiCad's ERC report names items by uuid)."""
        found = self.uuids.get(uuid)
        return (found[0], found[1].line, found[1].column) if found is not None else None


@dataclass
class _Pending:
    file: Path
    chain: tuple[str, ...]          # sheet uuids from the root down to this instance
    names: tuple[str, ...]          # sheet names, for the human sheet path
    ancestors: tuple[str, ...]      # real paths of the files above, for cycle detection
    parent: connectivity.SheetInstance | None = None
    sheet: connectivity.SheetBox | None = None


def load_schematic(root_file: Path, reader: InputReader, project_name: str) -> Schematic:
    """Walk the hierarchy breadth first, without recursion, counting instances."""
    limits = reader.limits
    parsed: dict[str, Node] = {}
    root_rel = reader.relative(root_file)
    result = Schematic(root_file=root_rel, version=None)
    root_node = _parse_file(root_file, reader, parsed)
    result.version = parse_version(root_node.value("version"))
    root_uuid = root_node.value("uuid") or ""
    title = root_node.first("title_block")
    if title is not None:
        result.title_block_location = title.location
        for child in title.nodes():
            if child.name in ("title", "date", "rev", "company") and child.atom(0) is not None:
                result.title_block[child.name] = child.atom(0) or ""
    legacy_instances = _kicad6_symbol_instances(root_node)
    queue = deque([_Pending(root_file, (), (), ())])
    instances = 1
    while queue:
        pending = queue.popleft()
        rel = reader.relative(pending.file)
        node = parsed.get(os.path.realpath(pending.file)) or _parse_file(pending.file, reader, parsed)
        if rel not in result.files:
            result.files.append(rel)
            result.versions[rel] = parse_version(node.value("version"))
        _collect_uuids(node, rel, result.uuids)
        sheet_path = "/" + "".join(name + "/" for name in pending.names)
        screen = result.screens.get(rel)
        first_use = screen is None
        if screen is None:
            screen = result.screens[rel] = connectivity.read_screen(node, rel)
        instance = connectivity.SheetInstance(chain=pending.chain, path=sheet_path, screen=screen,
                                              parent=pending.parent, sheet=pending.sheet)
        result.instances.append(instance)
        boxes = {box.uuid: box for box in screen.sheets}
        power_symbols = _power_symbols(node)
        for symbol in node.nodes("symbol"):
            placed = _instance(symbol, pending, rel, sheet_path, root_uuid, project_name, legacy_instances,
                               power_symbols)
            result.symbols.append(placed)
            if first_use:
                connectivity.place_unit(screen, symbol, placed.unit)
        connectivity.refresh_pins(screen)
        here = os.path.realpath(pending.file)
        for sheet in node.nodes("sheet"):
            sheet_name, sheet_file = _sheet_fields(sheet)
            sheet_uuid = sheet.value("uuid") or ""
            instances += 1
            if instances > limits.max_sheet_instances:
                raise TooManySheetInstances(
                    f"more than {limits.max_sheet_instances} sheet instances in the hierarchy",
                    path=rel, line=sheet.line, column=sheet.column)
            if not sheet_file:
                result.problems.append(SheetProblem(sheet_name, "", rel, sheet.line, sheet.column,
                                                    "the sheet names no file"))
                continue
            child = reader.resolve_inside(pending.file.parent, sheet_file, what="sheet file")
            child_real = os.path.realpath(child)
            if child_real == here or child_real in pending.ancestors:
                raise SheetCycle(f"sheet {sheet_name!r} includes {sheet_file!r}, which includes it back",
                                 path=rel, line=sheet.line, column=sheet.column)
            if not os.path.lexists(child):
                result.problems.append(SheetProblem(sheet_name, sheet_file, rel, sheet.line, sheet.column,
                                                    "the sheet file does not exist"))
                continue
            if child_real not in parsed:
                try:
                    _parse_file(child, reader, parsed)
                except (NotKicadFile, OSError) as exc:
                    reason = exc.message if isinstance(exc, HostileInputError) else str(exc)
                    result.problems.append(SheetProblem(sheet_name, sheet_file, rel, sheet.line,
                                                        sheet.column, f"unreadable: {reason}"))
                    continue
            queue.append(_Pending(child, pending.chain + (sheet_uuid,), pending.names + (sheet_name,),
                                  pending.ancestors + (here,), instance, boxes.get(sheet_uuid)))
    result.sheet_instances = instances
    return result


def _parse_file(path: Path, reader: InputReader, parsed: dict[str, Node]) -> Node:
    node = reader.read_sexpr(path)
    if node.name != "kicad_sch":
        raise NotKicadFile(f"expected (kicad_sch ...), found ({node.name} ...)", path=reader.relative(path),
                           line=node.line, column=node.column)
    parsed[os.path.realpath(path)] = node
    return node


_NAMED_IN_ERC = frozenset(("symbol", "sheet", "wire", "label", "global_label", "hierarchical_label",
                           "junction", "no_connect", "bus", "text"))


def _collect_uuids(node: Node, rel: str, into: dict[str, tuple[str, Location]]) -> None:
    """uuid -> location for the items KiCad's ERC report names."""
    for child in node.nodes():
        if child[0] in _NAMED_IN_ERC:
            uuid = child.value("uuid")
            if uuid and uuid not in into:
                into[uuid] = (rel, child.location)


def _sheet_fields(sheet: Node) -> tuple[str, str]:
    """(sheet name, sheet file) by field id (KiCad 6) or canonical name (7+)."""
    by_id: dict[str, str] = {}
    by_name: dict[str, str] = {}
    ordered: list[str] = []
    for prop in sheet.nodes("property"):
        name, value = prop.atom(0), prop.atom(1)
        if name is None or value is None:
            continue
        ordered.append(value)
        by_name[name] = value
        field_id = prop.value("id")
        if field_id is not None:
            by_id[field_id] = value
    sheet_name = by_id.get("0") or by_name.get("Sheetname") or by_name.get("Sheet name") or (ordered[0] if ordered else "")
    sheet_file = by_id.get("1") or by_name.get("Sheetfile") or by_name.get("Sheet file") or (ordered[1] if len(ordered) > 1 else "")
    return sheet_name, sheet_file


def _kicad6_symbol_instances(root: Node) -> dict[str, tuple[str, int]] | None:
    table = root.first("symbol_instances")
    if table is None:
        return None
    found: dict[str, tuple[str, int]] = {}
    for path in table.nodes("path"):
        key = path.atom(0)
        reference = path.value("reference")
        if key and reference is not None:
            found[key] = (reference, _int(path.value("unit"), 1))
    return found


def _instance(symbol: Node, pending: _Pending, rel: str, sheet_path: str, root_uuid: str,
              project_name: str, legacy: dict[str, tuple[str, int]] | None,
              power_symbols: set[str]) -> SymbolInstance:
    uuid = symbol.value("uuid") or ""
    fields: dict[str, str] = {}
    for prop in symbol.nodes("property"):
        name, value = prop.atom(0), prop.atom(1)
        if name is not None and value is not None:
            fields[name] = value
    reference = fields.get("Reference", "")
    unit = _int(symbol.value("unit"), 1)
    instance_path = "/" + "".join(part + "/" for part in pending.chain) + uuid
    if legacy is not None and instance_path in legacy:
        reference, unit = legacy[instance_path]
    else:
        chosen = _kicad7_instance(symbol, pending.chain, root_uuid, project_name)
        if chosen is not None:
            reference, unit = chosen
    lib_id = symbol.value("lib_id") or ""
    return SymbolInstance(
        reference=reference,
        unit=unit,
        lib_id=lib_id,
        value=fields.get("Value", ""),
        footprint=fields.get("Footprint", ""),
        fields=fields,
        in_bom=symbol.flag("in_bom") is not False,
        on_board=symbol.flag("on_board") is not False,
        dnp=bool(symbol.flag("dnp")),
        uuid=uuid,
        instance_path=instance_path,
        sheet_path=sheet_path,
        file=rel,
        location=symbol.location,
        is_power=lib_id in power_symbols,
    )


def _kicad7_instance(symbol: Node, chain: tuple[str, ...], root_uuid: str,
                     project_name: str) -> tuple[str, int] | None:
    block = symbol.first("instances")
    if block is None:
        return None
    candidates: list[tuple[bool, list[str], Node]] = []
    for project in block.nodes("project"):
        ours = project.atom(0) == project_name
        for path in project.nodes("path"):
            parts = [p for p in (path.atom(0) or "").split("/") if p]
            candidates.append((ours, parts, path))
    # Exact path first (root uuid then the sheet chain), then the chain alone
    # (a root uuid changed by copying the project), our project before others.
    for ours_only in (True, False):
        for ours, parts, path in candidates:
            if ours_only and not ours:
                continue
            if parts == [root_uuid, *chain] or parts[1:] == list(chain):
                return path.value("reference") or "", _int(path.value("unit"), 1)
    if not chain and len(candidates) == 1:
        path = candidates[0][2]
        return path.value("reference") or "", _int(path.value("unit"), 1)
    return None


def _power_symbols(file_node: Node) -> set[str]:
    """Library symbols marked ``(power)`` in this file's embedded library."""
    names: set[str] = set()
    lib_symbols = file_node.first("lib_symbols")
    if lib_symbols is not None:
        for definition in lib_symbols.nodes("symbol"):
            if definition.first("power") is not None or definition.flag("power"):
                names.add(definition.atom(0) or "")
    return names


def _int(text: str | None, default: int) -> int:
    try:
        return int(text) if text is not None else default
    except ValueError:
        return default

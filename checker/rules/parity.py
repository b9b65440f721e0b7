"""Schematic/board parity: every on-board symbol has its footprint, and no more, under the same
reference and with the same footprint."""
from __future__ import annotations

from ..board import Footprint
from ..findings import Finding, where_in
from ..model import ProjectModel
from ..schematic import SymbolInstance
from .schematic_rules import is_unannotated


def _board_only(footprint) -> bool:
    # Logos, fiducials and mounting holes drawn only on the board carry no
    # schematic link; KiCad 7+ marks them board_only, KiCad 6 leaves path empty.
    # KiCad marks them board_only ("not in schematic"); unannotated ones are
    # reported by board.unannotated instead of twice.
    return ("board_only" in footprint.attributes or not footprint.reference
            or footprint.reference.startswith(("#", "REF**")) or is_unannotated(footprint.reference))


def _same_footprint(schematic_id: str, board_id: str) -> bool:
    """KiCad 5-era boards store the footprint name without its library."""
    if ":" in schematic_id and ":" in board_id:
        return schematic_id == board_id
    return schematic_id.split(":", 1)[-1] == board_id.split(":", 1)[-1]


def check(model: ProjectModel) -> list[Finding]:
    schematic, board = model.schematic, model.board
    if schematic is None or board is None or not schematic.symbols:
        return []
    symbols: dict[str, SymbolInstance] = {}       # reference -> its first unit with a footprint, else first placed
    references_by_path: dict[str, str] = {}       # every unit's instance path -> its reference
    for symbol in schematic.symbols:
        if symbol.is_virtual or not symbol.on_board or is_unannotated(symbol.reference):
            continue
        known = symbols.get(symbol.reference)
        if known is None or (not known.footprint.strip() and symbol.footprint.strip()):
            symbols[symbol.reference] = symbol
        references_by_path[symbol.instance_path] = symbol.reference
    # A footprint names the symbol it was made from by the symbol's instance
    # path (sheet uuids, then the symbol's uuid); KiCad itself pairs them that
    # way. Pairing by path first means a reference renamed on one side only is
    # one mismatch, not a missing part plus an extra one. Footprints without a
    # usable path (KiCad 5 boards, hand-placed ones) fall back to the reference.
    pairs: list[tuple[SymbolInstance, Footprint]] = []
    unpaired_footprints: dict[str, Footprint] = {}
    paired_references: set[str] = set()
    for footprint in board.footprints:
        reference = references_by_path.get(footprint.sheet_link)
        if reference is not None and reference not in paired_references:
            paired_references.add(reference)
            pairs.append((symbols[reference], footprint))
        else:
            unpaired_footprints.setdefault(footprint.reference, footprint)
    for reference, footprint in list(unpaired_footprints.items()):
        if reference in symbols and reference not in paired_references:
            paired_references.add(reference)
            pairs.append((symbols[reference], footprint))
            del unpaired_footprints[reference]
    findings: list[Finding] = []
    for symbol, footprint in sorted(pairs, key=lambda pair: pair[0].reference):
        findings += _compare(symbol, footprint, board.file)
    for reference, symbol in sorted(symbols.items()):
        if reference not in paired_references:
            findings.append(Finding("parity.missing-footprint",
                                    f"{reference} ({symbol.value}) is in the schematic but not on the board",
                                    identity=(reference,), **where_in(symbol.file, symbol)))
    for reference, footprint in sorted(unpaired_footprints.items()):
        # A second footprint under a schematic reference is a duplicate, which
        # board.duplicate-reference reports; it is not missing from the schematic.
        if reference not in symbols and not _board_only(footprint):
            findings.append(Finding("parity.extra-footprint",
                                    f"{reference} ({footprint.lib_id}) is on the board but not in the schematic",
                                    identity=(reference,), path=board.file, line=footprint.line,
                                    column=footprint.column, extra={"x": footprint.x, "y": footprint.y}))
    return findings


def _compare(symbol: SymbolInstance, footprint: Footprint, board_file: str) -> list[Finding]:
    findings = []
    if footprint.reference == symbol.reference and not (
            symbol.footprint and footprint.lib_id and not _same_footprint(symbol.footprint, footprint.lib_id)):
        return findings   # the usual case: no position needed
    where = dict(path=board_file, line=footprint.line, column=footprint.column,
                 extra={"x": footprint.x, "y": footprint.y})
    if footprint.reference != symbol.reference:
        findings.append(Finding("parity.reference-mismatch",
                                f"{symbol.reference} in the schematic is {footprint.reference or '(no reference)'} "
                                f"on the board", identity=(symbol.instance_path,), **where))
    if symbol.footprint and footprint.lib_id and not _same_footprint(symbol.footprint, footprint.lib_id):
        findings.append(Finding("parity.footprint-mismatch",
                                f"{symbol.reference}: schematic says {symbol.footprint}, board has {footprint.lib_id}",
                                identity=(symbol.reference, symbol.footprint, footprint.lib_id), **where))
    return findings

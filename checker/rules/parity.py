"""Schematic/board parity: every on-board symbol has its footprint, and no more."""
from __future__ import annotations

from ..findings import Finding
from ..model import ProjectModel
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
    findings: list[Finding] = []
    symbols: dict[str, object] = {}
    for symbol in schematic.symbols:
        if symbol.is_virtual or not symbol.on_board or is_unannotated(symbol.reference):
            continue
        symbols.setdefault(symbol.reference, symbol)
    footprints = {}
    for footprint in board.footprints:
        footprints.setdefault(footprint.reference, footprint)
    for reference, symbol in sorted(symbols.items()):
        footprint = footprints.get(reference)
        if footprint is None:
            findings.append(Finding("parity.missing-footprint",
                                    f"{reference} ({symbol.value}) is in the schematic but not on the board",
                                    identity=(reference,), path=symbol.file, line=symbol.line, column=symbol.column))
        elif symbol.footprint and footprint.lib_id and not _same_footprint(symbol.footprint, footprint.lib_id):
            findings.append(Finding("parity.footprint-mismatch",
                                    f"{reference}: schematic says {symbol.footprint}, board has {footprint.lib_id}",
                                    identity=(reference, symbol.footprint, footprint.lib_id),
                                    path=board.file, line=footprint.line, column=footprint.column,
                                    extra={"x": footprint.x, "y": footprint.y}))
    for reference, footprint in sorted(footprints.items()):
        if reference not in symbols and not _board_only(footprint):
            findings.append(Finding("parity.extra-footprint",
                                    f"{reference} ({footprint.lib_id}) is on the board but not in the schematic",
                                    identity=(reference,), path=board.file, line=footprint.line,
                                    column=footprint.column, extra={"x": footprint.x, "y": footprint.y}))
    return findings

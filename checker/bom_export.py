"""The run result's `bom` section: the schematic's parts grouped into BOM lines.

The hosted service never reads repository contents, so the BOM travels with
the run result: one line per distinct (value, footprint, manufacturer, MPN,
DNP), with its reference designators and quantity, and where the first of
its symbols sits in the schematic (for findings about that line). Virtual
symbols (power flags), unannotated ones and those excluded from the BOM are
left out, as KiCad's own BOM export leaves them out. The count is bounded by
the checker's BOM row guard (Limits.max_bom_rows).
"""
from __future__ import annotations

from .errors import BomTooLarge
from .model import ProjectModel
from .rules.schematic_rules import is_unannotated

MANUFACTURER_FIELDS = ("Manufacturer", "Manufacturer_Name", "Manufacturer Name", "MFR", "Mfr", "MANUFACTURER")
# The contract's string bounds (contracts/run-result.schema.json, $defs/bomLine).
_TEXT_MAX = 255
_REFERENCES_MAX = 10_000


def _first_field(fields: dict[str, str], names) -> str:
    for name in names:
        value = (fields.get(name) or "").strip()
        if value:
            return value[:_TEXT_MAX]
    return ""


def bom_lines(model: ProjectModel, max_rows: int) -> list[dict]:
    schematic = model.schematic
    if schematic is None:
        return []
    by_reference = {}
    for symbol in schematic.symbols:
        if symbol.is_virtual or not symbol.in_bom or is_unannotated(symbol.reference):
            continue
        by_reference.setdefault(symbol.reference, symbol)   # one entry per multi-unit part
    lines: dict[tuple, dict] = {}
    footprints = schematic.footprint_by_reference()     # a multi-unit part's, from whichever unit has it
    for reference, symbol in sorted(by_reference.items(), key=lambda item: _natural(item[0])):
        manufacturer = _first_field(symbol.fields, MANUFACTURER_FIELDS)
        mpn = _first_field(symbol.fields, model.config.mpn_fields)
        footprint = footprints.get(reference, symbol.footprint)
        key = (symbol.value, footprint, manufacturer, mpn, symbol.dnp)
        line = lines.get(key)
        if line is None:
            if len(lines) >= max_rows:
                raise BomTooLarge(f"more than {max_rows} BOM lines", path=symbol.file, line=symbol.line)
            line = lines[key] = {"references": [], "quantity": 0, "value": symbol.value[:_TEXT_MAX],
                                 "footprint": footprint[:_TEXT_MAX], "dnp": symbol.dnp,
                                 "path": symbol.file, "line": symbol.line}
            if manufacturer:
                line["manufacturer"] = manufacturer
            if mpn:
                line["mpn"] = mpn
        if len(line["references"]) < _REFERENCES_MAX:
            line["references"].append(reference[:64])
        line["quantity"] += 1
    return list(lines.values())


def _natural(reference: str) -> tuple:
    """R2 before R10."""
    head = reference.rstrip("0123456789")
    tail = reference[len(head):]
    return (head, int(tail) if tail else -1, reference)

"""What a change did to a schematic: the sheets whose files changed, and the
symbols added, removed or changed (value, footprint, library symbol, DNP, in
BOM, on board), matched by reference as a hardware reviewer names them.

Only annotated symbols that reach the board or the BOM count (power flags and
"R?" are left out, as the BOM leaves them out); a multi-unit part is its first
unit. The sheets are compared by the SHA-256 of their files.
"""
from __future__ import annotations

import hashlib
from pathlib import Path

from .rules.schematic_rules import is_unannotated
from .schematic import Schematic

_FIELDS = ("value", "footprint", "lib", "dnp", "in_bom", "on_board")


def schematic_state(schematic: Schematic | None, root: Path) -> dict:
    """{"symbols": reference -> fields, "sheets": file -> sha256}: what the diff compares."""
    if schematic is None:
        return {"symbols": {}, "sheets": {}}
    symbols: dict[str, dict] = {}
    for symbol in schematic.symbols:
        if symbol.is_virtual or is_unannotated(symbol.reference):
            continue
        symbols.setdefault(symbol.reference, {
            "value": symbol.value, "footprint": symbol.footprint, "lib": symbol.lib_id, "dnp": symbol.dnp,
            "in_bom": symbol.in_bom, "on_board": symbol.on_board, "sheet": symbol.file})
    sheets = {}
    for name in schematic.files:
        try:
            sheets[name] = hashlib.sha256((root / name).read_bytes()).hexdigest()
        except OSError:
            sheets[name] = ""
    return {"symbols": symbols, "sheets": sheets}


def diff_schematic(base: dict, head: dict) -> dict:
    before, after = base["symbols"], head["symbols"]
    changed = []
    for reference in sorted(set(before) & set(after)):
        fields = {k: [before[reference][k], after[reference][k]] for k in _FIELDS
                  if before[reference][k] != after[reference][k]}
        if fields:
            changed.append({"ref": reference, "sheet": after[reference]["sheet"], "changes": fields})
    sheets_before, sheets_after = base["sheets"], head["sheets"]
    return {
        "sheets": {"added": sorted(set(sheets_after) - set(sheets_before)),
                   "removed": sorted(set(sheets_before) - set(sheets_after)),
                   "changed": sorted(s for s in set(sheets_before) & set(sheets_after)
                                     if sheets_before[s] != sheets_after[s])},
        "symbols": {"added": [{"ref": r, **after[r]} for r in sorted(set(after) - set(before))],
                    "removed": [{"ref": r, **before[r]} for r in sorted(set(before) - set(after))],
                    "changed": changed},
    }


def summary(diff: dict) -> list[str]:
    """The schematic's changes in words, one line per kind; nothing when nothing changed."""
    lines = []
    sheets = diff["sheets"]
    for side in ("changed", "added", "removed"):
        if sheets[side]:
            count = len(sheets[side])
            lines.append(f"{count} schematic sheet{'' if count == 1 else 's'} {side}: {', '.join(sheets[side])}")
    symbols = diff["symbols"]
    for side in ("added", "removed"):
        if symbols[side]:
            count = len(symbols[side])
            lines.append(f"{count} symbol{'' if count == 1 else 's'} {side}: "
                         + ", ".join(s["ref"] for s in symbols[side][:20]) + (" …" if count > 20 else ""))
    for change in symbols["changed"][:20]:
        words = "; ".join(f"{field} {before} → {after}" for field, (before, after) in change["changes"].items())
        lines.append(f"{change['ref']}: {words}")
    if len(symbols["changed"]) > 20:
        lines.append(f"… and {len(symbols['changed']) - 20} more changed symbols")
    return lines

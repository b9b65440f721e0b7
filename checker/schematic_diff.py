"""What a change did to a schematic: the sheets whose files changed, and the
symbols added, removed or changed (value, footprint, library symbol, DNP, in
BOM, on board), matched by reference as a hardware reviewer names them.

Only annotated symbols that reach the board or the BOM count (power flags and
"R?" are left out, as the BOM leaves them out); a multi-unit part is its first
unit. The sheets are compared by the SHA-256 of their files; their wires, buses
and labels by their drawing (millimetres), per file.
"""
from __future__ import annotations

import hashlib
from collections import Counter
from pathlib import Path

from .connectivity import LABEL_KINDS
from .rules.schematic_rules import is_unannotated
from .schematic import Schematic
from .schematic_view import mm_flat, mm_point

_FIELDS = ("value", "footprint", "lib", "dnp", "in_bom", "on_board")


def schematic_state(schematic: Schematic | None, root: Path) -> dict:
    """{"symbols": reference -> fields, "sheets": file -> sha256, "wires" and "labels":
    file -> their drawings}: what the diff compares."""
    if schematic is None:
        return {"symbols": {}, "sheets": {}, "wires": {}, "labels": {}}
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
    wires: dict[str, list] = {}
    labels: dict[str, list] = {}
    for name, screen in schematic.screens.items():
        wires[name] = [tuple(mm_flat(item.points)) for item in screen.items if item.kind in ("wire", "bus")]
        labels[name] = [(*mm_point(item.position), item.text) for item in screen.items if item.kind in LABEL_KINDS]
    return {"symbols": symbols, "sheets": sheets, "wires": wires, "labels": labels}


def _drawn_changes(before: dict[str, list], after: dict[str, list]) -> dict:
    """Per sheet file, the items (wires or labels, by their drawing) added and removed."""
    added: dict[str, list] = {}
    removed: dict[str, list] = {}
    for name in sorted(set(before) | set(after)):
        old, new = Counter(before.get(name, ())), Counter(after.get(name, ()))
        if new - old:
            added[name] = [list(item) for item in sorted((new - old).elements())]
        if old - new:
            removed[name] = [list(item) for item in sorted((old - new).elements())]
    return {"added": added, "removed": removed}


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
        "wires": _drawn_changes(base.get("wires", {}), head.get("wires", {})),
        "labels": _drawn_changes(base.get("labels", {}), head.get("labels", {})),
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
    for kind, word in (("wires", "wire"), ("labels", "label")):
        for side in ("added", "removed"):
            for name, items in diff.get(kind, {}).get(side, {}).items():
                lines.append(f"{name}: {len(items)} {word}{'' if len(items) == 1 else 's'} {side}")
    return lines

"""Streaming reader for a BOM CSV, bounded by row count while it streams."""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from .errors import BomTooLarge, MalformedBom
from .project import InputReader
from .sexpr import decode

_REFERENCE_COLUMNS = ("reference", "references", "ref", "refs", "designator", "designators", "refdes")
_RANGE = re.compile(r"^([A-Za-z_#]+)(\d+)\s*-\s*(?:[A-Za-z_#]+)?(\d+)$")
_MAX_CELL = 1024 * 1024


@dataclass
class BomRow:
    line: int
    references: list[str]
    fields: dict[str, str]          # column name -> cell, as written in the header

    def get(self, *names: str) -> str:
        lowered = {k.strip().lower(): v for k, v in self.fields.items()}
        for name in names:
            value = lowered.get(name.lower())
            if value:
                return value.strip()
        return ""


def split_references(cell: str) -> list[str]:
    """'R1, R2 R5-R7' -> R1 R2 R5 R6 R7 (ranges capped to keep hostile cells cheap)."""
    out: list[str] = []
    for part in re.split(r"[,;\s]+(?![-])", cell.strip()):
        part = part.strip()
        if not part:
            continue
        match = _RANGE.match(part)
        if match and int(match.group(3)) - int(match.group(2)) < 1000:
            prefix = match.group(1)
            out.extend(f"{prefix}{n}" for n in range(int(match.group(2)), int(match.group(3)) + 1))
        else:
            out.append(part)
    return out


def read_bom(path: Path, reader: InputReader) -> list[BomRow]:
    import csv  # here, not at import: only a run given a BOM reads one
    import io

    csv.field_size_limit(_MAX_CELL)
    shown = reader.relative(path)
    text = decode(reader.read_bytes(path), shown)
    if text.startswith("\ufeff"):
        text = text[1:]
    sample = text[:4096]
    try:
        dialect = csv.Sniffer().sniff(sample, delimiters=",;\t") if sample.strip() else csv.excel
    except csv.Error:
        dialect = csv.excel
    rows = csv.reader(io.StringIO(text), dialect)
    limit = reader.limits.max_bom_rows
    try:
        header = next(rows, None)
        if not header:
            raise MalformedBom("the BOM has no header row", path=shown, line=1)
        lowered = [h.strip().lower() for h in header]
        ref_column = next((i for i, h in enumerate(lowered) if h in _REFERENCE_COLUMNS), None)
        if ref_column is None:
            raise MalformedBom("no Reference/Designator column in the BOM header", path=shown, line=1)
        out: list[BomRow] = []
        for count, cells in enumerate(rows, start=1):
            if count > limit:
                raise BomTooLarge(f"more than {limit} BOM rows", path=shown, line=rows.line_num)
            if not any(c.strip() for c in cells):
                continue
            fields = {header[i]: cells[i] for i in range(min(len(header), len(cells)))}
            refs = split_references(cells[ref_column]) if ref_column < len(cells) else []
            out.append(BomRow(line=rows.line_num, references=refs, fields=fields))
    except csv.Error as exc:
        raise MalformedBom(str(exc), path=shown, line=rows.line_num) from None
    return out

"""Schematic rules: annotation, duplicates, footprint assignment, title block, sheets."""
from __future__ import annotations

import re
from collections import defaultdict

from .. import erc
from ..findings import Finding, where_in
from ..model import ProjectModel
from .standard_libraries import STANDARD_FOOTPRINT_LIBRARIES

# KiCad's own test: a reference is annotated when it ends in a number
# ("EQ1a101" is annotated, "R?" and "R" are not).
_ANNOTATED = re.compile(r"^\D.*\d$", re.S)


def is_unannotated(reference: str) -> bool:
    return not reference or reference.endswith(("?", "*")) or not _ANNOTATED.match(reference)


def check(model: ProjectModel) -> list[Finding]:
    schematic = model.schematic
    if schematic is None:
        return []
    # The electrical rules, on the connectivity model.
    findings: list[Finding] = erc.check(model) if model.run_erc and erc.wanted(model) else []
    placed = [s for s in schematic.symbols if not s.is_virtual]
    by_reference: dict[str, list] = defaultdict(list)
    for symbol in placed:
        if is_unannotated(symbol.reference):
            findings.append(Finding("sch.unannotated",
                                    f"{symbol.reference or '(empty)'} ({symbol.lib_id}) in sheet {symbol.sheet_path} "
                                    "is not annotated", identity=(symbol.instance_path,), **where_in(symbol.file, symbol)))
            continue
        by_reference[symbol.reference].append(symbol)
    for reference, symbols in sorted(by_reference.items()):
        units: dict[int, list] = defaultdict(list)
        for symbol in symbols:
            units[symbol.unit].append(symbol)
        parts = {s.lib_id for s in symbols}
        clashing = [group for group in units.values() if len(group) > 1]
        if clashing or len(parts) > 1:
            # Point at the second occurrence: the first is the one people keep.
            first = clashing[0][1] if clashing else symbols[1]
            sheets = sorted({s.sheet_path for s in symbols})
            reason = (f"unit {clashing[0][0].unit} is placed {len(clashing[0])} times" if clashing
                      else f"it names different parts ({', '.join(sorted(parts))})")
            findings.append(Finding("sch.duplicate-reference",
                                    f"reference {reference} is used more than once: {reason} (sheets {', '.join(sheets)})",
                                    identity=(reference,), **where_in(first.file, first)))
    known_libraries = model.footprint_libraries | STANDARD_FOOTPRINT_LIBRARIES
    reported: set[str] = set()
    footprints = schematic.footprint_by_reference()   # a multi-unit part's from whichever unit has it
    for symbol in placed:
        if not symbol.on_board or is_unannotated(symbol.reference) or symbol.reference in reported:
            continue
        footprint = footprints.get(symbol.reference, "").strip()
        if not footprint:
            reported.add(symbol.reference)
            on_board = next((f for f in model.board.footprints if f.reference == symbol.reference), None) \
                if model.board is not None else None
            if on_board is not None:
                # The board has the part: the schematic and board disagree (a parity matter), nothing is missing.
                findings.append(Finding("parity.footprint-mismatch",
                                        f"{symbol.reference}: the schematic assigns no footprint, the board has "
                                        f"{on_board.lib_id}", identity=(symbol.reference, "", on_board.lib_id),
                                        **where_in(symbol.file, symbol)))
            else:
                findings.append(Finding("sch.footprint-missing",
                                        f"{symbol.reference} ({symbol.value}) has no footprint",
                                        identity=(symbol.reference,), **where_in(symbol.file, symbol)))
        elif ":" not in footprint:
            reported.add(symbol.reference)
            findings.append(Finding("sch.footprint-no-library",
                                    f"{symbol.reference} footprint {footprint!r} has no library prefix",
                                    identity=(symbol.reference, footprint), **where_in(symbol.file, symbol)))
        else:
            library = footprint.split(":", 1)[0]
            if library not in known_libraries:
                reported.add(symbol.reference)
                findings.append(Finding("sch.footprint-library-unknown",
                                        f"{symbol.reference} uses footprint library {library!r}, which is neither in "
                                        "the project's fp-lib-table nor a standard KiCad library",
                                        identity=(symbol.reference, library), **where_in(symbol.file, symbol)))
    if not schematic.title_block.get("rev", "").strip():
        findings.append(Finding("sch.title-revision-missing", "the root sheet's title block has no revision",
                                identity=(schematic.root_file,), path=schematic.root_file,
                                line=schematic.title_block_line, column=1))
    if not schematic.title_block.get("date", "").strip():
        findings.append(Finding("sch.title-date-missing", "the root sheet's title block has no date",
                                identity=(schematic.root_file,), path=schematic.root_file,
                                line=schematic.title_block_line, column=1))
    for problem in schematic.problems:
        findings.append(Finding("sch.sheet-missing",
                                f"sheet {problem.sheet_name!r} -> {problem.sheet_file!r}: {problem.reason}",
                                identity=(problem.parent_file, problem.sheet_file, problem.sheet_name),
                                path=problem.parent_file, line=problem.line, column=problem.column))
    return findings

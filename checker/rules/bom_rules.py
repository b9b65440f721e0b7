"""BOM rules: MPN-like fields, DNP parts, and a BOM CSV against the schematic."""
from __future__ import annotations

from ..findings import Finding, where_in
from ..model import ProjectModel
from .schematic_rules import is_unannotated


def check(model: ProjectModel) -> list[Finding]:
    schematic = model.schematic
    if schematic is None:
        return []
    findings: list[Finding] = []
    mpn_fields = model.config.mpn_fields
    by_reference = {}
    for symbol in schematic.symbols:
        if symbol.is_virtual or is_unannotated(symbol.reference) or symbol.reference in by_reference:
            continue
        by_reference[symbol.reference] = symbol
    for reference, symbol in sorted(by_reference.items()):
        if symbol.dnp and symbol.in_bom:
            findings.append(Finding("bom.dnp-in-bom", f"{reference} is marked DNP but still included in the BOM",
                                    identity=(reference,), **where_in(symbol.file, symbol)))
        if symbol.in_bom and not symbol.dnp and not any(symbol.fields.get(f, "").strip() for f in mpn_fields):
            findings.append(Finding("bom.mpn-missing",
                                    f"{reference} ({symbol.value}) has no manufacturer part number "
                                    f"(looked for: {', '.join(mpn_fields[:4])}{'...' if len(mpn_fields) > 4 else ''})",
                                    identity=(reference,), **where_in(symbol.file, symbol)))
    if model.bom is not None:
        findings += _compare_csv(model, by_reference)
    return _grouped(findings)


# More findings than this of one BOM rule become one finding listing the references.
HANDFUL = 5
_GROUP_TEXT = {"bom.mpn-missing": "no manufacturer part number",
               "bom.dnp-in-bom": "marked DNP but still in the BOM",
               "bom.csv-mismatch": "the BOM CSV and the schematic disagree"}


def _grouped(findings: list[Finding]) -> list[Finding]:
    by_rule: dict[str, list[Finding]] = {}
    for finding in findings:
        by_rule.setdefault(finding.rule_id, []).append(finding)
    out: list[Finding] = []
    for rule_id, group in by_rule.items():
        if len(group) <= HANDFUL:
            out += group
            continue
        references = [f.identity[0] for f in group]
        listed = ", ".join(references[:40]) + (f" and {len(references) - 40} more" if len(references) > 40 else "")
        first = group[0]
        out.append(Finding(rule_id, f"{len(group)} parts: {_GROUP_TEXT.get(rule_id, rule_id)}: {listed}",
                           identity=("group", rule_id, first.path or ""), path=first.path, line=first.line,
                           column=first.column))
    return out


def _compare_csv(model: ProjectModel, symbols: dict) -> list[Finding]:
    findings = []
    path = model.bom_path
    footprints = model.schematic.footprint_by_reference()
    listed: dict[str, object] = {}
    for row in model.bom:
        for reference in row.references:
            listed.setdefault(reference, row)
    for reference, row in sorted(listed.items()):
        symbol = symbols.get(reference)
        where = dict(path=path, line=row.line, column=1)
        if symbol is None:
            findings.append(Finding("bom.csv-mismatch", f"{reference} is in the BOM but not in the schematic",
                                    identity=(reference, "extra"), **where))
            continue
        dnp_cell = row.get("DNP", "Do Not Populate", "Populate").lower()
        if symbol.dnp and dnp_cell not in ("yes", "true", "1", "dnp", "x"):
            findings.append(Finding("bom.dnp-in-bom", f"{reference} is marked DNP in the schematic but listed in the BOM",
                                    identity=(reference, "csv"), **where))
        value = row.get("Value", "Val", "Comment")
        if value and symbol.value and value != symbol.value:
            findings.append(Finding("bom.csv-mismatch",
                                    f"{reference}: BOM value {value!r}, schematic {symbol.value!r}",
                                    identity=(reference, "value"), **where))
        footprint = row.get("Footprint", "Package")
        ours = footprints.get(reference, symbol.footprint)     # a multi-unit part's, from whichever unit has it
        if footprint and ours and footprint not in (ours, ours.split(":", 1)[-1]):
            findings.append(Finding("bom.csv-mismatch",
                                    f"{reference}: BOM footprint {footprint!r}, schematic {ours!r}",
                                    identity=(reference, "footprint"), **where))
    for reference, symbol in sorted(symbols.items()):
        if symbol.in_bom and not symbol.dnp and reference not in listed:
            findings.append(Finding("bom.csv-mismatch", f"{reference} ({symbol.value}) is in the schematic but not in the BOM",
                                    identity=(reference, "missing"), path=path, line=1, column=1))
    return findings

"""bin/drc-compare --erc: the checker's own ERC against KiCad's (9 or 10), project by project.

For every KiCad project with a schematic under tests/fixtures it reads KiCad's
ERC report committed beside it (``kicad-erc.json``, or ``<project>.kicad-erc.json``
where a folder holds two projects; ``--run`` makes one with kicad-cli in a
temporary folder instead), runs the checker without kicad-cli, and prints per
KiCad type: KiCad's count, matched, missed, and the checker's findings of that
type no KiCad violation accounts for (extra).

A KiCad violation is matched by a checker finding of the same KiCad type that
names one of its items (uuid), else that sits at one of its items' places, else
that names the same pins (reference and number: a unit-repeated power pin is
one pin to KiCad, which picks either copy).
kicad-cli 9.0.8 writes ERC positions at 1/100 of their value in mm (41.91 mm
as 0.4191), so its report positions are scaled by 100 here (KiCad 10's are mm).
``--kicad-cli SPEC`` (with ``--run``) names the kicad-cli to run, a path or
``chroot DIR kicad-cli``; ``--kicad 10`` reads KiCad 10's committed reports
(``kicad10-erc.json``). Types that depend on
the libraries installed where KiCad runs (``footprint_link_issues``,
``lib_symbol_issues``) are listed as not compared. ``lib_symbol_mismatch`` is
compared: on the fixtures KiCad's reports (made on a machine without KiCad's
standard libraries) name only symbols of the projects' own libraries, which the
checker compares too; a checker run where standard libraries are installed may
find more (``erc.lib-symbol-mismatch-installed``), which KiCad's report then
cannot have.
"""
from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from checker.findings import Finding
from checker.kicad_reports import erc_position_scale
from checker.project_settings import ERC_DEFAULTS
from checker.runner import RunOptions, check

from . import kicad_oracle
from .kicad_drc import KicadCli

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures"
POSITION_TOLERANCE_MM = 0.01
NOT_COMPARED = {"footprint_link_issues": "depends on the footprint libraries installed",
                "lib_symbol_issues": "depends on the symbol libraries installed",
                "simulation_model_issue": "simulation models are not checked"}


@dataclass
class Violation:
    type: str
    severity: str
    description: str
    sheet: str
    uuids: list[str]
    places: list[tuple[float, float]]
    pins: list[str]                     # "U1:4" for each pin item ("Symbol U1 Pin 4 [...]")


@dataclass
class ProjectResult:
    project: str
    kicad: Counter = field(default_factory=Counter)
    matched: Counter = field(default_factory=Counter)
    missed: list[Violation] = field(default_factory=list)
    extra: list[Finding] = field(default_factory=list)
    severity: dict[str, str] = field(default_factory=dict)


def projects(folders: list[Path] | None = None) -> list[Path]:
    """Every .kicad_pro with its root schematic under ``folders`` (default the fixtures);
    a .kicad_pro given is taken as it is."""
    found = []
    for top in folders or [FIXTURES]:
        for pro in [top] if top.suffix == ".kicad_pro" else sorted(top.rglob("*.kicad_pro")):
            if pro.with_suffix(".kicad_sch").exists():
                found.append(pro)
    return found


def report_for(pro: Path, release: int = 9) -> Path | None:
    name = f"{kicad_oracle.report_prefix(release)}-erc.json"
    for candidate in (pro.parent / f"{pro.stem}.{name}", pro.parent / name):
        if candidate.exists():
            return candidate
    return None


def run_kicad(pro: Path, cli: KicadCli | None = None) -> dict | None:
    cli = cli or KicadCli.on_path()
    if cli is None:
        return None
    with cli.scratch("erc-compare-") as scratch:
        copy = Path(scratch) / "project"
        shutil.copytree(pro.parent, copy, ignore=shutil.ignore_patterns("*.json", "*.md"))
        out = Path(scratch) / "erc.json"
        try:
            cli.run(*kicad_oracle.arguments("erc", copy / pro.with_suffix(".kicad_sch").name, out),
                    timeout=kicad_oracle.TIMEOUT_S)
        except subprocess.TimeoutExpired:
            return None
        return json.loads(out.read_text(encoding="utf-8")) if out.exists() else None


_PIN = re.compile(r"^Symbol (\S+) Pin (\S+) \[")


def read_violations(report: dict) -> list[Violation]:
    scale = erc_position_scale(report)
    violations = []
    for sheet in report.get("sheets", []):
        for violation in sheet.get("violations", []):
            items = violation.get("items", [])
            violations.append(Violation(
                type=violation.get("type", ""), severity=violation.get("severity", ""),
                description=violation.get("description", ""), sheet=sheet.get("path", ""),
                uuids=[item.get("uuid", "") for item in items],
                places=[(item["pos"]["x"] * scale, item["pos"]["y"] * scale)
                        for item in items if "pos" in item],
                pins=[f"{m.group(1)}:{m.group(2)}" for m in (_PIN.match(item.get("description", "")) for item in items)
                      if m]))
    return violations


def checker_findings(pro: Path) -> list[Finding]:
    outcome = check(RunOptions(path=pro, root=pro.parent, run_kicad_cli=False))
    return [f for f in outcome.findings if f.kicad_type in ERC_DEFAULTS and f.source == "boardready"]


def _shown(pro: Path) -> str:
    return str(pro.relative_to(FIXTURES)) if pro.is_relative_to(FIXTURES) else str(pro)


def matches(violation: Violation, finding: Finding) -> bool:
    if finding.kicad_type != violation.type:
        return False
    if set(violation.uuids) & set(finding.uuids):
        return True
    for location in finding.all_locations():
        x, y = location.get("x"), location.get("y")
        if x is None:
            continue
        if any(abs(x - vx) <= POSITION_TOLERANCE_MM and abs(y - vy) <= POSITION_TOLERANCE_MM
               for vx, vy in violation.places):
            return True
    # The same pins (reference and number): a part whose units repeat a pin (an op-amp's V-) lets
    # KiCad pick either copy.
    return bool(violation.pins) and sorted(violation.pins) == sorted(finding.extra.get("pins", []))


def compare(pro: Path, violations: list[Violation]) -> ProjectResult:
    findings = checker_findings(pro)
    result = ProjectResult(project=_shown(pro))
    used: set[int] = set()
    for violation in violations:
        result.kicad[violation.type] += 1
        result.severity.setdefault(violation.type, violation.severity)
        if violation.type in NOT_COMPARED:
            continue
        hit = next((i for i, f in enumerate(findings) if i not in used and matches(violation, f)), None)
        if hit is None:
            hit = next((i for i, f in enumerate(findings) if matches(violation, f)), None)
        if hit is not None:
            used.add(hit)
            result.matched[violation.type] += 1
        else:
            result.missed.append(violation)
    result.extra = [f for i, f in enumerate(findings) if i not in used and f.kicad_type not in NOT_COMPARED]
    return result


def table(results: list[ProjectResult]) -> str:
    kicad, matched, missed, extra, severity = Counter(), Counter(), Counter(), Counter(), {}
    for result in results:
        kicad.update(result.kicad)
        matched.update(result.matched)
        missed.update(v.type for v in result.missed)
        extra.update(f.kicad_type for f in result.extra)
        for kind, level in result.severity.items():
            severity.setdefault(kind, level)
    lines = ["| KiCad type | KiCad severity | KiCad count | matched | missed | extra | found |",
             "|---|---|---|---|---|---|---|"]
    for kind in sorted(set(kicad) | set(extra)):
        if kind in NOT_COMPARED:
            lines.append(f"| `{kind}` | {severity.get(kind, '')} | {kicad[kind]} | not compared "
                         f"({NOT_COMPARED[kind]}) | | | |")
            continue
        share = f"{100 * matched[kind] / kicad[kind]:.0f}%" if kicad[kind] else "-"
        lines.append(f"| `{kind}` | {severity.get(kind, '-')} | {kicad[kind]} | {matched[kind]} | {missed[kind]} "
                     f"| {extra[kind]} | {share} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bin/drc-compare --erc", description=__doc__.split("\n")[0])
    parser.add_argument("--run", action="store_true", help="run kicad-cli now instead of reading committed reports")
    parser.add_argument("--verbose", "-v", action="store_true", help="list every miss and extra finding")
    parser.add_argument("--kicad-cli", metavar="SPEC", help="with --run: the kicad-cli to run, a path or "
                                                            "'chroot DIR kicad-cli'")
    parser.add_argument("--kicad", type=int, default=9, metavar="MAJOR",
                        help="whose committed reports to read: 9 (kicad-erc.json) or 10 (kicad10-erc.json)")
    parser.add_argument("projects", nargs="*", type=Path, help="only these .kicad_pro files or folders")
    args = parser.parse_args(argv)
    try:
        cli = kicad_oracle.kicad_cli(args.kicad_cli) if args.run else None
    except ValueError as exc:
        print(exc, file=sys.stderr)
        return 2
    results = []
    for pro in projects([p.resolve() for p in args.projects] or None):
        if args.run:
            report = run_kicad(pro, cli)
        else:
            path = report_for(pro, args.kicad)
            report = json.loads(path.read_text(encoding="utf-8")) if path else None
        if report is None:
            print(f"skipped {_shown(pro)}: no KiCad ERC report")
            continue
        result = compare(pro, read_violations(report))
        results.append(result)
        compared = sum(n for k, n in result.kicad.items() if k not in NOT_COMPARED)
        print(f"{result.project}: KiCad {compared} compared, matched {sum(result.matched.values())}, "
              f"missed {len(result.missed)}, extra {len(result.extra)}")
        if args.verbose:
            for violation in result.missed:
                print(f"    missed {violation.type} [{violation.sheet}] {violation.description} "
                      f"{violation.uuids} {[(round(x, 3), round(y, 3)) for x, y in violation.places]}")
            for finding in result.extra:
                print(f"    extra {finding.kicad_type}: {finding.message} {finding.uuids} "
                      f"({finding.extra.get('x')}, {finding.extra.get('y')})")
    print()
    print(table(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())

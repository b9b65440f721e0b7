"""bin/drc-compare: the checker's own DRC against KiCad's (9 or 10), project by project.

For every KiCad project with a board under tests/fixtures (or the folders given)
it takes KiCad's DRC report (``kicad-cli pcb drc --severity-all --schematic-parity``,
run now when kicad-cli is installed, else the report committed beside the project
by bin/kicad-oracle), runs the checker without kicad-cli, and prints per KiCad
type: KiCad's errors and warnings, matched, missed, and the checker's findings
of that type KiCad does not report (extra); then per project KiCad's verdict
(any DRC or ERC error not excluded: blocked) beside the checker's.

A KiCad violation is matched by a checker finding of the same KiCad type that
names one of its items (uuid), else one that sits at one of its items' places
(within ``POSITION_TOLERANCE_MM``). A grouped finding may match several
violations; each of its places KiCad does not account for is one extra.

``--kicad-cli SPEC`` names the kicad-cli to run (a path, or ``chroot DIR
kicad-cli`` for KiCad 10 in a chroot: docs/kicad-oracles.md); ``--kicad 10``
reads KiCad 10's committed reports (``kicad10-drc.json``) where none is run.

``--erc`` hands over to tools/erc_compare.py (the ERC part, same table);
``--all`` prints both.
"""
from __future__ import annotations

import argparse
import json
import math
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from checker.errors import HostileInputError
from checker.findings import Finding
from checker.project_settings import DRC_DEFAULTS
from checker.runner import RunOptions, check
from checker.verdict import ENVIRONMENT_DEPENDENT_KICAD_TYPES

from . import kicad_oracle
from .kicad_drc import KicadCli

ROOT = kicad_oracle.ROOT
FIXTURES = kicad_oracle.FIXTURES
POSITION_TOLERANCE_MM = 0.1
# Types whose outcome depends on the libraries installed where KiCad runs.
NOT_COMPARED = {"lib_footprint_issues": "depends on the footprint libraries installed",
                "lib_footprint_mismatch": "depends on the footprint libraries installed"}


@dataclass
class Violation:
    type: str
    severity: str                 # error, warning (KiCad's, at the project's settings)
    excluded: bool
    description: str
    uuids: frozenset[str]
    places: list[tuple[float, float]]


@dataclass
class ProjectResult:
    project: str
    source: str                                   # "kicad-cli 9.0.8 (live)" or "committed report"
    errors: Counter = field(default_factory=Counter)
    warnings: Counter = field(default_factory=Counter)
    matched: Counter = field(default_factory=Counter)
    missed: list[Violation] = field(default_factory=list)
    extra: Counter = field(default_factory=Counter)
    extra_findings: list[Finding] = field(default_factory=list)
    kicad_verdict: str = "?"
    checker_verdict: str = "?"


def read_violations(report: dict) -> list[Violation]:
    out = []
    for group in ("violations", "unconnected_items", "schematic_parity"):
        for item in report.get(group) or []:
            places, uuids = [], set()
            for named in item.get("items") or []:
                pos = named.get("pos") or {}
                if isinstance(pos.get("x"), (int, float)) and isinstance(pos.get("y"), (int, float)):
                    places.append((float(pos["x"]), float(pos["y"])))
                if named.get("uuid"):
                    uuids.add(named["uuid"])
            out.append(Violation(str(item.get("type")), str(item.get("severity")),
                                 bool(item.get("excluded")) or item.get("severity") == "exclusion",
                                 str(item.get("description")), frozenset(uuids), places))
    return out


def kicad_blocks(drc: dict | None, erc: dict | None) -> bool:
    """KiCad's own verdict: an error it reports and the project did not exclude (library checks,
    which depend on the machine KiCad ran on, left out as the checker leaves them out)."""
    errors = [v for v in read_violations(drc or {}) if v.severity == "error" and not v.excluded
              and v.type not in ENVIRONMENT_DEPENDENT_KICAD_TYPES]
    for sheet in (erc or {}).get("sheets") or []:
        errors += [v for v in sheet.get("violations") or []
                   if v.get("severity") == "error" and not v.get("excluded")
                   and v.get("type") not in ENVIRONMENT_DEPENDENT_KICAD_TYPES]
    return bool(errors)


def _places(finding: Finding) -> list[tuple[set[str], tuple[float, float] | None]]:
    out = []
    for location in finding.all_locations():
        x, y = location.get("x"), location.get("y")
        out.append((set(location.get("uuids") or ()), (x, y) if x is not None and y is not None else None))
    return out or [(set(), None)]


def _near(a: tuple[float, float] | None, places: list[tuple[float, float]]) -> bool:
    return a is not None and any(math.hypot(a[0] - x, a[1] - y) <= POSITION_TOLERANCE_MM for x, y in places)


def shown(project: kicad_oracle.KicadProject) -> str:
    """The project as the tables name it: relative to the fixtures, else to the working folder."""
    for base in (FIXTURES, Path.cwd()):
        if project.folder.is_relative_to(base):
            return str(project.folder.relative_to(base) / project.name)
    return str(project.folder / project.name)


def compare(project: kicad_oracle.KicadProject, violations: list[Violation], findings: list[Finding],
            source: str) -> ProjectResult:
    result = ProjectResult(shown(project), source)
    native = [f for f in findings if f.kicad_type and f.kicad_type in DRC_DEFAULTS and f.counts
              and f.source == "boardready"]
    used: set[tuple[int, int]] = set()           # (finding, place) pairs KiCad accounts for
    for violation in violations:
        if violation.excluded or violation.type in NOT_COMPARED:
            continue
        (result.errors if violation.severity == "error" else result.warnings)[violation.type] += 1
        hits = [(i, j) for i, f in enumerate(native) if f.kicad_type == violation.type
                for j, (uuids, place) in enumerate(_places(f))
                if (uuids & violation.uuids) or (not uuids and _near(place, violation.places))]
        if not hits:     # no item in common: a place in common will do
            hits = [(i, j) for i, f in enumerate(native) if f.kicad_type == violation.type
                    for j, (_, place) in enumerate(_places(f)) if _near(place, violation.places)]
        if hits:
            result.matched[violation.type] += 1
            used.update(hits)
        else:
            result.missed.append(violation)
    for i, finding in enumerate(native):
        if finding.kicad_type in NOT_COMPARED:
            continue
        spare = [j for j in range(len(_places(finding))) if (i, j) not in used]
        if spare:
            result.extra[finding.kicad_type] += len(spare)
            result.extra_findings.append(finding)
    return result


def kicad_report(project: kicad_oracle.KicadProject, kind: str, cli: KicadCli | None,
                 release: int = 9) -> tuple[dict | None, str]:
    """KiCad's report of ``project``: run now by ``cli``, else the one of KiCad ``release`` committed."""
    if cli:
        with tempfile.TemporaryDirectory(prefix="drc-compare-") as scratch:
            output = Path(scratch) / "report.json"
            problem = kicad_oracle.run(kind, cli, project, output)
            if problem is None:
                return json.loads(output.read_text(encoding="utf-8")), "live"
    path = project.report(kind, release)
    if path.exists():
        return json.loads(path.read_text(encoding="utf-8")), "committed"
    return None, "none"


def run(projects: list[kicad_oracle.KicadProject], cli: KicadCli | None, release: int = 9) -> list[ProjectResult]:
    results = []
    for project in projects:
        if project.board is None:
            continue
        drc, drc_source = kicad_report(project, "drc", cli, release)
        if drc is None:
            print(f"skipped {shown(project)}: no KiCad {release} DRC report (KiCad {release} cannot load the "
                  "board, or its reports were not made)")
            continue
        erc, _ = kicad_report(project, "erc", cli, release) if project.schematic else (None, "none")
        target = project.folder / f"{project.name}.kicad_pro"
        try:
            outcome = check(RunOptions(path=target if target.exists() else project.folder, root=project.folder,
                                       run_kicad_cli=False))
        except HostileInputError as exc:
            print(f"skipped {shown(project)}: the checker refused it: {exc}")
            continue
        result = compare(project, read_violations(drc), outcome.findings,
                         f"kicad-cli {drc.get('kicad_version', '?')} ({drc_source})")
        result.kicad_verdict = "blocked" if kicad_blocks(drc, erc) else "passes"
        result.checker_verdict = outcome.result["readiness"]
        results.append(result)
    return results


def type_table(results: list[ProjectResult]) -> str:
    errors, warnings, matched, missed, extra = Counter(), Counter(), Counter(), Counter(), Counter()
    for result in results:
        errors.update(result.errors)
        warnings.update(result.warnings)
        matched.update(result.matched)
        missed.update(v.type for v in result.missed)
        extra.update(result.extra)
    lines = ["| KiCad type | KiCad errors | KiCad warnings | matched | missed | extra |", "|---|---|---|---|---|---|"]
    for kind in sorted(set(errors) | set(warnings) | set(extra)):
        lines.append(f"| `{kind}` | {errors[kind]} | {warnings[kind]} | {matched[kind]} | {missed[kind]} "
                     f"| {extra[kind]} |")
    found_errors = sum(min(matched[k], errors[k]) for k in errors)
    total = sum(errors.values())
    share = f"{100 * found_errors / total:.1f}%" if total else "-"
    lines.append(f"| **all** | {total} | {sum(warnings.values())} | {sum(matched.values())} | "
                 f"{sum(missed.values())} | {sum(extra.values())} |")
    lines.append("")
    lines.append(f"KiCad errors matched (by uuid or place): {share}"
                 + (" (counted as matched up to KiCad's error count per type)" if total else ""))
    return "\n".join(lines)


def verdict_table(results: list[ProjectResult], release: int = 9) -> str:
    lines = [f"| project | KiCad report | KiCad {release} | checker | agree |", "|---|---|---|---|---|"]
    for result in results:
        agree = (result.kicad_verdict == "blocked") == (result.checker_verdict == "blocked")
        lines.append(f"| `{result.project}` | {result.source} | {result.kicad_verdict} | {result.checker_verdict} "
                     f"| {'yes' if agree else '**no**'} |")
    agreeing = sum((r.kicad_verdict == "blocked") == (r.checker_verdict == "blocked") for r in results)
    lines += ["", f"Verdicts agreeing (blocked or not): {agreeing} of {len(results)}"]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if "--erc" in argv:
        from . import erc_compare

        return erc_compare.main([a for a in argv if a != "--erc"])
    parser = argparse.ArgumentParser(prog="bin/drc-compare", description=__doc__.split("\n")[0])
    parser.add_argument("folders", nargs="*", type=Path, default=[FIXTURES])
    parser.add_argument("--no-kicad-cli", action="store_true", help="read the committed reports even when "
                                                                     "kicad-cli is installed")
    parser.add_argument("--kicad-cli", metavar="SPEC", help="the kicad-cli to run: a path, or 'chroot DIR kicad-cli' "
                                                            "(default: kicad-cli on the PATH)")
    parser.add_argument("--kicad", type=int, default=None, metavar="MAJOR",
                        help="whose committed reports to read where kicad-cli is not run: 9 (kicad-drc.json, "
                             "the default) or 10 (kicad10-drc.json); default the release of --kicad-cli")
    parser.add_argument("--all", action="store_true", help="then the ERC part (bin/drc-compare --erc)")
    parser.add_argument("--verbose", "-v", action="store_true", help="list every miss and extra finding")
    args = parser.parse_args(argv)
    try:
        cli = None if args.no_kicad_cli and not args.kicad_cli else kicad_oracle.kicad_cli(args.kicad_cli)
    except ValueError as exc:
        print(exc, file=sys.stderr)
        return 2
    if args.no_kicad_cli:
        release = args.kicad or (cli.major() if cli else None) or 9
        cli = None
    else:
        release = (cli.major() if cli else None) or args.kicad or 9
    results = run(kicad_oracle.find_projects([Path(f).resolve() for f in args.folders]), cli, release)
    for result in results:
        print(f"{result.project}: KiCad {sum(result.errors.values())} errors, {sum(result.warnings.values())} "
              f"warnings; matched {sum(result.matched.values())}, missed {len(result.missed)}, "
              f"extra {sum(result.extra.values())}; KiCad {result.kicad_verdict}, checker {result.checker_verdict}")
        if args.verbose:
            for violation in result.missed:
                print(f"    missed {violation.type} ({violation.severity}) {violation.description} "
                      f"{sorted(violation.uuids)} {violation.places}")
            for finding in result.extra_findings:
                print(f"    extra {finding.kicad_type}: {finding.message[:160]}")
    print()
    print(type_table(results))
    print()
    print(verdict_table(results, release))
    if args.all:
        from . import erc_compare

        print()
        return erc_compare.main((["--run", "--kicad-cli", str(cli)] if cli else ["--kicad", str(release)])
                                + [str(f) for f in args.folders])
    return 0


if __name__ == "__main__":
    sys.exit(main())

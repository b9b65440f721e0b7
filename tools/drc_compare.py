"""bin/drc-compare: the checker against KiCad 6's own DRC, board by board.

For every KiCad 6 board under tests/fixtures (the real demo boards, the
planted-defect copies and the multilayer board) it runs KiCad's DRC (when
KiCad's pcbnew is present; otherwise the report committed beside a planted
board, and boards without one are skipped, saying so) and the checker, and
prints per KiCad violation type how many the checker found and missed, then
the checker's copper findings that no KiCad violation accounts for.

A KiCad violation is found when a checker finding of the matching rule names
the same nets (clearance and shorts: both nets; one net for the others).
Types that are not copper checks (silkscreen, courtyards, footprint library
errors) are listed as "not compared".
"""
from __future__ import annotations

import argparse
import sys
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from checker.findings import Finding
from checker.runner import RunOptions, check
from checker.versions import major_for

from . import kicad_drc

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures"
BOARD_FOLDERS = ("kicad/v6", "kicad-planted", "kicad-multilayer")

# KiCad DRC type -> checker rules that answer it
MATCHING_RULES = {
    "clearance": ("board.clearance", "board.short"),
    "shorting_items": ("board.short",),
    "tracks_crossing": ("board.short",),
    "unconnected_items": ("board.unconnected",),
    "track_width": ("board.track-width",),
    "hole_near_hole": ("board.hole-clearance",),
    "copper_edge_clearance": ("board.edge-clearance",),
    "track_dangling": ("board.dangling-track",),
    "via_diameter": ("board.via-diameter",),
    "annular_width": ("board.annular-ring",),
    "drill_out_of_range": ("board.via-drill",),
}
# The errors the goal is about: every one of these must be found.
GOAL_TYPES = ("clearance", "shorting_items", "tracks_crossing", "unconnected_items", "track_width")
COPPER_RULES = sorted({rule for rules in MATCHING_RULES.values() for rule in rules})


@dataclass
class BoardResult:
    board: str
    source: str                           # "KiCad 6.0" or "committed report"
    found: Counter = field(default_factory=Counter)
    missed: Counter = field(default_factory=Counter)
    not_compared: Counter = field(default_factory=Counter)
    extra: list[Finding] = field(default_factory=list)
    copper: Counter = field(default_factory=Counter)
    missed_details: list[str] = field(default_factory=list)


def kicad6_boards() -> list[Path]:
    boards = []
    for folder in BOARD_FOLDERS:
        for path in sorted((FIXTURES / folder).rglob("*.kicad_pcb")):
            head = path.read_text(encoding="utf-8", errors="replace")[:200]
            version = head.split("(version", 1)[1].split(")", 1)[0].strip() if "(version" in head else ""
            if version.isdigit() and major_for("board", int(version)) == 6:
                boards.append(path)
    return boards


def checker_findings(board: Path) -> list[Finding]:
    project = board.with_suffix(".kicad_pro")
    outcome = check(RunOptions(path=project if project.exists() else board.parent, root=board.parent,
                               run_kicad_cli=False))
    return [f for f in outcome.findings if f.path == board.name]


def _nets(finding: Finding) -> set[str]:
    return {n for n in finding.extra.get("nets", []) if n}


def matches(violation: kicad_drc.KicadViolation, finding: Finding) -> bool:
    if finding.rule_id not in MATCHING_RULES.get(violation.type, ()):
        return False
    kicad_nets, ours = violation.nets, _nets(finding)
    if violation.type in ("clearance", "shorting_items", "tracks_crossing"):
        return bool(kicad_nets) and kicad_nets == ours if len(kicad_nets) == 2 else bool(kicad_nets & ours)
    if violation.type == "hole_near_hole":
        x, y = finding.extra.get("x"), finding.extra.get("y")
        return any(abs(item.x - x) + abs(item.y - y) < 2.0 for item in violation.items) if x is not None else False
    return bool(kicad_nets & ours) or (not kicad_nets and not ours)


def compare(board: Path, violations: list[kicad_drc.KicadViolation], source: str) -> BoardResult:
    findings = [f for f in checker_findings(board) if f.rule_id in COPPER_RULES]
    result = BoardResult(board=str(board.relative_to(FIXTURES)), source=source)
    used: set[int] = set()
    for violation in violations:
        if violation.type not in MATCHING_RULES:
            result.not_compared[violation.type] += 1
            continue
        hits = [i for i, f in enumerate(findings) if matches(violation, f)]
        if hits:
            result.found[violation.type] += 1
            used.update(hits)
        else:
            result.missed[violation.type] += 1
            result.missed_details.append(f"{violation.type}: {violation.message} "
                                         + "; ".join(item.text for item in violation.items))
    for index, finding in enumerate(findings):
        result.copper[finding.rule_id] += 1
        if index not in used:
            result.extra.append(finding)
    return result


def table(results: list[BoardResult]) -> str:
    found, missed, not_compared, copper, extra = Counter(), Counter(), Counter(), Counter(), Counter()
    for result in results:
        found.update(result.found)
        missed.update(result.missed)
        not_compared.update(result.not_compared)
        copper.update(result.copper)
        extra.update(f.rule_id for f in result.extra)
    lines = ["| KiCad violation | KiCad reports | found by the checker | missed |", "|---|---|---|---|"]
    for kind in sorted(set(found) | set(missed)):
        lines.append(f"| `{kind}` | {found[kind] + missed[kind]} | {found[kind]} | {missed[kind]} |")
    for kind in sorted(not_compared):
        lines.append(f"| `{kind}` (not a copper check) | {not_compared[kind]} | not compared | - |")
    lines += ["", "| checker rule | findings | without a KiCad counterpart |", "|---|---|---|"]
    for rule in sorted(copper):
        lines.append(f"| `{rule}` | {copper[rule]} | {extra[rule]} |")
    return "\n".join(lines)


def goal_met(results: list[BoardResult]) -> bool:
    missed = sum(r.missed[t] for r in results for t in GOAL_TYPES)
    unexplained = sum(1 for r in results for f in r.extra if f.rule_id in ("board.short", "board.clearance"))
    return missed == 0 and unexplained == 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bin/drc-compare", description=__doc__.split("\n")[0])
    parser.add_argument("--no-install", action="store_true",
                        help="do not install Debian's kicad when pcbnew is missing; use committed reports only")
    parser.add_argument("--verbose", "-v", action="store_true", help="list every miss and extra finding")
    args = parser.parse_args(argv)
    have_kicad = kicad_drc.available() or (not args.no_install and kicad_drc.install())
    print(f"KiCad's DRC: {'KiCad 6 pcbnew (run now)' if have_kicad else 'not installed: committed reports only'}")
    results = []
    for board in kicad6_boards():
        committed = board.parent / "drc.rpt"
        if have_kicad:
            violations, source = kicad_drc.run_drc(board).violations, "KiCad 6"
        elif committed.exists():
            violations = kicad_drc.read_report(committed.read_text(encoding="utf-8"))
            source = "committed report"
        else:
            print(f"skipped {board.relative_to(FIXTURES)}: no KiCad and no committed report")
            continue
        result = compare(board, violations, source)
        results.append(result)
        summary = ", ".join(f"{k} {v}" for k, v in sorted((result.found + result.missed).items())) or "none"
        print(f"{result.board} ({source}): KiCad copper violations: {summary}; missed "
              f"{sum(result.missed.values())}; checker copper findings without KiCad counterpart "
              f"{len(result.extra)}")
        if args.verbose:
            for line in result.missed_details:
                print(f"    missed {line}")
            for finding in result.extra:
                print(f"    extra {finding.rule_id} ({finding.severity}): {finding.message}")
    print()
    print(table(results))
    met = goal_met(results)
    print()
    print("goal met: every KiCad clearance, short, unconnected and track-width error found, and no checker "
          "short or clearance finding without a KiCad counterpart" if met else "goal NOT met")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())

"""bin/corpus: the checker against KiCad 9 on the differential corpus (tools/corpus.py).

For every corpus entry whose files are in the cache (``.corpus/``, rebuilt from
``/work/.mirror`` when missing) it runs the checker with its own checks only
(``--no-kicad-cli``) in a child process, timed from the process's start, and
compares its findings with KiCad's reports: the committed ones under
``tests/corpus/kicad9/<id>/``, or kicad-cli run now with ``--live`` (``--kicad-cli
CMD``: a path, or words such as ``chroot /opt/kicad10-sid kicad-cli``).

Per KiCad type it prints KiCad's errors and how many of them the checker found
at their place or by uuid (the matching of tools/drc_compare.py and
tools/erc_compare.py), KiCad's warnings, the checker's blocking places of that
type, and those beyond KiCad's error count of that type on their project. Then,
per project: the board-alone verdict (KiCad's DRC errors against the checker's
blocking board findings), the whole verdict (KiCad's DRC and ERC errors
against the checker's readiness), crashes (a traceback, a killed or timed-out
child), refusals (the checker's typed answer to input it will not judge), and
the time of both. ``--json FILE`` writes all of it machine-readable.
"""
from __future__ import annotations

import argparse
import json
import os
import pickle
import resource
import subprocess
import sys
import tempfile
import time
import traceback
from dataclasses import asdict, dataclass, field
from pathlib import Path

from checker.findings import Finding
from checker.project_settings import DRC_DEFAULTS, ERC_DEFAULTS
from checker.verdict import ENVIRONMENT_DEPENDENT_KICAD_TYPES

from . import corpus, drc_compare, erc_compare

# A fab profile's own published custom rules, for --profile: the profile's verdict is compared with
# kicad-cli's DRC on the board with that file as its .kicad_dru. Neither JLCPCB nor OSH Park publishes a
# .kicad_dru of its own; for JLCPCB the rule file below (KiCad 7+, written after JLCPCB's capability page,
# the page the jlcpcb profiles cite) is the one KiCad users copy; OSH Park has none (docs/benchmarks.md).
FAB_RULES = {
    name: ("labtroll/KiCad-DesignRules", "c788e56370ef364dfaa436705e5dea78953ae4c0", "JLCPCB/JLCPCB.kicad_dru",
           "9e5b6f5f2fd08b8f35bf3b620eee98d51b6102c5f8999a59d500d1ddb5a9dfba")
    for name in ("jlcpcb-2layer", "jlcpcb-4layer")
}
CHILD_TIMEOUT_S = 600
CHILD_MEMORY_BYTES = 4 * 1024 ** 3          # the bound is 2 GB; above 4 GiB the child is stopped
BOARD_RULE_PREFIXES = ("board.", "parity.")  # the checker's board findings (KiCad's DRC report's scope)
MAX_EXAMPLES = 200                           # KiCad errors missed, kept per project for the findings list


@dataclass
class CheckerRun:
    findings: list[Finding] = field(default_factory=list)
    readiness: str = "?"
    seconds: float = 0.0
    max_rss_mb: float = 0.0
    crash: str = ""          # a traceback, a signal, a timeout: no verdict
    refused: str = ""        # the checker's typed refusal (HostileInputError): a verdict of its own


@dataclass
class TypeCounts:
    kicad_errors: int = 0
    kicad_warnings: int = 0
    errors_found: int = 0
    warnings_found: int = 0
    blocking_places: int = 0        # the checker's
    beyond: int = 0                 # blocking places beyond KiCad's error count (per project, summed)


@dataclass
class EntryResult:
    id: str
    kicad_source: str
    kicad_seconds: float
    checker_seconds: float
    checker_max_rss_mb: float
    crash: str = ""
    refused: str = ""
    kicad_board_verdict: str = "?"
    checker_board_verdict: str = "?"
    kicad_verdict: str = "?"
    checker_verdict: str = "?"
    drc: dict[str, TypeCounts] = field(default_factory=dict)
    erc: dict[str, TypeCounts] = field(default_factory=dict)
    missed: list[dict] = field(default_factory=list)        # KiCad errors not found: check, type, place, text
    beyond_examples: list[dict] = field(default_factory=list)   # per type beyond KiCad's count: one example
    custom_rules: int = 0
    custom_rules_skipped: list[str] = field(default_factory=list)

    @property
    def board_agrees(self) -> bool:
        return self.kicad_board_verdict == self.checker_board_verdict

    @property
    def agrees(self) -> bool:
        return (self.kicad_verdict == "blocked") == (self.checker_verdict == "blocked")


# -- the checker, in a child process --

def _child(target: str, root: str, output: str, profile: str = "") -> int:
    """Runs in the child: the check, its findings pickled to ``output``."""
    from checker.errors import HostileInputError
    from checker.runner import RunOptions, check

    out: dict = {}
    try:
        outcome = check(RunOptions(path=Path(target), root=Path(root), run_kicad_cli=False,
                                   profile=profile or None))
        out = {"findings": outcome.findings, "readiness": outcome.result["readiness"]}
    except HostileInputError as exc:
        out = {"refused": f"{getattr(exc, 'code', 'invalid_input')}: {exc}"}
    except BaseException:  # noqa: BLE001 - any other way out is what we count as a crash
        out = {"crash": traceback.format_exc()[-4000:]}
    out["max_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    with open(output, "wb") as handle:
        pickle.dump(out, handle)
    return 0


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (CHILD_MEMORY_BYTES, CHILD_MEMORY_BYTES))


def run_checker(entry: corpus.Entry, profile: str | None = None) -> CheckerRun:
    with tempfile.TemporaryDirectory(prefix="corpus-check-") as scratch:
        output = Path(scratch) / "out.pickle"
        command = [sys.executable, "-m", "tools.corpus_compare", "--child", str(entry.target), str(entry.folder),
                   str(output), profile or ""]
        start = time.perf_counter()
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=CHILD_TIMEOUT_S,
                                  cwd=corpus.ROOT, preexec_fn=_limit_memory)
        except subprocess.TimeoutExpired:
            return CheckerRun(seconds=time.perf_counter() - start, crash=f"timed out after {CHILD_TIMEOUT_S} s")
        seconds = time.perf_counter() - start
        if not output.exists():
            return CheckerRun(seconds=seconds, crash=f"exit {done.returncode}: {done.stderr.strip()[-2000:]}")
        with open(output, "rb") as handle:
            out = pickle.load(handle)
    return CheckerRun(findings=out.get("findings", []), readiness=out.get("readiness", "?"), seconds=seconds,
                      max_rss_mb=out.get("max_rss_mb", 0.0), crash=out.get("crash", ""),
                      refused=out.get("refused", ""))


# -- the comparison --

def _blocking(finding: Finding) -> bool:
    return finding.counts and finding.severity == "error"


def _is_board(finding: Finding) -> bool:
    return finding.rule_id.startswith(BOARD_RULE_PREFIXES) or (finding.kicad_type in DRC_DEFAULTS
                                                                and not finding.rule_id.startswith("kicad."))


def _type_of(finding: Finding) -> str:
    return finding.kicad_type or finding.rule_id


def _places(finding: Finding) -> int:
    return max(1, len(finding.all_locations()))


def compare_drc(drc: dict, findings: list[Finding], result: EntryResult) -> None:
    """KiCad's DRC violations against the checker's board findings (tools/drc_compare.py's matching)."""
    counts: dict[str, TypeCounts] = {}
    native = [f for f in findings if f.kicad_type and f.kicad_type in DRC_DEFAULTS and f.counts
              and f.source == "boardready"]
    places = [drc_compare._places(f) for f in native]
    for violation in drc_compare.read_violations(drc):
        if violation.excluded or violation.type in drc_compare.NOT_COMPARED:
            continue
        row = counts.setdefault(violation.type, TypeCounts())
        error = violation.severity == "error"
        if error:
            row.kicad_errors += 1
        else:
            row.kicad_warnings += 1
        found = any((uuids & violation.uuids) or drc_compare._near(place, violation.places)
                    for f, fp in zip(native, places) if f.kicad_type == violation.type for uuids, place in fp)
        if found:
            if error:
                row.errors_found += 1
            else:
                row.warnings_found += 1
        elif error and len(result.missed) < MAX_EXAMPLES:
            result.missed.append({"check": "drc", "type": violation.type, "description": violation.description,
                                  "place": violation.places[0] if violation.places else None})
    for finding in findings:
        if _is_board(finding) and _blocking(finding) and _type_of(finding) not in drc_compare.NOT_COMPARED:
            counts.setdefault(_type_of(finding), TypeCounts()).blocking_places += _places(finding)
    for kind, row in counts.items():
        row.beyond = max(0, row.blocking_places - row.kicad_errors)
        if row.beyond:
            example = next(f for f in findings if _type_of(f) == kind and _is_board(f) and _blocking(f))
            where = example.all_locations()[0] if example.all_locations() else {}
            result.beyond_examples.append({"check": "drc", "type": kind, "count": row.beyond,
                                           "kicad_errors": row.kicad_errors, "rule": example.rule_id,
                                           "place": (where.get("x"), where.get("y")),
                                           "description": example.message[:240]})
    result.drc = counts


def compare_erc(erc: dict | None, findings: list[Finding], result: EntryResult) -> None:
    """KiCad's ERC violations against the checker's ERC findings (tools/erc_compare.py's matching)."""
    counts: dict[str, TypeCounts] = {}
    native = [f for f in findings if f.kicad_type in ERC_DEFAULTS and f.source == "boardready" and f.counts]
    # erc_compare.read_violations reads the sheets' violations in order and drops the exclusion flag
    excluded = [bool(v.get("excluded")) for sheet in (erc or {}).get("sheets") or []
                for v in sheet.get("violations") or []]
    for violation, is_excluded in zip(erc_compare.read_violations(erc or {}), excluded):
        if violation.type in erc_compare.NOT_COMPARED or is_excluded:
            continue
        row = counts.setdefault(violation.type, TypeCounts())
        error = violation.severity == "error"
        if error:
            row.kicad_errors += 1
        else:
            row.kicad_warnings += 1
        if any(erc_compare.matches(violation, f) for f in native):
            if error:
                row.errors_found += 1
            else:
                row.warnings_found += 1
        elif error and len(result.missed) < MAX_EXAMPLES:
            result.missed.append({"check": "erc", "type": violation.type, "description": violation.description,
                                  "place": violation.places[0] if violation.places else None,
                                  "sheet": violation.sheet})
    for finding in native:
        if _blocking(finding) and finding.kicad_type not in erc_compare.NOT_COMPARED:
            counts.setdefault(finding.kicad_type, TypeCounts()).blocking_places += 1
    for kind, row in counts.items():
        row.beyond = max(0, row.blocking_places - row.kicad_errors)
        if row.beyond:
            example = next(f for f in native if f.kicad_type == kind and _blocking(f))
            result.beyond_examples.append({"check": "erc", "type": kind, "count": row.beyond,
                                           "kicad_errors": row.kicad_errors, "rule": example.rule_id,
                                           "place": (example.extra.get("x"), example.extra.get("y")),
                                           "description": example.message[:240]})
    result.erc = counts


def kicad_board_blocks(drc: dict) -> bool:
    return any(v.severity == "error" and not v.excluded and v.type not in ENVIRONMENT_DEPENDENT_KICAD_TYPES
               for v in drc_compare.read_violations(drc))


def custom_rules(entry: corpus.Entry, findings: list[Finding]) -> tuple[int, list[str]]:
    """The project's custom rules, and those the checker skipped (its rules.unsupported findings)."""
    dru = [p for p in entry.files if p.endswith(".kicad_dru")]
    if not dru:
        return 0, []
    text = (entry.folder / dru[0]).read_text(encoding="utf-8", errors="replace")
    total = sum(1 for line in text.splitlines() if line.lstrip().startswith("(rule "))
    skipped = [f.message[:200] for f in findings if f.rule_id == "rules.unsupported"]
    return total, skipped


def fab_rules(profile: str) -> bytes:
    """The fab's published .kicad_dru for ``profile`` (FAB_RULES), from the cache or the fetched repository."""
    if profile not in FAB_RULES:
        raise SystemExit(f"no published .kicad_dru is known for profile {profile!r}: "
                         f"{', '.join(sorted(FAB_RULES))} have one")
    repository, commit, path, digest = FAB_RULES[profile]
    cached = corpus.CACHE / "_fab" / repository.replace("/", "+") / path
    if cached.is_file() and corpus.sha256(cached.read_bytes()) == digest:
        return cached.read_bytes()
    directory = corpus.git_dir(repository)
    if directory is None:
        raise SystemExit(f"{repository} is not fetched under {corpus.MIRROR} (its {path} is {profile}'s rules)")
    data = corpus.blob(directory, commit, path)
    if corpus.sha256(data) != digest:
        raise SystemExit(f"{repository}:{path} at {commit[:12]} is not the file recorded for {profile}")
    cached.parent.mkdir(parents=True, exist_ok=True)
    cached.write_bytes(data)
    return data


def compare_profile(entry: corpus.Entry, profile: str, cli: list[str]) -> EntryResult | None:
    """The checker's verdict under ``profile`` against kicad-cli's DRC with the fab's own rule file
    as the board's .kicad_dru (the board alone: no schematic parity, no ERC)."""
    from checker.profiles import load_profile

    if not load_profile(profile).fits(entry.copper_layers):
        return None
    dru = entry.board[: -len(".kicad_pcb")] + ".kicad_dru"
    board_only = corpus.Entry(**{**entry.__dict__, "schematic": None})
    drc, seconds, problem = corpus.run_kicad(board_only, "drc", cli, extra_files={dru: fab_rules(profile)})
    if drc is None:
        print(f"skipped {entry.id}: KiCad gave no DRC report ({problem})", flush=True)
        return None
    run = run_checker(entry, profile)
    result = EntryResult(entry.id, f"{' '.join(cli)} with {profile}'s rules (live)", round(seconds, 3),
                         round(run.seconds, 3), round(run.max_rss_mb, 1), crash=run.crash, refused=run.refused)
    result.kicad_board_verdict = result.kicad_verdict = "blocked" if kicad_board_blocks(drc) else "passes"
    if run.crash or run.refused:
        return result
    compare_drc(drc, run.findings, result)
    result.checker_board_verdict = ("blocked" if any(_is_board(f) and _blocking(f) for f in run.findings)
                                    else "passes")
    result.checker_verdict = result.checker_board_verdict
    return result


def compare_entry(entry: corpus.Entry, live: list[str] | None, profile: str | None = None) -> EntryResult | None:
    problems = corpus.verify(entry)
    if problems and corpus.git_dir(entry.repository) is not None:
        problems = corpus.materialize(entry) or corpus.verify(entry)
    if problems:
        print(f"skipped {entry.id}: not in the cache ({problems[0]})", flush=True)
        return None
    if profile:
        return compare_profile(entry, profile, live or ["kicad-cli"])
    if live:
        drc, drc_s, problem = corpus.run_kicad(entry, "drc", live)
        erc, erc_s, _ = corpus.run_kicad(entry, "erc", live) if entry.schematic else (None, 0.0, "")
        source, kicad_seconds = f"{' '.join(live)} (live)", drc_s + erc_s
        if drc is None:
            print(f"skipped {entry.id}: KiCad gave no DRC report ({problem})", flush=True)
            return None
    else:
        drc, erc = corpus.read_report(entry, "drc"), corpus.read_report(entry, "erc")
        timing = corpus.read_timing(entry)
        source = f"kicad-cli {timing.get('kicad_cli', '?')} (committed)"
        kicad_seconds = timing.get("drc_seconds", 0.0) + (timing.get("erc_seconds", 0.0) if erc else 0.0)
        if drc is None:
            print(f"skipped {entry.id}: no committed KiCad DRC report", flush=True)
            return None
    run = run_checker(entry)
    result = EntryResult(entry.id, source, round(kicad_seconds, 3), round(run.seconds, 3),
                         round(run.max_rss_mb, 1), crash=run.crash, refused=run.refused)
    board_blocks = kicad_board_blocks(drc)
    result.kicad_board_verdict = "blocked" if board_blocks else "passes"
    result.kicad_verdict = "blocked" if drc_compare.kicad_blocks(drc, erc) else "passes"
    if run.crash or run.refused:
        return result
    compare_drc(drc, run.findings, result)
    compare_erc(erc, run.findings, result)
    result.checker_board_verdict = ("blocked" if any(_is_board(f) and _blocking(f) for f in run.findings)
                                    else "passes")
    result.checker_verdict = run.readiness
    result.custom_rules, result.custom_rules_skipped = custom_rules(entry, run.findings)
    return result


# -- the report --

def _totals(results: list[EntryResult], part: str) -> dict[str, TypeCounts]:
    totals: dict[str, TypeCounts] = {}
    for result in results:
        for kind, row in getattr(result, part).items():
            total = totals.setdefault(kind, TypeCounts())
            for name in ("kicad_errors", "kicad_warnings", "errors_found", "warnings_found", "blocking_places",
                         "beyond"):
                setattr(total, name, getattr(total, name) + getattr(row, name))
    return totals


def _share(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f}%" if whole else "-"


def type_table(results: list[EntryResult], part: str) -> str:
    totals = _totals(results, part)
    lines = [f"| {part.upper()} type | KiCad errors | found | KiCad warnings | found | checker blocking places "
             "| beyond KiCad's count |", "|---|---|---|---|---|---|---|"]
    for kind in sorted(totals):
        row = totals[kind]
        lines.append(f"| `{kind}` | {row.kicad_errors} | {row.errors_found} | {row.kicad_warnings} "
                     f"| {row.warnings_found} | {row.blocking_places} | {row.beyond} |")
    errors = sum(r.kicad_errors for r in totals.values())
    found = sum(r.errors_found for r in totals.values())
    places = sum(r.blocking_places for r in totals.values())
    beyond = sum(r.beyond for r in totals.values())
    lines.append(f"| **all** | {errors} | {found} ({_share(found, errors)}) | "
                 f"{sum(r.kicad_warnings for r in totals.values())} | {sum(r.warnings_found for r in totals.values())} "
                 f"| {places} | {beyond} ({_share(places - beyond, places)} within) |")
    return "\n".join(lines)


def summary(results: list[EntryResult]) -> dict:
    judged = [r for r in results if not (r.crash or r.refused)]
    drc, erc = _totals(results, "drc"), _totals(results, "erc")

    def within(totals: dict[str, TypeCounts]) -> tuple[int, int]:
        places = sum(r.blocking_places for r in totals.values())
        return places - sum(r.beyond for r in totals.values()), places

    board_within, board_places = within(drc)
    erc_within, erc_places = within(erc)
    rules = sum(r.custom_rules for r in judged)
    skipped = sum(len(r.custom_rules_skipped) for r in judged)
    return {
        "projects": len(results),
        "judged": len(judged),
        "crashes": [{"id": r.id, "crash": r.crash[-600:]} for r in results if r.crash],
        "refused": [{"id": r.id, "refused": r.refused} for r in results if r.refused],
        "board_verdict_agrees": sum(r.board_agrees for r in judged),
        "verdict_agrees": sum(r.agrees for r in judged),
        "kicad_drc_errors": sum(r.kicad_errors for r in drc.values()),
        "kicad_drc_errors_found": sum(r.errors_found for r in drc.values()),
        "kicad_erc_errors": sum(r.kicad_errors for r in erc.values()),
        "kicad_erc_errors_found": sum(r.errors_found for r in erc.values()),
        "board_blocking_places": board_places,
        "board_blocking_places_within": board_within,
        "erc_blocking_findings": erc_places,
        "erc_blocking_findings_within": erc_within,
        "custom_rules": rules,
        "custom_rules_skipped": skipped,
        "checker_seconds": round(sum(r.checker_seconds for r in results), 1),
        "kicad_seconds": round(sum(r.kicad_seconds for r in results), 1),
        "checker_faster": sum(r.checker_seconds < r.kicad_seconds for r in results if r.kicad_seconds),
        "checker_max_rss_mb": max((r.checker_max_rss_mb for r in results), default=0.0),
        "load_average": round(os.getloadavg()[0], 2),
    }


def print_report(results: list[EntryResult], verbose: bool) -> dict:
    print()
    print(type_table(results, "drc"))
    print()
    print(type_table(results, "erc"))
    print()
    disagree = [r for r in results if not (r.crash or r.refused) and not (r.board_agrees and r.agrees)]
    if disagree:
        print("| project | board: KiCad | checker | whole: KiCad | checker |\n|---|---|---|---|---|")
        for r in disagree:
            print(f"| `{r.id}` | {r.kicad_board_verdict} | {r.checker_board_verdict} | {r.kicad_verdict} "
                  f"| {r.checker_verdict} |")
        print()
    facts = summary(results)
    judged = facts["judged"]
    print(f"projects: {facts['projects']}, judged {judged}, crashes {len(facts['crashes'])}, "
          f"refused {len(facts['refused'])}")
    print(f"board-alone verdict agrees: {facts['board_verdict_agrees']} of {judged} "
          f"({_share(facts['board_verdict_agrees'], judged)}); whole verdict: {facts['verdict_agrees']} of {judged} "
          f"({_share(facts['verdict_agrees'], judged)})")
    print(f"KiCad DRC errors found: {facts['kicad_drc_errors_found']} of {facts['kicad_drc_errors']} "
          f"({_share(facts['kicad_drc_errors_found'], facts['kicad_drc_errors'])}); ERC errors found: "
          f"{facts['kicad_erc_errors_found']} of {facts['kicad_erc_errors']} "
          f"({_share(facts['kicad_erc_errors_found'], facts['kicad_erc_errors'])})")
    print(f"blocking board places within KiCad's count: {facts['board_blocking_places_within']} of "
          f"{facts['board_blocking_places']} ({_share(facts['board_blocking_places_within'], facts['board_blocking_places'])}); "
          f"blocking ERC findings within: {facts['erc_blocking_findings_within']} of {facts['erc_blocking_findings']} "
          f"({_share(facts['erc_blocking_findings_within'], facts['erc_blocking_findings'])})")
    print(f"custom rules: {facts['custom_rules']}, skipped by the checker {facts['custom_rules_skipped']}")
    print(f"time: checker {facts['checker_seconds']} s (process start included, largest RSS "
          f"{facts['checker_max_rss_mb']} MB), KiCad {facts['kicad_seconds']} s; checker faster on "
          f"{facts['checker_faster']} of {len(results)}; load average now {facts['load_average']}")
    for crash in facts["crashes"]:
        print(f"CRASH {crash['id']}: {crash['crash'].strip().splitlines()[-1] if crash['crash'].strip() else ''}")
    for refusal in facts["refused"]:
        print(f"REFUSED {refusal['id']}: {refusal['refused'][:200]}")
    if verbose:
        print()
        print(disagreement_classes(results))
    return facts


def _place(place) -> str:
    if not place or place[0] is None:
        return "-"
    return f"({place[0]:.3f}, {place[1]:.3f})"


def disagreement_classes(results: list[EntryResult]) -> str:
    """One line per class of disagreement (check, KiCad type, which way): the projects, an example, the count."""
    classes: dict[tuple[str, str, str], list] = {}
    for r in results:
        if r.crash:
            classes.setdefault(("checker", "crash", "crash"), []).append((r.id, "-", r.crash.strip().splitlines()[-1]
                                                                          if r.crash.strip() else "", 1))
        for miss in r.missed:
            classes.setdefault((miss["check"], miss["type"], "missed"), []).append(
                (r.id, _place(miss["place"]), miss["description"], 1))
        for beyond in r.beyond_examples:
            classes.setdefault((beyond["check"], beyond["type"], "beyond"), []).append(
                (r.id, _place(beyond["place"]), f"[{beyond['rule']}] {beyond['description']}", beyond["count"]))
    lines = []
    for (check, kind, way), rows in sorted(classes.items(), key=lambda item: -sum(r[3] for r in item[1])):
        count = sum(row[3] for row in rows)
        projects = sorted({row[0] for row in rows})
        first = max(rows, key=lambda row: row[3]) if way == "beyond" else rows[0]
        what = {"missed": "KiCad errors the checker does not find",
                "beyond": "checker blocking places beyond KiCad's count", "crash": "checker crashes"}[way]
        lines.append(f"- {check} `{kind}`: {what}: {count} on {len(projects)} project(s) "
                     f"({', '.join(projects[:6])}{', ...' if len(projects) > 6 else ''}); e.g. {first[0]} at "
                     f"{first[1]}: {first[2][:200]}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["--child"]:
        return _child(*argv[1:5])
    parser = argparse.ArgumentParser(prog="bin/corpus", description=__doc__.splitlines()[0])
    parser.add_argument("--only", action="append", metavar="ID", help="only this entry (repeatable)")
    parser.add_argument("--live", action="store_true", help="run kicad-cli now instead of reading the committed "
                                                            "reports")
    parser.add_argument("--kicad-cli", default="kicad-cli", metavar="CMD",
                        help="kicad-cli for --live: a path or a command (e.g. 'chroot /opt/kicad10-sid kicad-cli')")
    parser.add_argument("--profile", metavar="NAME", help="the checker under this fab profile against kicad-cli's DRC "
                                                           "with the fab's published .kicad_dru in the project "
                                                           f"(runs kicad-cli now; {', '.join(sorted(FAB_RULES))})")
    parser.add_argument("--json", type=Path, metavar="FILE", help="write the machine-readable summary here")
    parser.add_argument("--verbose", "-v", action="store_true", help="list the classes of disagreement (KiCad's "
                                                                     "errors missed, places beyond KiCad's count)")
    parser.add_argument("--classes", type=Path, metavar="FILE", help="write the classes of disagreement here "
                                                                      "(Markdown, one line each)")
    args = parser.parse_args(argv)
    entries = corpus.load_manifest()
    if args.only:
        unknown = set(args.only) - {e.id for e in entries}
        if unknown:
            parser.error(f"no corpus entry {', '.join(sorted(unknown))}")
        entries = [e for e in entries if e.id in args.only]
    live = corpus.kicad_cli_command(args.kicad_cli) if args.live or args.profile else None
    if args.profile:
        fab_rules(args.profile)
    results = []
    for entry in entries:
        result = compare_entry(entry, live, args.profile)
        if result is None:
            continue
        results.append(result)
        drc_errors = sum(r.kicad_errors for r in result.drc.values())
        erc_errors = sum(r.kicad_errors for r in result.erc.values())
        state = (f"CRASH {result.crash.strip().splitlines()[-1][:160] if result.crash.strip() else ''}"
                 if result.crash else f"REFUSED {result.refused[:160]}" if result.refused else
                 f"board {result.kicad_board_verdict}/{result.checker_board_verdict}, "
                 f"whole {result.kicad_verdict}/{result.checker_verdict}; DRC errors {drc_errors} found "
                 f"{sum(r.errors_found for r in result.drc.values())}, beyond "
                 f"{sum(r.beyond for r in result.drc.values())}; ERC errors {erc_errors} found "
                 f"{sum(r.errors_found for r in result.erc.values())}, beyond "
                 f"{sum(r.beyond for r in result.erc.values())}")
        print(f"{entry.id}: {state}; checker {result.checker_seconds:.1f} s, KiCad {result.kicad_seconds:.1f} s",
              flush=True)
    facts = print_report(results, args.verbose)
    if args.classes:
        args.classes.write_text(disagreement_classes(results) + "\n", encoding="utf-8")
    if args.json:
        args.json.write_text(json.dumps({"summary": facts, "projects": [asdict(r) for r in results]}, indent=1)
                             + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""How many of the custom rules real projects write the checker evaluates, and why not the rest.

``python -m tools.dru_coverage [--json] [PATH ...]``: every ``.kicad_dru`` under the PATHs
(default: tests/fixtures/kicad-dru, the cached files its manifest names, and the corpus cache
``.corpus/``), read as the checker reads them (checker/rulebook.py, checker/dru_expr.py). A
rule's condition is *evaluated* when it compiles in the checker's condition language, else
*skipped* with the reason the checker gives (``rules.unsupported``). Separately, each
constraint is *applied* when a checker rule holds the board to it (clearance and track
width, hole size, via diameter, annular width), else it is listed as a constraint kind the
checker does not check. Never imported by
the checker.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
import tomllib
from collections import Counter
from pathlib import Path

from checker.dru_expr import without_comments
from checker.rulebook import BoardRules, _read_custom
from checker.sexpr import parse

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures" / "kicad-dru"
CORPUS = ROOT / ".corpus"
MIRROR = Path("/work/.mirror")
# Constraint kinds a checker rule holds the board to from a custom rule.
APPLIED = {"clearance": "board.clearance", "track_width": "board.track-width", "hole_size": "board.hole-size",
           "via_diameter": "board.via-diameter", "annular_width": "board.annular-ring"}


def rule_files(paths: list[Path] | None = None) -> list[tuple[str, str]]:
    """(label, text) of every rule file to measure."""
    found: list[tuple[str, str]] = []
    if paths:
        for path in paths:
            for file in ([path] if path.is_file() else sorted(path.rglob("*.kicad_dru"))):
                found.append((str(file), file.read_text(encoding="utf-8", errors="replace")))
        return found
    for file in sorted(FIXTURES.rglob("*.kicad_dru")):
        found.append((str(file.relative_to(ROOT)), file.read_text(encoding="utf-8", errors="replace")))
    manifest = tomllib.loads((FIXTURES / "manifest.toml").read_text(encoding="utf-8"))
    for entry in manifest.get("cached", []):
        git_dir = MIRROR / entry["repository"].replace("/", "+") / "repo"
        if not git_dir.exists():
            print(f"not cached: {entry['repository']}:{entry['path']} (fetch it to measure it)", file=sys.stderr)
            continue
        data = subprocess.run(["git", "--git-dir", str(git_dir), "show", f"{entry['commit']}:{entry['path']}"],
                              capture_output=True, check=True).stdout
        if hashlib.sha256(data).hexdigest() != entry["sha256"]:
            raise SystemExit(f"{entry['repository']}:{entry['path']}: SHA-256 differs from the manifest")
        found.append((f"{entry['repository']}:{entry['path']}", data.decode("utf-8", errors="replace")))
    if CORPUS.exists():
        for file in sorted(CORPUS.rglob("*.kicad_dru")):
            found.append((str(file.relative_to(ROOT)), file.read_text(encoding="utf-8", errors="replace")))
    return found


def measure(files: list[tuple[str, str]]) -> dict:
    """Counts over the files, each distinct text once (the corpus may hold a fab's file twice)."""
    seen: set[str] = set()
    files = [(label, text) for label, text in files
             if not (hashlib.sha256(text.encode()).hexdigest() in seen or seen.add(hashlib.sha256(text.encode()).hexdigest()))]
    total = evaluated = applied = 0
    skipped: list[dict] = []
    not_checked: Counter = Counter()
    per_file = []
    for label, text in files:
        try:
            tree = parse(without_comments(text), multiple=True)
        except Exception as exc:          # a file KiCad would refuse too: counted, not measured
            per_file.append({"file": label, "error": str(exc)})
            continue
        rules = BoardRules()
        _read_custom(tree, rules)
        names = [rule.atom(0) or "?" for rule in tree.nodes("rule")]
        file_evaluated = len(rules.custom)
        file_applied = 0
        for rule in rules.custom:
            kinds = list(rule.constraints) or ["(none)"]
            for kind in kinds:
                if kind not in APPLIED:
                    not_checked[kind] += 1
            if all(kind in APPLIED for kind in kinds):
                file_applied += 1
        for name, reason, line in rules.unsupported:
            skipped.append({"file": label, "rule": name, "line": line, "why": reason})
        total += len(names)
        evaluated += file_evaluated
        applied += file_applied
        per_file.append({"file": label, "rules": len(names), "evaluated": file_evaluated, "applied": file_applied})
    return {"files": len(files), "rules": total, "evaluated": evaluated, "applied": applied,
            "skipped": skipped, "constraints_not_checked": dict(not_checked.most_common()), "per_file": per_file}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", type=Path)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    result = measure(rule_files(args.paths or None))
    if args.json:
        print(json.dumps(result, indent=1))
        return 0
    rules = result["rules"] or 1
    print(f"{result['files']} rule files, {result['rules']} rules: conditions evaluated {result['evaluated']} "
          f"({100 * result['evaluated'] / rules:.1f}%), skipped {len(result['skipped'])}; "
          f"every constraint applied by a checker rule: {result['applied']} ({100 * result['applied'] / rules:.1f}%)")
    for entry in result["per_file"]:
        print(f"  {entry['file']}: " + (entry["error"] if "error" in entry else
                                          f"{entry['evaluated']}/{entry['rules']} evaluated, {entry['applied']} applied"))
    if result["skipped"]:
        print("skipped:")
        for entry in result["skipped"]:
            print(f"  {entry['file']}:{entry['line']} {entry['rule']!r}: {entry['why']}")
    print("constraint kinds not checked from custom rules (rules using them):")
    for kind, count in result["constraints_not_checked"].items():
        print(f"  {kind}: {count}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

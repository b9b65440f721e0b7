"""bin/bench-hostile: real projects broken in hostile ways, each checked by bin/check in a
process held to 2 GiB of address space, which must give a typed answer within 10 s.

A typed answer: exit 0 or 1 with a run result on stdout, exit 2 or 3 with a result or
a typed error (``{"ok": false, "code": ...}``), and no traceback on stderr. The damage
is tools/hostile_boards.py's, at full size (3,000 vias, 30,000 segments, a 300,000-point
zone, a config nested 100,000 deep).

    bin/bench-hostile [--case CASE ...] [--corpus N] [PROJECT_FOLDER ...]

Projects: the folders given, else two of the fixtures (a two-layer board with zones,
the four-layer kit-dev-coldfire), plus the first N projects of the corpus cache
(.corpus/) when it is present. Prints one row per (project, case): exit, typed or not,
wall and CPU seconds, the process's peak RSS; exits 1 when any row is untyped or over a bound
(the bound is on wall time; CPU time says how much of it was the machine's load).
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from .hostile_boards import CASES, mutate

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_PROJECTS = ["tests/fixtures/kicad-planted/clean",
                    "tests/fixtures/kicad-multilayer/kit-dev-coldfire-xilinx_5213"]
CORPUS = ROOT / ".corpus"
MEMORY_BOUND = 2 * 1024 ** 3
TIME_BOUND = 10.0
KILL_AFTER = 60.0      # a run past the bound is let finish this long, to show how far past


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_BOUND, MEMORY_BOUND))


def run_check(folder: Path) -> dict:
    """bin/check's process on FOLDER: exit code, typed or not, seconds, peak RSS (MiB)."""
    command = [sys.executable, "-m", "checker.cli", str(folder), "--no-kicad-cli", "--format", "json"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        started = time.monotonic()
        process = subprocess.Popen(command, stdout=out, stderr=err, env=env, cwd=ROOT, preexec_fn=_limit_memory)
        killed = False
        while True:
            pid, status, usage = os.wait4(process.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() - started > KILL_AFTER:
                process.kill()
                killed = True
            time.sleep(0.02)
        seconds = time.monotonic() - started
        process.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read().decode("utf-8", "replace")
    code = process.returncode
    typed, answer = _typed(code, stdout, stderr)
    return {"exit": code, "typed": typed and not killed, "answer": answer, "seconds": seconds,
            "cpu": usage.ru_utime + usage.ru_stime, "rss_mib": usage.ru_maxrss / 1024, "stderr": stderr[-2000:]}


def _typed(code: int, stdout: bytes, stderr: str) -> tuple[bool, str]:
    if "Traceback" in stderr or code not in (0, 1, 2, 3):
        return False, "traceback" if "Traceback" in stderr else f"exit {code}"
    try:
        data = json.loads(stdout)
    except ValueError:
        return code == 2, "usage" if code == 2 else "no JSON"
    if "readiness" in data:
        incomplete = any(f.get("ruleId") == "checker.rule-failed" for f in data.get("findings", []))
        return True, f"{data['readiness']}{' (incomplete)' if incomplete else ''}"
    if data.get("ok") is False and data.get("code"):
        return code in (2, 3), data["code"]
    return False, "unknown JSON"


def _projects(args) -> list[Path]:
    folders = [Path(p) for p in args.projects] or [ROOT / p for p in DEFAULT_PROJECTS]
    if CORPUS.is_dir() and args.corpus:
        found = sorted({p.parent for p in CORPUS.rglob("*.kicad_pcb")})
        folders += found[: args.corpus]
    return folders


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bin/bench-hostile", description=__doc__.split("\n\n")[0])
    parser.add_argument("projects", nargs="*")
    parser.add_argument("--case", action="append", choices=CASES, help="only these cases (default: all)")
    parser.add_argument("--corpus", type=int, default=3, help="projects taken from .corpus/ when present")
    args = parser.parse_args(argv)
    cases = args.case or list(CASES)
    print(f"load average before: {' '.join(f'{v:.2f}' for v in os.getloadavg())}; "
          f"bounds: {TIME_BOUND:g} s, {MEMORY_BOUND // 1024 ** 2} MiB address space")
    print(f"{'project':40} {'case':10} {'exit':>4} {'answer':28} {'wall s':>7} {'CPU s':>6} {'peak RSS':>9}")
    failed = 0
    with tempfile.TemporaryDirectory(prefix="bench-hostile-") as scratch:
        for folder in _projects(args):
            for case in cases:
                broken = mutate(folder, case, Path(scratch) / case)
                row = run_check(broken)
                ok = row["typed"] and row["seconds"] <= TIME_BOUND and row["rss_mib"] * 1024 ** 2 <= MEMORY_BOUND
                failed += not ok
                name = f"{folder.parent.name}/{folder.name}"[-40:]
                print(f"{name:40} {case:10} {row['exit']:>4} {row['answer'][:28]:28} {row['seconds']:7.2f} "
                      f"{row['cpu']:6.2f} {row['rss_mib']:5.0f} MiB{'' if ok else '  FAIL'}", flush=True)
                if not row["typed"]:
                    print("    " + row["stderr"].strip().splitlines()[-1][:200] if row["stderr"].strip() else "")
    print(f"load average after: {' '.join(f'{v:.2f}' for v in os.getloadavg())}; {failed} row(s) failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

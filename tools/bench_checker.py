"""bin/bench-checker: the checker against kicad-cli 9 and sexpdata, side by side in one run.

Part one times whole processes, start-up included, project by project (every
KiCad project of the fixtures, and KiCad 9's video demo when kicad-demos is
installed): bin/check's process (``python -m checker.cli --no-kicad-cli``)
against ``kicad-cli sch erc`` and ``kicad-cli pcb drc`` with the oracle's
arguments, the three run in turn N times (so a load on the machine falls on
all of them alike), each figure the median wall time. A schematic-only project
is compared with KiCad's ERC, a board's project with KiCad's DRC alone (the
checker also does the ERC, which KiCad runs as a second process). Part two times, in this process, the checker's whole
check of a board's project (every file read and parsed, every rule, the run
result built) against sexpdata merely parsing the board file (the video demo,
the four-layer kit-dev-coldfire and flat_hierarchy). Part three is the reader
benchmark: our S-expression reader against sexpdata on the same decoded text,
with tracemalloc's peak for one parse.

Parts two and three give the best of N repetitions (the least disturbed by the
machine), in wall time and, for the check and sexpdata, in this process's CPU
time too: on a machine shared with other work the CPU-time ratio is the
steadier one. The reader table also times our reader as board loading uses it
(zone fill points read straight into arrays).
"""
from __future__ import annotations

import argparse
import compileall
import gc
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

from checker import sexpr
from checker.runner import RunOptions, check

from . import kicad_oracle

ROOT = kicad_oracle.ROOT
FIXTURES = kicad_oracle.FIXTURES
# KiCad 9's video demo (Debian's kicad-demos): the board the issue's speed goal names.
VIDEO = Path("/usr/share/kicad/demos/video/video.kicad_pcb")
PROCESS_FOLDERS = ["tests/fixtures"]
WHOLE_CHECK_BOARDS = ["kicad-multilayer/kit-dev-coldfire-xilinx_5213/kit-dev-coldfire-xilinx_5213.kicad_pcb",
                      "kicad/v6/flat_hierarchy/flat_hierarchy.kicad_pcb"]
READER_FILES = ["kicad/v6/flat_hierarchy/flat_hierarchy.kicad_pcb", "kicad/v6/stickhub/StickHub.kicad_pcb",
                "kicad/v6/pic_programmer/pic_programmer.kicad_pcb",
                "kicad/v6/complex_hierarchy/complex_hierarchy.kicad_pcb"]


def _best(fn, repeat: int) -> float:
    return _best_wall_and_cpu(fn, repeat)[0]


def _best_wall_and_cpu(fn, repeat: int) -> tuple[float, float]:
    """The best wall time and the best CPU time of this process over ``repeat`` runs."""
    best_wall = best_cpu = float("inf")
    for _ in range(repeat):
        gc.collect()
        start, start_cpu = time.perf_counter(), time.process_time()
        fn()
        best_wall = min(best_wall, time.perf_counter() - start)
        best_cpu = min(best_cpu, time.process_time() - start_cpu)
    return best_wall, best_cpu


def _peak(fn) -> int:
    gc.collect()
    tracemalloc.start()
    result = fn()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    del result
    return peak


def whole_check(board: Path, repeat: int) -> dict:
    """The checker's whole check of the board's project, in this process, beside sexpdata parsing the board."""
    import sexpdata

    project = board.with_suffix(".kicad_pro")
    options = RunOptions(path=project if project.exists() else board.parent, run_kicad_cli=False)
    text = board.read_text(encoding="utf-8")
    check_wall, check_cpu = _best_wall_and_cpu(lambda: check(options), repeat)
    sexpdata_wall, sexpdata_cpu = _best_wall_and_cpu(lambda: sexpdata.loads(text), repeat)
    return {"board": board.name, "kib": len(text.encode()) // 1024, "check": check_wall, "check_cpu": check_cpu,
            "sexpdata": sexpdata_wall, "sexpdata_cpu": sexpdata_cpu}


def _timed_process(command: list[str]) -> tuple[float, float] | None:
    """Wall and CPU time (user and system, the process and its children) of one whole
    process, start-up included; None when it fails."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, cwd=ROOT)
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 1):
        return None
    return elapsed, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def process_figures(project: kicad_oracle.KicadProject, repeat: int, cli: str | None) -> dict:
    """bin/check's process (python -m checker.cli, no kicad-cli) against kicad-cli's ERC and DRC
    processes, run in turn ``repeat`` times: the median wall and CPU time of each."""
    target = project.folder / f"{project.name}.kicad_pro"
    target = target if target.exists() else project.folder
    commands = {"check": [sys.executable, "-m", "checker.cli", str(target), "--no-kicad-cli", "--format", "json",
                          "-o", os.devnull, "--fail-on", "never"]}
    folder = project.folder.relative_to(ROOT) if project.folder.is_relative_to(ROOT) else project.folder
    figures: dict = {"project": f"{folder}/{project.name}",
                     "kib": sum(p.stat().st_size for p in project.folder.glob("*.kicad_*")) // 1024,
                     "board": project.board is not None}
    with tempfile.TemporaryDirectory(prefix="bench-") as scratch:
        out = Path(scratch) / "report.json"
        if cli and project.schematic is not None:
            commands["erc"] = kicad_oracle.command("erc", cli, project.schematic, out)
        if cli and project.board is not None:
            commands["drc"] = kicad_oracle.command("drc", cli, project.board, out, project.schematic is not None)
        runs: dict[str, list] = {name: [] for name in commands}
        for _ in range(repeat):
            for name, command in commands.items():
                runs[name].append(_timed_process(command))
    for name, timings in runs.items():
        if None in timings:
            figures[name] = figures[name + "_cpu"] = None
        else:
            figures[name] = statistics.median(wall for wall, _ in timings)
            figures[name + "_cpu"] = statistics.median(cpu for _, cpu in timings)
    return figures


def _ms(value: float | None) -> str:
    return f"{value * 1000:.0f}" if value is not None else "-"


def print_process_table(projects: list[kicad_oracle.KicadProject], repeat: int, cli: str | None) -> int:
    """The table; returns how many projects the checker did not beat kicad-cli on (wall time)."""
    print("bin/check's whole process (start-up included, --no-kicad-cli) against kicad-cli's, side by side: "
          f"the three processes in turn, {repeat} times, median wall (and CPU) ms. A schematic-only project "
          "against `sch erc`, a board's project against `pcb drc` alone.")
    print()
    print("| project | KiB | checker ms (CPU) | kicad-cli erc ms (CPU) | kicad-cli drc ms (CPU) | KiCad / checker |")
    print("|---|---|---|---|---|---|")
    slower = 0
    for project in projects:
        f = process_figures(project, repeat, cli)
        # A board KiCad cannot load (its DRC fails) is compared with its ERC, the KiCad process that ran.
        kicad = (f.get("drc") or f.get("erc")) if f["board"] else f.get("erc")
        ratio = f"{kicad / f['check']:.2f}x" if kicad and f["check"] else "-"
        if f["board"] and "drc" in f and f["drc"] is None and kicad:
            ratio += " (vs ERC: KiCad's DRC failed)"
        slower += bool(kicad and f["check"] and kicad <= f["check"])
        print(f"| `{f['project']}` | {f['kib']} | {_ms_cpu(f, 'check')} | {_ms_cpu(f, 'erc')} | {_ms_cpu(f, 'drc')} "
              f"| {ratio} |", flush=True)
    print()
    print(f"checker faster than kicad-cli on {len(projects) - slower} of {len(projects)} projects "
          f"(load average now {', '.join(f'{v:.1f}' for v in os.getloadavg())})")
    return slower


def _ms_cpu(figures: dict, name: str) -> str:
    if figures.get(name) is None:
        return "-"
    return f"{_ms(figures[name])} ({_ms(figures[name + '_cpu'])})"


def main(argv: list[str] | None = None) -> int:
    import sexpdata

    parser = argparse.ArgumentParser(prog="bin/bench-checker")
    parser.add_argument("files", nargs="*", type=Path, help="boards for the whole-check table")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--no-processes", action="store_true", help="skip the process table")
    parser.add_argument("--no-kicad", action="store_true", help="skip kicad-cli even when installed")
    parser.add_argument("--projects", nargs="*", type=Path, default=None,
                        help="folders for the process table (default: every KiCad project of the fixtures, and "
                             "the video demo when kicad-demos is installed)")
    args = parser.parse_args(argv)
    cli = None if args.no_kicad else kicad_oracle.kicad_cli()
    version = kicad_oracle.kicad_version(cli) if cli else "absent"
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, load average "
          f"{', '.join(f'{v:.1f}' for v in os.getloadavg())}, Python {platform.python_version()}, "
          f"sexpdata {getattr(sexpdata, '__version__', '?')}, kicad-cli {version}")
    print()
    folders = [p.resolve() for p in args.projects or []] or (
        [ROOT / f for f in PROCESS_FOLDERS] + [p for p in (VIDEO.parent,) if p.exists()])
    if not args.no_processes:
        # As an installed checker runs: its modules' bytecode written once (PYTHONDONTWRITEBYTECODE
        # or a fresh checkout would otherwise compile every changed module in every process).
        for package in ("checker", "contracts"):
            compileall.compile_dir(str(ROOT / package), quiet=1)
        print_process_table(kicad_oracle.find_projects(folders), args.repeat, cli)
        print()
    print(f"{'whole check, in process: board':<40} {'KiB':>6} {'check ms':>9} {'sexpdata ms':>12} "
          f"{'vs sexpdata':>12} {'CPU: check ms':>14} {'sexpdata ms':>12} {'vs sexpdata':>12}")
    boards = args.files or [b for b in [VIDEO] + [FIXTURES / f for f in WHOLE_CHECK_BOARDS] if b.exists()]
    for board in boards:
        f = whole_check(board, args.repeat)
        print(f"{f['board']:<40} {f['kib']:>6} {f['check'] * 1000:>9.0f} {f['sexpdata'] * 1000:>12.0f} "
              f"{f['sexpdata'] / f['check']:>11.1f}x {f['check_cpu'] * 1000:>14.0f} {f['sexpdata_cpu'] * 1000:>12.0f} "
              f"{f['sexpdata_cpu'] / f['check_cpu']:>11.1f}x")
    print()
    print(f"{'reader: file':<34} {'KiB':>6} {'ours ms':>8} {'sexpdata ms':>12} {'ratio':>6} "
          f"{'ours peak MiB':>14} {'sexpdata peak MiB':>18} {'as boards load, ms':>19}")
    for path in [FIXTURES / f for f in READER_FILES]:
        text = path.read_text(encoding="utf-8")
        ours = _best(lambda text=text: sexpr.parse(text), args.repeat)
        theirs = _best(lambda text=text: sexpdata.loads(text), args.repeat)
        dense = _best(lambda text=text: sexpr.parse(text, dense_points=True), args.repeat)
        ours_peak = _peak(lambda text=text: sexpr.parse(text)) / 2**20
        theirs_peak = _peak(lambda text=text: sexpdata.loads(text)) / 2**20
        print(f"{path.name:<34} {len(text.encode()) // 1024:>6} {ours * 1000:>8.1f} {theirs * 1000:>12.1f} "
              f"{theirs / ours:>5.1f}x {ours_peak:>14.1f} {theirs_peak:>18.1f} {dense * 1000:>19.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

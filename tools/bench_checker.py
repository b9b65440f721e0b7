"""bin/bench-checker: the whole check against sexpdata and KiCad's own DRC, side by side in one run.

Part one times, on the largest fixture board (the four-layer
kit-dev-coldfire-xilinx_5213, 3.7 MB) and the largest two-layer one
(flat_hierarchy), three things in the same run: the checker's whole check of
the project (every file read and parsed, every rule including the copper
checks, the run result built), sexpdata merely parsing the board file, and,
when KiCad 6's pcbnew is present, KiCad loading the board and running its
DRC (a separate process; its own timers, so start-up is not counted). Part two
is the reader benchmark: our S-expression reader against sexpdata on the
same decoded text, with tracemalloc's peak for one parse.

Each figure is the best of N repetitions (the least disturbed by the
machine), in wall time and, for the check and sexpdata, in this process's CPU
time too: on a machine shared with other work the CPU-time ratio is the
steadier one. The reader table also times our reader as board loading uses it
(zone fill points read straight into arrays).
"""
from __future__ import annotations

import argparse
import gc
import os
import platform
import time
import tracemalloc
from pathlib import Path

from checker import sexpr
from checker.runner import RunOptions, check

from . import kicad_drc

FIXTURES = Path(__file__).resolve().parents[1] / "tests" / "fixtures"
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


def whole_check(board: Path, repeat: int, with_kicad: bool) -> dict:
    import sexpdata

    project = board.with_suffix(".kicad_pro")
    options = RunOptions(path=project if project.exists() else board.parent, run_kicad_cli=False)
    text = board.read_text(encoding="utf-8")
    check_wall, check_cpu = _best_wall_and_cpu(lambda: check(options), repeat)
    sexpdata_wall, sexpdata_cpu = _best_wall_and_cpu(lambda: sexpdata.loads(text), repeat)
    figures = {"board": board.name, "kib": len(text.encode()) // 1024, "check": check_wall, "check_cpu": check_cpu,
               "sexpdata": sexpdata_wall, "sexpdata_cpu": sexpdata_cpu}
    if with_kicad:
        runs = [kicad_drc.run_drc(board) for _ in range(repeat)]
        figures["kicad_drc"] = min(r.drc_seconds for r in runs)
        figures["kicad_load_drc"] = min(r.load_seconds + r.drc_seconds for r in runs)
    return figures


def main(argv: list[str] | None = None) -> int:
    import sexpdata

    parser = argparse.ArgumentParser(prog="bin/bench-checker")
    parser.add_argument("files", nargs="*", type=Path, help="boards for the whole-check table")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--no-kicad", action="store_true", help="skip KiCad's DRC even when installed")
    args = parser.parse_args(argv)
    with_kicad = not args.no_kicad and kicad_drc.available()
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, load average "
          f"{', '.join(f'{v:.1f}' for v in os.getloadavg())}, Python {platform.python_version()}, "
          f"sexpdata {getattr(sexpdata, '__version__', '?')}, KiCad DRC: {'6 (pcbnew)' if with_kicad else 'absent'}, "
          f"best of {args.repeat}")
    print()
    print(f"{'board':<40} {'KiB':>6} {'check ms':>9} {'sexpdata ms':>12} {'vs sexpdata':>12} "
          f"{'CPU: check ms':>14} {'sexpdata ms':>12} {'vs sexpdata':>12} "
          f"{'KiCad DRC ms':>13} {'KiCad load+DRC ms':>18} {'vs KiCad DRC':>13}")
    for board in args.files or [FIXTURES / f for f in WHOLE_CHECK_BOARDS]:
        f = whole_check(board, args.repeat, with_kicad)
        kicad = (f"{f['kicad_drc'] * 1000:>13.0f} {f['kicad_load_drc'] * 1000:>18.0f} "
                 f"{f['kicad_drc'] / f['check']:>12.1f}x") if "kicad_drc" in f else f"{'-':>13} {'-':>18} {'-':>13}"
        print(f"{f['board']:<40} {f['kib']:>6} {f['check'] * 1000:>9.0f} {f['sexpdata'] * 1000:>12.0f} "
              f"{f['sexpdata'] / f['check']:>11.1f}x {f['check_cpu'] * 1000:>14.0f} {f['sexpdata_cpu'] * 1000:>12.0f} "
              f"{f['sexpdata_cpu'] / f['check_cpu']:>11.1f}x {kicad}")
    print()
    print(f"{'reader: file':<34} {'KiB':>6} {'ours ms':>8} {'sexpdata ms':>12} {'ratio':>6} "
          f"{'ours peak MiB':>14} {'sexpdata peak MiB':>18} {'as boards load, ms':>19}")
    for path in [FIXTURES / f for f in READER_FILES]:
        text = path.read_text(encoding="utf-8")
        ours = _best(lambda: sexpr.parse(text), args.repeat)
        theirs = _best(lambda: sexpdata.loads(text), args.repeat)
        dense = _best(lambda: sexpr.parse(text, dense_points=True), args.repeat)
        ours_peak = _peak(lambda: sexpr.parse(text)) / 2**20
        theirs_peak = _peak(lambda: sexpdata.loads(text)) / 2**20
        print(f"{path.name:<34} {len(text.encode()) // 1024:>6} {ours * 1000:>8.1f} {theirs * 1000:>12.1f} "
              f"{theirs / ours:>5.1f}x {ours_peak:>14.1f} {theirs_peak:>18.1f} {dense * 1000:>19.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""bin/bench-checker: our reader vs sexpdata on the same KiCad files, one run.

Each parser gets the same decoded text; the best of N repetitions is kept
(the least disturbed by the machine), and peak memory is measured separately
with tracemalloc so that tracing does not slow the timed runs.
"""
from __future__ import annotations

import argparse
import gc
import os
import platform
import time
import tracemalloc
from pathlib import Path

from . import sexpr

DEFAULT_FILES = ["v6/flat_hierarchy/flat_hierarchy.kicad_pcb", "v6/stickhub/StickHub.kicad_pcb",
                 "v6/pic_programmer/pic_programmer.kicad_pcb", "v6/complex_hierarchy/complex_hierarchy.kicad_pcb"]


def _best(fn, text: str, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        gc.collect()
        start = time.perf_counter()
        fn(text)
        best = min(best, time.perf_counter() - start)
    return best


def _peak(fn, text: str) -> int:
    gc.collect()
    tracemalloc.start()
    result = fn(text)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    del result
    return peak


def main(argv: list[str] | None = None) -> int:
    import sexpdata

    parser = argparse.ArgumentParser(prog="bin/bench-checker")
    parser.add_argument("files", nargs="*", type=Path)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    fixtures = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "kicad"
    files = args.files or [fixtures / f for f in DEFAULT_FILES]
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
          f"sexpdata {getattr(sexpdata, '__version__', '?')}, best of {args.repeat}")
    print(f"{'file':<34} {'KiB':>6} {'ours ms':>8} {'sexpdata ms':>12} {'ratio':>6} {'ours peak MiB':>14} {'sexpdata peak MiB':>18}")
    for path in files:
        text = path.read_text(encoding="utf-8")
        ours = _best(sexpr.parse, text, args.repeat)
        theirs = _best(sexpdata.loads, text, args.repeat)
        ours_peak = _peak(sexpr.parse, text) / 2**20
        theirs_peak = _peak(sexpdata.loads, text) / 2**20
        print(f"{path.name:<34} {len(text.encode()) // 1024:>6} {ours * 1000:>8.1f} {theirs * 1000:>12.1f} "
              f"{theirs / ours:>5.1f}x {ours_peak:>14.1f} {theirs_peak:>18.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

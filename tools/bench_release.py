"""bin-less benchmark of issue 38's release pieces: `python -m tools.bench_release [BOARD.kicad_pcb]`.

Times making the fab package (kicad-cli's own exports, checker/fab_package.make_package),
checking it with gerbonara (check_package), and signing and verifying a release record
over it (app/attestation.py, checker/release_record.py), on one board; median of --runs.
"""
from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
import warnings
from pathlib import Path

from app import attestation
from checker import fab_package, release_record
from checker.board import load_board
from checker.project import InputReader

DEFAULT = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "kicad-multilayer" / \
    "kit-dev-coldfire-xilinx_5213" / "kit-dev-coldfire-xilinx_5213.kicad_pcb"


def _timed(action, runs: int) -> float:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        action()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("board", nargs="?", type=Path, default=DEFAULT)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args(argv)
    kicad_cli = shutil.which("kicad-cli")
    if kicad_cli is None:
        print("kicad-cli is not installed: nothing to measure", file=sys.stderr)
        return 2
    warnings.simplefilter("ignore")
    board = load_board(args.board, InputReader(args.board.parent))
    with tempfile.TemporaryDirectory() as scratch:
        out = Path(scratch) / "fab"
        make = _timed(lambda: fab_package.make_package(args.board, board, out, kicad_cli), args.runs)
        check = _timed(lambda: fab_package.check_package(out, board), args.runs)
        key = attestation.ensure_key(Path(scratch) / "key.pem")
        keys = attestation.published_keys(key)
        record = attestation.sign_release(key, out, {"verdict": "ready"}, {"decision": "PASS"})
        sign = _timed(lambda: attestation.sign_release(key, out, {"verdict": "ready"}, {"decision": "PASS"}),
                      args.runs * 10)
        verify = _timed(lambda: (release_record.mismatched_files(release_record.verified_statement(record, keys)[0],
                                                                 out)), args.runs * 10)
        files = len(list(out.rglob("*")))
    print(f"{args.board.name}: {len(board.copper_order())} copper layers, {files} package entries")
    print(f"make (kicad-cli exports): {make:.2f} s; check (gerbonara): {check:.2f} s "
          f"({100 * check / make:.0f}% of the export)")
    print(f"sign a record over the package: {sign * 1000:.1f} ms; verify it with the files: {verify * 1000:.1f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())

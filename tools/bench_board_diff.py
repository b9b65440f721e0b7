"""What the board diff costs: the checker's whole run (check and HTML report)
with and without --base, the diff alone, and how soon the drawing is
interactive in headless Chromium, in the report and as the run page loads it.

    bin/bench-board-diff [--repeat N] [--base PATH] [PROJECT]

PROJECT defaults to the largest fixture board (kit-dev-coldfire-xilinx_5213,
3.9 MB); --base defaults to a copy of it with a footprint moved, a track and a
via changed, so the diff has something to say. The runs alternate (without,
with, without, ...) in one process so the machine's load hits both alike; the
figures are the best and the median of N each, wall clock and CPU, with the
load average before and after (the machine is shared); and the CPU of the
whole `bin/check` process (interpreter, imports), with and without kicad-cli
when it is installed.
"Interactive" is the time from navigation start to the drawing's data-ready
mark (the script ran, the board is drawn and takes input). The run page's
figure serves the partial's markup, the script and board.json from one local
HTTP origin: the service's own render is not in it.
"""
from __future__ import annotations

import argparse
import functools
import http.server
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from checker.limits import DEFAULT_LIMITS
from checker.report_html import render_html
from checker.runner import RunOptions, check

ROOT = Path(__file__).resolve().parents[1]
LARGEST = ROOT / "tests" / "fixtures" / "kicad-multilayer" / "kit-dev-coldfire-xilinx_5213"


def _run(project: Path, base: Path | None) -> tuple[float, float, str]:
    """(wall, CPU, the report)."""
    wall, cpu = time.perf_counter(), time.process_time()
    outcome = check(RunOptions(path=project, base=base, run_kicad_cli=False))
    page = render_html(outcome)
    return time.perf_counter() - wall, time.process_time() - cpu, page


def planted_base(project: Path, scratch: Path) -> Path:
    """A copy of ``project`` whose board lacks a via, has the first track and has
    its first footprint elsewhere: the head is then that change's pull request."""
    base = scratch / "base"
    shutil.copytree(project, base)
    [board] = base.glob("*.kicad_pcb")
    lines = board.read_text(encoding="utf-8").splitlines(keepends=True)
    via = next(i for i, line in enumerate(lines) if line.lstrip().startswith("(via "))
    del lines[via]                                            # the head "adds" it
    head_track = next(line for line in lines if line.lstrip().startswith("(segment "))
    lines.insert(lines.index(head_track), head_track.replace("(start ", "(start 1", 1))   # the head "deletes" it
    at = next(i for i, line in enumerate(lines) if line.lstrip().startswith("(footprint "))
    at = next(i for i in range(at, len(lines)) if lines[i].lstrip().startswith("(at "))
    x, y = lines[at].split()[1:3]
    lines[at] = lines[at].replace(f"(at {x} {y}", f"(at {float(x) - 2.54:g} {y}", 1)   # the head "moved" it
    board.write_text("".join(lines), encoding="utf-8")
    return base


def _whole_runs(project: Path, base: Path, repeat: int, kicad_cli: bool) -> dict[str, list[float]]:
    """Wall and CPU time of the whole `bin/check PROJECT --html` process (interpreter,
    imports, kicad-cli's runs when ``kicad_cli``), without and with --base, alternating."""
    runs: dict[str, list[float]] = {"plain wall": [], "plain cpu": [], "base wall": [], "base cpu": []}
    with tempfile.TemporaryDirectory(prefix="boardready-bench-") as scratch:
        report = str(Path(scratch) / "report.html")
        command = [str(ROOT / "bin" / "check"), str(project), "--html", report] + ([] if kicad_cli else ["--no-kicad-cli"])
        for _ in range(repeat):
            for extra, way in (([], "plain"), (["--base", str(base)], "base")):
                before, wall = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
                subprocess.run(command + extra, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
                runs[f"{way} wall"].append(time.perf_counter() - wall)
                after = resource.getrusage(resource.RUSAGE_CHILDREN)
                runs[f"{way} cpu"].append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return runs


def _figures(label: str, samples: list[float]) -> str:
    return f"{label}: best {min(samples):.3f} s, median {statistics.median(samples):.3f} s"


def _diff_only(project: Path, base: Path, repeat: int) -> list[float]:
    """CPU time of comparing two checked projects, without checking either: the boards'
    diff and putting the comparison together."""
    from checker.base_check import _board_diffs, compare
    from checker.runner import _bom
    from checker.schematic_diff import schematic_state

    head, before = (check(RunOptions(path=p, run_kicad_cli=False)) for p in (project, base))
    schematic = next((m.schematic for m in before.models if m.schematic is not None), None)
    base_boards = {m.board.file: m.board for m in before.models if m.board is not None}
    times = []
    for _ in range(repeat):
        cpu = time.process_time()
        state = {"boards": _board_diffs(base_boards, head.models), "fingerprints": [f.fingerprint for f in before.findings],
                 "erc_is_heads": False, "bom": before.result.get("bom", []), "schematic": schematic_state(schematic, base)}
        compare(head.models, state, _bom(head.models, DEFAULT_LIMITS), head.findings, project)
        times.append(time.process_time() - cpu)
    return times


def _run_comparison(project: Path, base: Path) -> list[str]:
    return check(RunOptions(path=project, base=base, run_kicad_cli=False)).comparison["summary"]


def _time_to_ready(url: str, repeat: int) -> list[float]:
    """Navigation start to the drawing's data-ready mark, in headless Chromium, `repeat` page loads."""
    sys.path.insert(0, str(ROOT))
    from playwright.sync_api import sync_playwright

    from tests.helpers.browser import CHROMIUM, CHROMIUM_ARGS

    times = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        for _ in range(repeat):
            tab = browser.new_page(viewport={"width": 1400, "height": 1000})
            tab.goto(url, wait_until="commit")
            tab.wait_for_selector("[data-board-view][data-ready=true]")
            times.append(tab.evaluate("performance.now()") / 1000)
            tab.close()
        browser.close()
    return times


def _interactive(page: str, repeat: int) -> list[float]:
    with tempfile.TemporaryDirectory(prefix="boardready-bench-") as scratch:
        path = Path(scratch) / "report.html"
        path.write_text(page, encoding="utf-8")
        return _time_to_ready(path.as_uri(), repeat)


def _interactive_served(page: str, repeat: int) -> list[float]:
    """The run page's part: the partial's markup, the script and styles and board.json
    from one HTTP origin (the service's render and database are not in this figure)."""
    from app.web.pages.board_view import board_document

    with tempfile.TemporaryDirectory(prefix="boardready-bench-") as scratch:
        folder = Path(scratch)
        (folder / "board.json").write_text(json.dumps(board_document(page.encode("utf-8"))), encoding="utf-8")
        for name in ("board-view.js", "board-view.css"):
            shutil.copy(ROOT / "app" / "static" / name, folder / name)
        (folder / "index.html").write_text(
            '<!doctype html><html lang="en"><title>run</title><link rel="stylesheet" href="board-view.css">'
            '<div data-board-view data-board-src="board.json"></div><script src="board-view.js" defer></script>',
            encoding="utf-8")
        handler = functools.partial(_QuietHandler, directory=str(folder))
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        try:
            return _time_to_ready(f"http://127.0.0.1:{server.server_address[1]}/index.html", repeat)
        finally:
            server.shutdown()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:
        pass


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bin/bench-board-diff", description=__doc__.splitlines()[0])
    parser.add_argument("project", nargs="?", type=Path, default=LARGEST)
    parser.add_argument("--base", type=Path, help="the base checkout (default: the project itself)")
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args(argv)
    scratch = Path(tempfile.mkdtemp(prefix="boardready-bench-"))
    base = args.base or planted_base(args.project, scratch)
    print(f"load before: {os.getloadavg()}")
    _run(args.project, None)   # imports and caches warm
    plain_wall, plain_cpu, base_wall, base_cpu = [], [], [], []
    page = ""
    for _ in range(args.repeat):
        wall, cpu, _ = _run(args.project, None)
        plain_wall.append(wall)
        plain_cpu.append(cpu)
        wall, cpu, page = _run(args.project, base)
        base_wall.append(wall)
        base_cpu.append(cpu)
    print(f"project {args.project.name}, base {base}, {args.repeat} runs each, report {len(page) / 1e6:.2f} MB")
    print("the change:", "; ".join(_run_comparison(args.project, base)))
    print(_figures("check + report, no base   wall", plain_wall))
    print(_figures("check + report, no base   cpu ", plain_cpu))
    print(_figures("check + report, --base    wall", base_wall))
    print(_figures("check + report, --base    cpu ", base_cpu))
    print(f"--base adds {100 * (min(base_cpu) / min(plain_cpu) - 1):.0f}% CPU (best against best), "
          f"{100 * (statistics.median(base_cpu) / statistics.median(plain_cpu) - 1):.0f}% (median against median); "
          f"{100 * (statistics.median(base_wall) / statistics.median(plain_wall) - 1):.0f}% wall (median)")
    for kicad_cli in (False, True) if shutil.which("kicad-cli") else (False,):
        name = "bin/check" + ("" if kicad_cli else " --no-kicad-cli")
        runs = _whole_runs(args.project, base, args.repeat, kicad_cli)
        for what in ("cpu", "wall"):
            plain, with_base = runs[f"plain {what}"], runs[f"base {what}"]
            print(_figures(f"{name}, the whole process, no base   {what}", plain))
            print(_figures(f"{name}, the whole process, --base    {what}", with_base))
            print(f"{name}: --base adds {100 * (min(with_base) / min(plain) - 1):.0f}% {what} (best against best), "
                  f"{100 * (statistics.median(with_base) / statistics.median(plain) - 1):.0f}% "
                  "(median against median)")
    diff = _diff_only(args.project, base, args.repeat)
    print(f"the diff alone (boards, BOM, schematic; both sides already checked): best {min(diff) * 1000:.1f} ms CPU, "
          f"{100 * min(diff) / min(plain_cpu):.1f}% of the run without a base")
    interactive = _interactive(page, args.repeat)
    print(_figures("report interactive in headless Chromium", interactive))
    served = _interactive_served(page, args.repeat)
    print(_figures("run page's drawing interactive (script and board.json over HTTP)", served))
    print(f"load after: {os.getloadavg()}")
    shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

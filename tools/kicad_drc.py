"""KiCad as an oracle: which kicad-cli to run (a path, or one inside a chroot), and
KiCad 6's own DRC run headless with its text report read.

``KicadCli`` is the one place that knows how to run a kicad-cli that lives in a
chroot (``chroot /opt/kicad10-sid kicad-cli``, KiCad 10 from Debian unstable
beside the machine's KiCad 9): the files it reads and writes must lie under the
chroot's folder, so its scratch folders are made there and every path handed to
it is translated to the chroot's view. docs/kicad-oracles.md has the recipe.

KiCad is never a dependency of the checker or of ``bin/test``: it runs here,
in a separate process with the Python that has KiCad's ``pcbnew`` module
(Debian's ``kicad`` package puts it in ``/usr/bin/python3``), and only
``bin/drc-compare`` and ``bin/bench-checker`` call it. The report reader is
used by the tests too, on reports committed beside the planted boards.
"""
from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

VERSION_TIMEOUT_S = 120


@dataclass(frozen=True)
class KicadCli:
    """A kicad-cli to run: ``argv`` starts its command line; ``chroot`` is the folder it sees
    as ``/`` when it runs in a chroot (its files must then lie under that folder)."""
    argv: tuple[str, ...]
    chroot: Path | None = None

    @classmethod
    def parse(cls, spec: str) -> KicadCli:
        """``/usr/bin/kicad-cli``, ``kicad-cli`` (on the PATH) or ``chroot DIR kicad-cli``."""
        words = shlex.split(spec)
        if not words:
            raise ValueError("an empty --kicad-cli")
        if Path(words[0]).name == "chroot":
            folders = [w for w in words[1:] if not w.startswith("-")]
            if len(folders) < 2:
                raise ValueError(f"--kicad-cli {spec!r}: want 'chroot DIR kicad-cli'")
            return cls(tuple(words), Path(folders[0]).resolve())
        found = shutil.which(words[0])
        if found is None:
            raise ValueError(f"--kicad-cli {spec!r}: {words[0]} is not an executable")
        return cls((found, *words[1:]))

    @classmethod
    def on_path(cls) -> KicadCli | None:
        found = shutil.which("kicad-cli")
        return cls((found,)) if found else None

    def scratch(self, prefix: str) -> tempfile.TemporaryDirectory:
        """A scratch folder this kicad-cli can read and write (under the chroot when it has one)."""
        where = None
        if self.chroot is not None:
            where = self.chroot / "tmp"
            where.mkdir(exist_ok=True)
        return tempfile.TemporaryDirectory(prefix=prefix, dir=where)

    def seen(self, path: Path | str) -> str:
        """``path`` as kicad-cli sees it (inside the chroot: relative to its folder)."""
        path = Path(os.path.abspath(path))
        if self.chroot is None:
            return str(path)
        if not path.is_relative_to(self.chroot):
            raise ValueError(f"{path} is outside the chroot {self.chroot}: copy it under the chroot first")
        return "/" + str(path.relative_to(self.chroot))

    def command(self, *args: str | Path) -> list[str]:
        """The command line of ``kicad-cli ARGS``, paths translated."""
        return [*self.argv, *(self.seen(a) if isinstance(a, Path) else a for a in args)]

    def run(self, *args: str | Path, timeout: float, cwd: Path | None = None) -> subprocess.CompletedProcess:
        return subprocess.run(self.command(*args), capture_output=True, text=True, timeout=timeout,
                              cwd=cwd if self.chroot is None else None)

    def version(self) -> str:
        done = self.run("version", timeout=VERSION_TIMEOUT_S)
        return done.stdout.strip().splitlines()[0] if done.stdout.strip() else "unknown"

    def major(self) -> int | None:
        match = re.match(r"(\d+)\.", self.version())
        return int(match.group(1)) if match else None

    def __str__(self) -> str:
        return shlex.join(self.argv)


KICAD_PYTHON = "/usr/bin/python3"
# Runs in KiCad's Python: load, then time the DRC alone and load + DRC.
_RUNNER = """
import sys, time
import pcbnew
start = time.perf_counter()
board = pcbnew.LoadBoard(sys.argv[1])
loaded = time.perf_counter()
pcbnew.WriteDRCReport(board, sys.argv[2], pcbnew.EDA_UNITS_MILLIMETRES, True)
done = time.perf_counter()
print(f"{loaded - start:.6f} {done - loaded:.6f}")
"""
_HEADER = re.compile(r"^\[(?P<type>[a-z_]+)\]: (?P<message>.*)$")
_ITEM = re.compile(r"^\s+@\((?P<x>-?[\d.]+) mm, (?P<y>-?[\d.]+) mm\): (?P<text>.*)$")
_SEVERITY = re.compile(r"Severity: (?P<severity>\w+)")
_NET = re.compile(r"\[([^\]]*)\]")


@dataclass
class KicadItem:
    x: float
    y: float
    text: str

    @property
    def net(self) -> str | None:
        match = _NET.search(self.text)
        return match.group(1) if match else None


@dataclass
class KicadViolation:
    type: str
    message: str
    severity: str = ""
    items: list[KicadItem] = field(default_factory=list)

    @property
    def nets(self) -> set[str]:
        return {item.net for item in self.items if item.net}


def read_report(text: str) -> list[KicadViolation]:
    """Violations, unconnected items and footprint errors of a KiCad 6 text DRC report."""
    violations: list[KicadViolation] = []
    current: KicadViolation | None = None
    for line in text.splitlines():
        header = _HEADER.match(line)
        if header:
            current = KicadViolation(header.group("type"), header.group("message"))
            violations.append(current)
            continue
        if current is None:
            continue
        item = _ITEM.match(line)
        if item:
            current.items.append(KicadItem(float(item.group("x")), float(item.group("y")), item.group("text")))
            continue
        severity = _SEVERITY.search(line)
        if severity:
            current.severity = severity.group("severity")
    return violations


def available() -> bool:
    """Whether KiCad's pcbnew module can be imported by KICAD_PYTHON."""
    if not Path(KICAD_PYTHON).exists():
        return False
    probe = subprocess.run([KICAD_PYTHON, "-c", "import pcbnew; print(pcbnew.Version())"],
                           capture_output=True, text=True, timeout=120)
    return probe.returncode == 0 and probe.stdout.strip().startswith("6.")


def install() -> bool:
    """Install Debian's KiCad (6 on bookworm) when we may: root and apt-get present."""
    if available():
        return True
    if shutil.which("apt-get") is None or os.geteuid() != 0:
        return False
    subprocess.run(["apt-get", "update"], check=False, capture_output=True)
    subprocess.run(["apt-get", "install", "-y", "kicad"], check=False, capture_output=True,
                   env={"DEBIAN_FRONTEND": "noninteractive", "PATH": "/usr/sbin:/usr/bin:/sbin:/bin"})
    return available()


@dataclass
class KicadRun:
    violations: list[KicadViolation]
    load_seconds: float
    drc_seconds: float
    report: str


def run_drc(board: Path) -> KicadRun:
    """KiCad's DRC (all track errors) on ``board``, from a copy in a temporary folder so that
    KiCad's side files (.kicad_prl) never land beside the fixture."""
    with tempfile.TemporaryDirectory(prefix="drc-compare-") as scratch:
        folder = Path(scratch)
        for sibling in board.parent.iterdir():
            if sibling.is_file() and sibling.suffix in (".kicad_pcb", ".kicad_pro", ".kicad_dru"):
                shutil.copyfile(sibling, folder / sibling.name)
        report = folder / "drc.rpt"
        done = subprocess.run([KICAD_PYTHON, "-c", _RUNNER, str(folder / board.name), str(report)],
                              capture_output=True, text=True, timeout=900)
        if done.returncode != 0 or not report.exists():
            raise RuntimeError(f"KiCad's DRC failed on {board}: {done.stderr.strip()[-500:]}")
        load, drc = (float(v) for v in done.stdout.split()[-2:])
        text = report.read_text(encoding="utf-8")
    return KicadRun(read_report(text), load, drc, text)


# -- matching a KiCad 6 text report's violations with checker findings (the KiCad 6
#    plants' test; bin/drc-compare compares with KiCad 9 by KiCad type and item uuid) --

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
# The errors every plant must be found for.
GOAL_TYPES = ("clearance", "shorting_items", "tracks_crossing", "unconnected_items", "track_width")


def _nets(finding) -> set[str]:
    return {n for n in finding.extra.get("nets", []) if n}


def matches(violation: KicadViolation, finding) -> bool:
    """A KiCad 6 violation answered by a checker finding: same kind, same nets (or place, for holes)."""
    if finding.rule_id not in MATCHING_RULES.get(violation.type, ()):
        return False
    kicad_nets, ours = violation.nets, _nets(finding)
    if violation.type in ("clearance", "shorting_items", "tracks_crossing"):
        return bool(kicad_nets) and kicad_nets == ours if len(kicad_nets) == 2 else bool(kicad_nets & ours)
    if violation.type == "hole_near_hole":
        x, y = finding.extra.get("x"), finding.extra.get("y")
        return any(abs(item.x - x) + abs(item.y - y) < 2.0 for item in violation.items) if x is not None else False
    return bool(kicad_nets & ours) or (not kicad_nets and not ours)

"""KiCad 9's own ERC and DRC reports beside every KiCad project of the fixtures.

``bin/kicad-oracle [FOLDER ...]`` runs, for each project under the folders
(default ``tests/fixtures``)::

    kicad-cli pcb drc --format json --severity-all --schematic-parity --units mm -o kicad-drc.json BOARD
    kicad-cli sch erc --format json --severity-all --units mm -o kicad-erc.json SCHEMATIC

(``--schematic-parity`` only when the board has its schematic) and writes the
reports beside the project file, prefixed with the project's name when one
folder holds two projects (``ecc83-pp.kicad-drc.json``). ``KICAD-ORACLE.md`` in
the first folder records the command and KiCad's version. The tests compare the
checker with these committed reports; they never run KiCad. KiCad is a tool
here, never a dependency of the checker or the service.

Note: kicad-cli 9.0.8 writes ERC item positions at 1/100 of their value in mm
(``checker.kicad_reports.erc_position_scale`` undoes it when reading).
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures"
TIMEOUT_S = 900
NOTE = "KICAD-ORACLE.md"


@dataclass(frozen=True)
class KicadProject:
    folder: Path
    name: str                      # the project's file stem
    schematic: Path | None
    board: Path | None
    shares_folder: bool            # another project lives in the same folder

    def report(self, kind: str) -> Path:
        """Where the ``drc``/``erc`` report of this project lives."""
        stem = f"{self.name}.kicad-{kind}.json" if self.shares_folder else f"kicad-{kind}.json"
        return self.folder / stem


def find_projects(folders: list[Path]) -> list[KicadProject]:
    """Every project (a .kicad_pro, or a board/root schematic without one) under ``folders``."""
    stems: dict[Path, set[str]] = {}
    for top in folders:
        for pro in sorted(top.rglob("*.kicad_pro")):
            stems.setdefault(pro.parent, set()).add(pro.stem)
        for board in sorted(top.rglob("*.kicad_pcb")):
            if not (board.parent / f"{board.stem}.kicad_pro").exists():
                stems.setdefault(board.parent, set()).add(board.stem)
    projects = []
    for folder, names in sorted(stems.items()):
        for name in sorted(names):
            schematic, board = folder / f"{name}.kicad_sch", folder / f"{name}.kicad_pcb"
            if not schematic.exists() and not board.exists():
                continue
            projects.append(KicadProject(folder, name, schematic if schematic.exists() else None,
                                         board if board.exists() else None, len(names) > 1))
    return projects


def kicad_cli() -> str | None:
    return shutil.which("kicad-cli")


def kicad_version(cli: str) -> str:
    done = subprocess.run([cli, "version"], capture_output=True, text=True, timeout=60)
    return done.stdout.strip().splitlines()[0] if done.stdout.strip() else "unknown"


def command(kind: str, cli: str, source: Path, output: Path, parity: bool = True) -> list[str]:
    """The exact kicad-cli command of one oracle report."""
    if kind == "drc":
        return ([cli, "pcb", "drc", "--format", "json", "--severity-all"]
                + (["--schematic-parity"] if parity else []) + ["--units", "mm", "-o", str(output), str(source)])
    return [cli, "sch", "erc", "--format", "json", "--severity-all", "--units", "mm", "-o", str(output), str(source)]


def run(kind: str, cli: str, project: KicadProject, output: Path) -> str | None:
    """Run one check of ``project`` into ``output``; None when done, else what went wrong.

    KiCad runs on a scratch copy of the project folder, so nothing it writes
    (caches, backups, a refreshed project file) lands in the fixtures.
    """
    source = project.board if kind == "drc" else project.schematic
    if source is None:
        return "no source file"
    with tempfile.TemporaryDirectory(prefix="kicad-oracle-") as scratch:
        copy = Path(scratch) / project.folder.name
        shutil.copytree(project.folder, copy, ignore=shutil.ignore_patterns("*.json", "*.md"),
                        dirs_exist_ok=False)
        for pro in project.folder.glob("*.kicad_pro"):
            shutil.copy2(pro, copy / pro.name)
        report = Path(scratch) / "report.json"
        try:
            done = subprocess.run(command(kind, cli, copy / source.name, report, project.schematic is not None),
                                  capture_output=True, text=True, timeout=TIMEOUT_S, cwd=copy)
        except subprocess.TimeoutExpired:
            return f"timed out after {TIMEOUT_S} s"
        if done.returncode != 0 or not report.exists():
            return f"exit {done.returncode}: {(done.stderr or done.stdout).strip()[-300:]}"
        shutil.copyfile(report, output)
    return None


def write_note(folder: Path, version: str, projects: list[KicadProject], failures: dict[Path, str]) -> Path:
    lines = [
        "# KiCad 9 oracle reports",
        "",
        "Written by `bin/kicad-oracle` (tools/kicad_oracle.py) with",
        f"`kicad-cli version`: **{version}** (Debian `kicad` from bookworm-backports).",
        "For each project, on a scratch copy of its folder:",
        "",
        "    kicad-cli pcb drc --format json --severity-all --schematic-parity --units mm -o kicad-drc.json BOARD.kicad_pcb",
        "    kicad-cli sch erc --format json --severity-all --units mm -o kicad-erc.json ROOT.kicad_sch",
        "",
        "(`--schematic-parity` only when the board has its schematic.) The reports lie beside the",
        "project file, named `<project>.kicad-drc.json` when a folder holds two projects.",
        "Tests compare the checker with them and never run KiCad.",
        "",
        "kicad-cli 9.0.8 writes ERC item positions at 1/100 of their value in mm;",
        "`checker.kicad_reports.erc_position_scale` undoes that when a report is read.",
        "",
        "| project | DRC report | ERC report |",
        "|---|---|---|",
    ]
    for project in projects:
        relative = project.folder.relative_to(folder)
        drc = project.report("drc").name if project.report("drc").exists() else "-"
        erc = project.report("erc").name if project.report("erc").exists() else "-"
        drc = f"KiCad failed: {failures[project.report('drc')]}" if project.report("drc") in failures else drc
        erc = f"KiCad failed: {failures[project.report('erc')]}" if project.report("erc") in failures else erc
        lines.append(f"| `{relative}/{project.name}` | {drc} | {erc} |")
    note = folder / NOTE
    note.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return note


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bin/kicad-oracle", description=__doc__.splitlines()[0])
    parser.add_argument("folders", nargs="*", type=Path, default=[FIXTURES])
    parser.add_argument("--only", choices=("drc", "erc"), help="only this check")
    args = parser.parse_args(argv)
    cli = kicad_cli()
    if cli is None:
        print("kicad-cli is not installed (Debian: apt-get install -t bookworm-backports kicad)", file=sys.stderr)
        return 2
    version = kicad_version(cli)
    folders = [Path(os.path.abspath(f)) for f in args.folders]
    projects = find_projects(folders)
    failures: dict[Path, str] = {}
    for project in projects:
        for kind in ("drc", "erc"):
            if args.only and kind != args.only:
                continue
            if (project.board if kind == "drc" else project.schematic) is None:
                continue
            problem = run(kind, cli, project, project.report(kind))
            where = project.report(kind).relative_to(ROOT) if project.report(kind).is_relative_to(ROOT) \
                else project.report(kind)
            print(f"{'FAILED' if problem else 'wrote '} {where}{': ' + problem if problem else ''}")
            if problem:
                failures[project.report(kind)] = problem.replace("|", "/").replace("\n", " ")
    if folders == [FIXTURES]:
        write_note(FIXTURES, version, find_projects(folders), failures)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

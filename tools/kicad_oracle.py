"""KiCad's own ERC and DRC reports (KiCad 9's and KiCad 10's) beside every KiCad project of the fixtures.

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

``--kicad-cli SPEC`` names the kicad-cli to run: a path, or ``chroot DIR kicad-cli``
(KiCad 10 from Debian unstable in a chroot, docs/kicad-oracles.md); default the
one on the PATH. KiCad 9's reports are ``kicad-drc.json`` / ``kicad-erc.json``,
another release's carry its major: ``kicad10-drc.json`` / ``kicad10-erc.json``,
with ``KICAD10-ORACLE.md`` as the note.

``--upgrade-into DEST`` saves each project in the running KiCad's own format
instead (``kicad-cli pcb upgrade --force`` and ``sch upgrade --force``), each
project folder copied to DEST under its path relative to the folder given: the
KiCad 10 forms of the fixtures (tests/fixtures/kicad10) and of the corpus
(``.corpus-k10``) are made this way.

Note: kicad-cli 9.0.8 writes ERC item positions at 1/100 of their value in mm
(``checker.kicad_reports.erc_position_scale`` undoes it when reading).
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from .kicad_drc import KicadCli

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

    def report(self, kind: str, release: int = 9) -> Path:
        """Where the ``drc``/``erc`` report of this project by KiCad ``release`` lives."""
        name = f"{report_prefix(release)}-{kind}.json"
        return self.folder / (f"{self.name}.{name}" if self.shares_folder else name)


def report_prefix(release: int | None) -> str:
    """``kicad`` for KiCad 9's reports (the first oracle's names, kept), ``kicad10`` for KiCad 10's."""
    return "kicad" if release in (None, 9) else f"kicad{release}"


def note_name(release: int | None) -> str:
    return NOTE if release in (None, 9) else f"KICAD{release}-ORACLE.md"


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


def kicad_cli(spec: str | None = None) -> KicadCli | None:
    """The kicad-cli ``spec`` names (``--kicad-cli``), else the one on the PATH, else None."""
    return KicadCli.parse(spec) if spec else KicadCli.on_path()


def kicad_version(cli: KicadCli | str) -> str:
    return (cli if isinstance(cli, KicadCli) else KicadCli.parse(cli)).version()


def arguments(kind: str, source: Path, output: Path, parity: bool = True) -> list[str | Path]:
    """kicad-cli's arguments for one oracle report (paths left as paths for the chroot's view)."""
    if kind == "drc":
        return (["pcb", "drc", "--format", "json", "--severity-all"] + (["--schematic-parity"] if parity else [])
                + ["--units", "mm", "-o", output, source])
    return ["sch", "erc", "--format", "json", "--severity-all", "--units", "mm", "-o", output, source]


def command(kind: str, cli: KicadCli | str, source: Path, output: Path, parity: bool = True) -> list[str]:
    """The exact kicad-cli command of one oracle report."""
    cli = cli if isinstance(cli, KicadCli) else KicadCli((cli,))
    return cli.command(*arguments(kind, source, output, parity))


def _scratch_copy(cli: KicadCli, project: KicadProject, scratch: str) -> Path:
    """The project's folder copied where ``cli`` can read it, reports and notes left out, so that
    nothing KiCad writes (caches, backups, a refreshed project file) lands beside the original."""
    copy = Path(scratch) / project.folder.name
    shutil.copytree(project.folder, copy, ignore=shutil.ignore_patterns("*.json", "*.md"), dirs_exist_ok=False)
    for pro in project.folder.glob("*.kicad_pro"):
        shutil.copy2(pro, copy / pro.name)
    return copy


def run(kind: str, cli: KicadCli | str, project: KicadProject, output: Path) -> str | None:
    """Run one check of ``project`` into ``output``; None when done, else what went wrong."""
    cli = cli if isinstance(cli, KicadCli) else KicadCli((cli,))
    source = project.board if kind == "drc" else project.schematic
    if source is None:
        return "no source file"
    with cli.scratch("kicad-oracle-") as scratch:
        copy = _scratch_copy(cli, project, scratch)
        report = Path(scratch) / "report.json"
        try:
            done = cli.run(*arguments(kind, copy / source.name, report, project.schematic is not None),
                           timeout=TIMEOUT_S, cwd=copy)
        except subprocess.TimeoutExpired:
            return f"timed out after {TIMEOUT_S} s"
        if done.returncode != 0 or not report.exists():
            return f"exit {done.returncode}: {(done.stderr or done.stdout).strip()[-300:]}"
        shutil.copyfile(report, output)
    return None


def upgrade(cli: KicadCli, project: KicadProject, destination: Path) -> str | None:
    """``project``'s folder saved by ``cli`` in its own format into ``destination`` (a folder made
    here, holding every file of the original but its reports and notes); None when done.

    ``pcb upgrade --force`` rewrites the board and ``sch upgrade --force`` the schematic it is
    given, the root only (kicad-cli 10.0.7 leaves the other sheets as they were), so every other
    sheet file of the folder is upgraded alone first, then the root, as KiCad's editor saves them all.
    """
    with cli.scratch("kicad-upgrade-") as scratch:
        copy = _scratch_copy(cli, project, scratch)
        said = []
        sheets = sorted(p for p in copy.rglob("*.kicad_sch") if project.schematic and p.name != project.schematic.name)
        steps = ([("pcb", copy / project.board.name)] if project.board else []) \
            + [("sch", sheet) for sheet in sheets if not project.shares_folder] \
            + ([("sch", copy / project.schematic.name)] if project.schematic else [])
        for tool, source in steps:
            try:
                done = cli.run(tool, "upgrade", "--force", source, timeout=TIMEOUT_S, cwd=copy)
            except subprocess.TimeoutExpired:
                return f"{tool} upgrade timed out after {TIMEOUT_S} s"
            if done.returncode != 0:
                said.append(f"{tool} upgrade exit {done.returncode}: {(done.stderr or done.stdout).strip()[-200:]}")
        destination.mkdir(parents=True, exist_ok=True)
        for path in sorted(copy.rglob("*")):
            target = destination / path.relative_to(copy)
            if path.is_dir():
                target.mkdir(exist_ok=True)
            elif not path.name.endswith(("-bak", ".kicad_prl", ".lck")) and "-backups" not in path.parts:
                shutil.copyfile(path, target)
    return "; ".join(said) or None


def write_note(folder: Path, version: str, projects: list[KicadProject], failures: dict[Path, str],
               release: int = 9, cli: str = "kicad-cli") -> Path:
    prefix = report_prefix(release)
    where = ("Debian `kicad` from bookworm-backports" if release == 9 else
             f"Debian `kicad` from unstable, run as `{cli}`: docs/kicad-oracles.md")
    lines = [
        f"# KiCad {release} oracle reports",
        "",
        "Written by `bin/kicad-oracle` (tools/kicad_oracle.py) with",
        f"`kicad-cli version`: **{version}** ({where}).",
        "For each project, on a scratch copy of its folder:",
        "",
        f"    kicad-cli pcb drc --format json --severity-all --schematic-parity --units mm -o {prefix}-drc.json "
        "BOARD.kicad_pcb",
        f"    kicad-cli sch erc --format json --severity-all --units mm -o {prefix}-erc.json ROOT.kicad_sch",
        "",
        "(`--schematic-parity` only when the board has its schematic.) The reports lie beside the",
        f"project file, named `<project>.{prefix}-drc.json` when a folder holds two projects.",
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
        drc_path, erc_path = project.report("drc", release), project.report("erc", release)
        drc = drc_path.name if drc_path.exists() else "-"
        erc = erc_path.name if erc_path.exists() else "-"
        drc = f"KiCad failed: {failures[drc_path]}" if drc_path in failures else drc
        erc = f"KiCad failed: {failures[erc_path]}" if erc_path in failures else erc
        lines.append(f"| `{relative}/{project.name}` | {drc} | {erc} |")
    note = folder / note_name(release)
    note.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return note


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bin/kicad-oracle", description=__doc__.splitlines()[0])
    parser.add_argument("folders", nargs="*", type=Path, default=[FIXTURES])
    parser.add_argument("--only", choices=("drc", "erc"), help="only this check")
    parser.add_argument("--kicad-cli", metavar="SPEC", help="the kicad-cli to run: a path, or 'chroot DIR kicad-cli' "
                                                            "(default: kicad-cli on the PATH)")
    parser.add_argument("--upgrade-into", metavar="DEST", type=Path,
                        help="save each project in this KiCad's format under DEST instead of writing reports")
    args = parser.parse_args(argv)
    try:
        cli = kicad_cli(args.kicad_cli)
    except ValueError as exc:
        print(exc, file=sys.stderr)
        return 2
    if cli is None:
        print("kicad-cli is not installed (Debian: apt-get install -t bookworm-backports kicad; KiCad 10: "
              "docs/kicad-oracles.md)", file=sys.stderr)
        return 2
    version = kicad_version(cli)
    release = cli.major()
    folders = [Path(os.path.abspath(f)) for f in args.folders]
    if args.upgrade_into is not None:
        return upgrade_all(cli, folders, Path(os.path.abspath(args.upgrade_into)))
    projects = find_projects(folders)
    failures: dict[Path, str] = {}
    for project in projects:
        for kind in ("drc", "erc"):
            if args.only and kind != args.only:
                continue
            if (project.board if kind == "drc" else project.schematic) is None:
                continue
            output = project.report(kind, release)
            saved_by = saved_by_major(project.board if kind == "drc" else project.schematic)
            if release and saved_by and saved_by > release:
                print(f"skipped {output.parent}: saved by KiCad {saved_by}, which KiCad {release} cannot read")
                continue
            problem = run(kind, cli, project, output)
            where = output.relative_to(ROOT) if output.is_relative_to(ROOT) else output
            print(f"{'FAILED' if problem else 'wrote '} {where}{': ' + problem if problem else ''}")
            if problem:
                failures[output] = problem.replace("|", "/").replace("\n", " ")
    if folders == [FIXTURES]:
        write_note(FIXTURES, version, find_projects(folders), failures, release, str(cli))
    return 1 if failures else 0


def saved_by_major(source: Path | None) -> int | None:
    """The KiCad major that saved a board or schematic, from its (version ...) header."""
    if source is None:
        return None
    from checker.versions import major_for, parse_version

    head = source.read_text(encoding="utf-8", errors="replace")[:300]
    found = re.search(r"\(version (\d+)\)", head)
    kind = "board" if source.suffix == ".kicad_pcb" else "schematic"
    return major_for(kind, parse_version(found.group(1))) if found else None


def upgrade_all(cli: KicadCli, folders: list[Path], destination: Path) -> int:
    """Every project under ``folders`` saved by ``cli`` under ``destination``, at its path relative
    to the folder given (under that folder's name when several are given); a folder of two
    projects is copied once, both upgraded in the copy."""
    failed = 0
    for top in folders:
        base = destination / top.name if len(folders) > 1 else destination
        for project in find_projects([top]):
            target = base / project.folder.relative_to(top)
            if project.shares_folder and target.exists():
                project = KicadProject(target, project.name, project.schematic and target / project.schematic.name,
                                       project.board and target / project.board.name, True)
            problem = upgrade(cli, project, target)
            print(f"{'FAILED' if problem else 'saved '} {target}/{project.name}{': ' + problem if problem else ''}")
            failed += problem is not None
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

"""The differential corpus in KiCad 10's form: each project saved by kicad-cli 10, and KiCad 10's reports.

tools/corpus.py keeps the corpus as its authors saved it (``.corpus/<id>/``, KiCad 9's
reports under ``tests/corpus/kicad9/<id>/``). This module makes the same projects as a
team on KiCad 10 has them and judges them against KiCad 10:

    python -m tools.corpus_k10 upgrade --kicad-cli 'chroot /opt/kicad10-sid kicad-cli'
    python -m tools.corpus_k10 oracle  --kicad-cli 'chroot /opt/kicad10-sid kicad-cli'
    python -m tools.corpus_k10 compare [bin/corpus's options]

``upgrade`` copies each entry's cache folder into ``.corpus-k10/<id>/`` (git-ignored, at the
same paths) and has kicad-cli save it in its own format there: ``pcb upgrade --force`` on the
board and ``sch upgrade --force`` on every sheet, the root last (kicad-cli 10.0.7's
``sch upgrade`` saves only the file it is given). Running it again remakes the same files from
the same cache. ``oracle`` runs kicad-cli 10 on those files and writes its reports under
``tests/corpus/kicad10/<id>/`` as tools/corpus.py writes KiCad 9's (``drc.json``/``erc.json``,
gzipped above 64 KiB, ``kicad.json`` with the times). Both work on tools/corpus.py's entries with
its cache and report folders pointed at the KiCad 10 ones (``in_kicad10_form``); ``compare`` runs
bin/corpus (tools/corpus_compare.py) the same way on the KiCad 10 form against KiCad 10's reports
(``--live --kicad-cli 'chroot /opt/kicad10-sid kicad-cli'`` runs kicad-cli 10 now instead). The
manifest's hashes are of the authors' files, so an entry of the KiCad 10 form is taken when its
board was saved there, and never rebuilt from the mirror (that would put the authors' files back).
"""
from __future__ import annotations

import argparse
import contextlib
import shutil
import subprocess
import sys
from pathlib import Path, PurePosixPath

from . import corpus, kicad_oracle
from .kicad_drc import KicadCli

ROOT = corpus.ROOT
CACHE_K10 = ROOT / ".corpus-k10"
REPORTS_K10 = corpus.CORPUS / "kicad10"
DEFAULT_CLI = "chroot /opt/kicad10-sid kicad-cli"


def saved_in_kicad10_form(entry: corpus.Entry) -> list[str]:
    """tools/corpus.py's verify for the KiCad 10 form: its board saved there, else why not."""
    board = CACHE_K10 / entry.id / entry.board
    if not board.is_file():
        return [f"{board} is missing (python -m tools.corpus_k10 upgrade)"]
    return []


@contextlib.contextmanager
def in_kicad10_form():
    """tools/corpus.py's cache and report folders pointed at the KiCad 10 form while inside."""
    saved = corpus.CACHE, corpus.REPORTS, corpus.verify, corpus.git_dir
    corpus.CACHE, corpus.REPORTS = CACHE_K10, REPORTS_K10
    corpus.verify, corpus.git_dir = saved_in_kicad10_form, lambda *_args, **_kw: None
    try:
        yield
    finally:
        corpus.CACHE, corpus.REPORTS, corpus.verify, corpus.git_dir = saved


def sheets_of(entry: corpus.Entry) -> list[str]:
    """The entry's schematic files, the root last."""
    others = sorted(p for p in entry.files if p.endswith(".kicad_sch") and p != entry.schematic)
    return others + ([entry.schematic] if entry.schematic else [])


def upgrade(entry: corpus.Entry, cli: KicadCli) -> str | None:
    """The entry saved by ``cli`` into ``.corpus-k10/<id>/``; None when every file was saved."""
    source = corpus.CACHE / entry.id
    if not source.is_dir():
        return f"not in the cache {source} (python -m tools.corpus materialize)"
    problems = []
    with cli.scratch("corpus-k10-") as scratch:
        copy = Path(scratch) / "p"
        shutil.copytree(source, copy)
        steps = [("pcb", entry.board)] + [("sch", sheet) for sheet in sheets_of(entry)]
        for tool, path in steps:
            try:
                done = cli.run(tool, "upgrade", "--force", copy / PurePosixPath(path),
                               timeout=kicad_oracle.TIMEOUT_S)
            except subprocess.TimeoutExpired:
                problems.append(f"{tool} upgrade {path}: timed out")
                continue
            if done.returncode != 0:
                problems.append(f"{tool} upgrade {path}: exit {done.returncode}: "
                                f"{(done.stderr or done.stdout).strip()[-200:]}")
        target = CACHE_K10 / entry.id
        if target.exists():
            shutil.rmtree(target)
        shutil.copytree(copy, target, ignore=shutil.ignore_patterns("*-bak", "*.kicad_prl", "*.lck", "*-backups"))
    return "; ".join(problems) or None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.corpus_k10", description=__doc__.splitlines()[0])
    parser.add_argument("action", choices=("upgrade", "oracle", "compare"))
    parser.add_argument("--kicad-cli", default=DEFAULT_CLI, metavar="SPEC",
                        help=f"kicad-cli 10: a path or 'chroot DIR kicad-cli' (default {DEFAULT_CLI!r})")
    parser.add_argument("--only", action="append", metavar="ID", help="only this entry (repeatable)")
    parser.add_argument("--missing", action="store_true",
                        help="only entries whose board is not saved yet (upgrade) or without KiCad 10's reports "
                             "(oracle)")
    args, rest = parser.parse_known_args(argv)
    if args.action == "compare":
        from . import corpus_compare

        with in_kicad10_form():
            return corpus_compare.main(rest + [f"--only={i}" for i in args.only or []]
                                       + (["--kicad-cli", args.kicad_cli] if "--live" in rest else []))
    if rest:
        parser.error(f"unrecognized arguments: {' '.join(rest)}")
    try:
        cli = KicadCli.parse(args.kicad_cli)
    except ValueError as exc:
        print(exc, file=sys.stderr)
        return 2
    if cli.major() != 10:
        print(f"{cli} is KiCad {cli.version()}, not 10", file=sys.stderr)
        return 2
    entries = [e for e in corpus.load_manifest() if not args.only or e.id in args.only]
    if args.action == "upgrade":
        if args.missing:
            entries = [e for e in entries if saved_in_kicad10_form(e)]
        failed = 0
        for entry in entries:
            problem = upgrade(entry, cli)
            failed += problem is not None
            print(f"{'FAILED' if problem else 'saved '} .corpus-k10/{entry.id}{': ' + problem if problem else ''}",
                  flush=True)
        return 1 if failed else 0
    absent = [e.id for e in entries if saved_in_kicad10_form(e)]
    for entry_id in absent:
        print(f"skipped {entry_id}: not saved in KiCad 10's form yet (upgrade first)", flush=True)
    entries = [e for e in entries if e.id not in absent
               and not (args.missing and (REPORTS_K10 / e.id / "kicad.json").exists())]
    with in_kicad10_form():
        return corpus.oracle(entries, args.kicad_cli)


if __name__ == "__main__":
    sys.exit(main())

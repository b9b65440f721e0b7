"""``--base``: the base commit's checkout, checked beside the head, and the
comparison the report and the run page draw (checker/board_diff.py diffs the
boards and BOMs, checker/schematic_diff.py the schematics).
"""
from __future__ import annotations

import contextlib
import multiprocessing
import os
import threading
from dataclasses import replace
from pathlib import Path

from .board_diff import bom_summary, diff_boards, diff_bom, mark_new, summary
from .findings import Finding
from .project import KICAD_SUFFIXES
from .schematic_diff import diff_schematic, schematic_state
from .schematic_diff import summary as schematic_summary

# Files a schematic, its ERC and its library checks never read: a change in them alone
# leaves the base's schematic and ERC findings the head's.
_BOARD_SIDE_SUFFIXES = (".kicad_pcb", ".kicad_dru")
_BOARD_SIDE_NAMES = ("fp-lib-table",)
_ERC_PREFIX = "erc."   # rule ids erc.py gives its findings; no other rule uses it


class BaseCheck:
    """The base commit's checkout, checked the same way as the head (``check`` is the
    runner's), for the diff and for which findings are new.

    The base is checked by the same rules, so "new" means what it always meant: the
    fingerprint is not among the base's findings. What the base shares with the head
    byte for byte is not read or checked twice: when only board-side files changed
    (the board, its design rules, the footprint library table), the base's schematic
    is the head's (the same files make the same model) and its ERC findings are the
    head's (the same schematic, project file and symbol libraries make the same ERC
    findings), so the base runs every rule but ERC, on its own board and the head's
    schematic. Which ERC findings are new is then known without running it: none.

    The base's check runs beside the head's rules: in a forked process started once
    the head's models are read (``start``), on a machine with a core to spare (and no
    other thread that a fork could catch holding a lock). The fork diffs the boards
    too (it has both) and sends back only the diff, the base's fingerprints, BOM and,
    when it differs, schematic state. Otherwise, or when the fork fails, it all runs in
    this process when asked for. A base without the project (the pull request adds it)
    compares with nothing; a base the checker refuses (a malformed or hostile file)
    compares not at all, and says so."""

    def __init__(self, check, options, root: Path, target: Path):
        base_root = Path(os.path.abspath(options.base))
        # KiCad's own reports are the head's (or slow to make again): the base is checked
        # by the checker's own rules only, and only those findings are marked new or existing.
        self._options = replace(options, path=base_root / os.path.relpath(target, root), root=base_root,
                                base=None, baseline=None, progress=None, erc_report=None, drc_report=None,
                                run_kicad_cli=False)
        self._check = check
        self._root = Path(os.path.abspath(root))
        self._child = None
        self._pipe = None
        head, base = _kicad_files(self._root, target), _kicad_files(base_root, self._options.path)
        # A change that left every KiCad file as it was (firmware, docs) needs no second check.
        self.unchanged = self._options.path.exists() and _same_files(head, base)
        # A change to board-side files alone leaves the schematic and its ERC as they were.
        self._schematic_unchanged = (not self.unchanged and self._options.path.exists()
                                     and _same_files(_schematic_side(head), _schematic_side(base)))

    def start(self, models) -> None:
        """Fork the base's check, now that the head's models are read (the fork reuses
        the head's schematic when it may, and diffs against the head's boards)."""
        if self.unchanged or not _can_fork():
            return
        try:
            context = multiprocessing.get_context("fork")
            self._pipe, sending = context.Pipe(duplex=False)
            self._child = context.Process(target=self._send, args=(sending, models), daemon=True)
            self._child.start()
            sending.close()
        except OSError:
            self._child = None

    def _checked(self, head_models, reuse: bool) -> dict:
        """What the comparison needs of the base: the boards' diffs against the head's,
        its finding fingerprints (ERC's left out when they are the head's), BOM lines
        and schematic state (None: the head's). ``reuse``: take what the head read where
        the inputs are the same; only in a single-threaded process (_reusing swaps
        module functions while the base is checked)."""
        from .errors import HostileInputError, NoProjectFound

        reused = self._reusable_schematics(head_models) if reuse else {}
        try:
            with _reusing(reused):
                base = self._check(self._options)
        except NoProjectFound:
            return {"boards": _board_diffs({}, head_models), "fingerprints": [], "erc_is_heads": False,
                    "bom": [], "schematic": schematic_state(None, self._root)}
        except HostileInputError as exc:   # the base's problem, not the head's: its check goes on
            return {"unreadable": str(exc)}
        schematic = first_schematic(base.models)
        return {"boards": _board_diffs({m.board.file: m.board for m in base.models if m.board is not None},
                                       head_models),
                "fingerprints": [f.fingerprint for f in base.findings], "erc_is_heads": bool(reused),
                "bom": base.result.get("bom", []),
                "schematic": None if reused and schematic is first_schematic(head_models)
                else schematic_state(schematic, self._options.root)}

    def _reusable_schematics(self, head_models) -> dict:
        """The head's schematics the base may take as its own, by their root file:
        all of them when only board-side files changed, unless a sheet is missing
        (the base may have it) or lies outside the compared folder."""
        if not self._schematic_unchanged:
            return {}
        schematics = [m.schematic for m in head_models if m.schematic is not None]
        if any(s.problems for s in schematics):
            return {}
        base_root = self._options.root
        for schematic in schematics:
            for name in schematic.files:
                try:
                    if (self._root / name).read_bytes() != (base_root / name).read_bytes():
                        return {}
                except OSError:
                    return {}
        return {s.root_file: s for s in schematics}

    def _send(self, pipe, head_models) -> None:
        try:
            pipe.send(("ok", self._checked(head_models, reuse=True)))
        except BaseException as exc:   # the parent re-raises it; the child only reports
            pipe.send(("error", exc))
        finally:
            pipe.close()

    def _result(self, head_models) -> dict:
        if self._child is not None:
            try:
                outcome, value = self._pipe.recv()
            except EOFError:   # the child died without a word: check here instead
                outcome, value = "ok", self._checked(head_models, _single_threaded())
            finally:
                self._child.join()
                self._pipe.close()
            if outcome == "error":
                raise value
            return value
        return self._checked(head_models, _single_threaded())

    def compare(self, bom_of, limits, models, findings: list[Finding]) -> dict:
        head_bom = bom_of(models, limits)
        if self.unchanged:
            base = {"boards": _board_diffs({m.board.file: m.board for m in models if m.board is not None}, models),
                    "fingerprints": [f.fingerprint for f in findings], "erc_is_heads": False,
                    "bom": head_bom, "schematic": None}
        else:
            base = self._result(models)
        return compare(models, base, head_bom, findings, self._root)


@contextlib.contextmanager
def _reusing(schematics: dict):
    """Inside: loading a schematic whose root file is among ``schematics`` gives that
    model, and ERC finds nothing (its findings are the head's, see BaseCheck). Only
    ever entered in a single-threaded process (the fork, or a check without threads),
    and undone on the way out."""
    if not schematics:
        yield
        return
    from . import erc, runner

    load, run_erc = runner.load_schematic, erc.check

    def load_reusing(root_file, reader, project_name):
        return schematics.get(reader.relative(root_file)) or load(root_file, reader, project_name)

    runner.load_schematic, erc.check = load_reusing, lambda model: []
    try:
        yield
    finally:
        runner.load_schematic, erc.check = load, run_erc


def _single_threaded() -> bool:
    return threading.active_count() == 1


def _can_fork() -> bool:
    return (os.cpu_count() or 1) > 1 and _single_threaded() and hasattr(os, "fork")


def _board_diffs(base_boards: dict, head_models) -> list[dict]:
    return [{"file": m.board.file, "diff": diff_boards(base_boards.get(m.board.file), m.board)}
            for m in head_models if m.board is not None]


_INPUT_NAMES = (".boardready.toml", "fp-lib-table", "sym-lib-table")   # and the project's .kicad_sym libraries (ERC)
_MAX_COMPARED_FILES = 500


def _kicad_files(root: Path, target: Path) -> dict[str, Path] | None:
    """The files a check of ``target`` can read, by path relative to ``root``; None when
    there are too many to compare cheaply (or there is no ``target``)."""
    if not target.exists():
        return None
    files = {}
    config = root / ".boardready.toml"
    if config.is_file():
        files[".boardready.toml"] = config
    folder = target if target.is_dir() else target.parent
    for where, _, names in os.walk(folder):
        for name in names:
            if name.endswith(KICAD_SUFFIXES) or name in _INPUT_NAMES or name.endswith(".kicad_sym"):
                path = Path(where) / name
                files[os.path.relpath(path, root)] = path
                if len(files) > _MAX_COMPARED_FILES:
                    return None
    return files


def _schematic_side(files: dict[str, Path] | None) -> dict[str, Path] | None:
    """The files a schematic's model and its ERC can read: all but the board-side ones."""
    if files is None:
        return None
    return {name: path for name, path in files.items()
            if not name.endswith(_BOARD_SIDE_SUFFIXES) and os.path.basename(name) not in _BOARD_SIDE_NAMES}


def _same_files(head: dict[str, Path] | None, base: dict[str, Path] | None) -> bool:
    """Whether both sides have the same files, byte for byte."""
    if head is None or base is None or head.keys() != base.keys():
        return False
    try:
        if any(head[name].stat().st_size != base[name].stat().st_size for name in head):
            return False   # the usual change, told without reading a file
        return all(head[name].read_bytes() == base[name].read_bytes() for name in head)
    except OSError:
        return False


def first_schematic(models):
    return next((m.schematic for m in models if m.schematic is not None), None)


def compare(models, base: dict, head_bom: list[dict], findings: list[Finding], root: Path) -> dict:
    """The comparison the report and the run page draw: each head board's diff against
    its base twin, the BOM and the schematic; ``base`` is what BaseCheck found in the base."""
    if "unreadable" in base:
        empty = {"added": [], "removed": [], "changed": []}
        drawn = {"added": {}, "removed": {}}
        return {"boards": [], "bom": empty,
                "schematic": {"sheets": empty, "symbols": empty, "wires": drawn, "labels": drawn},
                "summary": [f"The base commit could not be checked ({base['unreadable']}): no diff, "
                            "and which findings are new is not known"]}
    known = list(base["fingerprints"])
    if base["erc_is_heads"]:
        known += [f.fingerprint for f in findings if f.rule_id.startswith(_ERC_PREFIX)]
    mark_new(findings, known)
    boards = base["boards"]
    bom = diff_bom(base["bom"], head_bom)
    head_schematic = schematic_state(first_schematic(models), root)
    schematic = diff_schematic(head_schematic if base["schematic"] is None else base["schematic"], head_schematic)
    lines = summary(boards[0]["diff"], bom) if boards else bom_summary(bom)
    return {"boards": boards, "bom": bom, "schematic": schematic, "summary": lines + schematic_summary(schematic)}

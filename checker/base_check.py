"""``--base``: the base commit's checkout, checked beside the head, and the
comparison the report and the run page draw (checker/board_diff.py diffs the
boards and BOMs, checker/schematic_diff.py the schematics).
"""
from __future__ import annotations

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


class BaseCheck:
    """The base commit's checkout, checked the same way as the head (``check`` is the
    runner's), for the diff and for which findings are new.

    Checking the base is a second whole check, so it runs beside the head's: in a
    forked process started before the head is read, on a machine with a core to
    spare (and no other thread that a fork could catch holding a lock). Otherwise,
    or when the fork fails, it runs in this process when asked for. A base without
    the project (the pull request adds it) compares with nothing; a base the
    checker refuses (a malformed or hostile file) compares not at all, and says so."""

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
        # A change that left every KiCad file as it was (firmware, docs) needs no second check.
        self.unchanged = _same_inputs(self._root, target, base_root, self._options.path)
        if self.unchanged:
            return
        if (os.cpu_count() or 1) > 1 and threading.active_count() == 1 and hasattr(os, "fork"):
            try:
                context = multiprocessing.get_context("fork")
                self._pipe, sending = context.Pipe(duplex=False)
                self._child = context.Process(target=self._send, args=(sending,), daemon=True)
                self._child.start()
                sending.close()
            except OSError:
                self._child = None

    def _checked(self) -> dict:
        """What the comparison needs of the base: its boards, finding fingerprints,
        BOM lines and schematic (symbols and sheet digests)."""
        from .errors import HostileInputError, NoProjectFound

        try:
            base = self._check(self._options)
        except NoProjectFound:
            return {"boards": [], "fingerprints": [], "bom": [], "schematic": schematic_state(None, self._root)}
        except HostileInputError as exc:   # the base's problem, not the head's: its check goes on
            return {"unreadable": str(exc)}
        return {"boards": [_slim(m.board) for m in base.models if m.board is not None],
                "fingerprints": [f.fingerprint for f in base.findings], "bom": base.result.get("bom", []),
                "schematic": schematic_state(first_schematic(base.models), self._options.root)}

    def _send(self, pipe) -> None:
        try:
            pipe.send(("ok", self._checked()))
        except BaseException as exc:   # the parent re-raises it; the child only reports
            pipe.send(("error", exc))
        finally:
            pipe.close()

    def result(self) -> dict:
        if self._child is not None:
            try:
                outcome, value = self._pipe.recv()
            except EOFError:   # the child died without a word: check here instead
                outcome, value = "ok", self._checked()
            finally:
                self._child.join()
                self._pipe.close()
            if outcome == "error":
                raise value
            return value
        return self._checked()

    def compare(self, bom_of, limits, models, findings: list[Finding]) -> dict:
        head_bom = bom_of(models, limits)
        if self.unchanged:
            base = {"boards": [m.board for m in models if m.board is not None],
                    "fingerprints": [f.fingerprint for f in findings], "bom": head_bom,
                    "schematic": schematic_state(first_schematic(models), self._root)}
        else:
            base = self.result()
        return compare(models, base, head_bom, findings, self._root)


_INPUT_NAMES = (".boardready.toml", "fp-lib-table", "sym-lib-table")   # and the project's .kicad_sym libraries (ERC)
_MAX_COMPARED_FILES = 500


def _kicad_files(root: Path, target: Path) -> dict[str, Path] | None:
    """The files a check of ``target`` can read, by path relative to ``root``; None when
    there are too many to compare cheaply."""
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


def _same_inputs(root: Path, target: Path, base_root: Path, base_target: Path) -> bool:
    """Whether the base has exactly the head's KiCad files, byte for byte."""
    if not base_target.exists():
        return False
    head, base = _kicad_files(root, target), _kicad_files(base_root, base_target)
    if head is None or base is None or head.keys() != base.keys():
        return False
    try:
        if any(head[name].stat().st_size != base[name].stat().st_size for name in head):
            return False   # the usual change, told without reading a file
        return all(head[name].read_bytes() == base[name].read_bytes() for name in head)
    except OSError:
        return False


def _slim(board):
    """The base board as the diff reads it: without its uuid index and zone fills,
    the bulk of what would travel back from the fork."""
    board.uuids = {}
    for zone in board.zones:
        zone.fills = []
    return board


def first_schematic(models):
    return next((m.schematic for m in models if m.schematic is not None), None)


def compare(models, base: dict, head_bom: list[dict], findings: list[Finding], root: Path) -> dict:
    """The comparison the report and the run page draw: each head board with its base
    twin, the BOM and the schematic; ``base`` is what BaseCheck found in the base."""
    if "unreadable" in base:
        empty = {"added": [], "removed": [], "changed": []}
        drawn = {"added": {}, "removed": {}}
        return {"boards": [], "bom": empty,
                "schematic": {"sheets": empty, "symbols": empty, "wires": drawn, "labels": drawn},
                "summary": [f"The base commit could not be checked ({base['unreadable']}): no diff, "
                            "and which findings are new is not known"]}
    mark_new(findings, base["fingerprints"])
    base_boards = {board.file: board for board in base["boards"]}
    boards = []
    for model in models:
        if model.board is None:
            continue
        board = diff_boards(base_boards.get(model.board.file), model.board)
        boards.append({"file": model.board.file, "diff": board})
    bom = diff_bom(base["bom"], head_bom)
    schematic = diff_schematic(base["schematic"], schematic_state(first_schematic(models), root))
    lines = summary(boards[0]["diff"], bom) if boards else bom_summary(bom)
    return {"boards": boards, "bom": bom, "schematic": schematic, "summary": lines + schematic_summary(schematic)}

"""``--base``: the base commit's checkout, checked after the head, and the
comparison the report and the run page draw (checker/board_diff.py diffs the
boards and BOMs, checker/schematic_diff.py the schematics).
"""
from __future__ import annotations

import bisect
import dataclasses
import os
import re
import stat
from collections import defaultdict
from dataclasses import replace
from itertools import accumulate
from operator import methodcaller
from pathlib import Path

from . import sexpr
from .board import Board, load_board
from .board_diff import bom_summary, diff_boards, diff_bom, mark_new, summary
from .errors import HostileInputError
from .findings import Finding
from .limits import DEFAULT_LIMITS
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
    The base's board is read only where its file differs from the head's
    (_board_from_heads).

    The base is checked in this process once the head's findings are known
    (``compare``), by only the rules the head has findings of: the fingerprint holds
    the rule, so a rule without a head finding cannot make one existing. (Checked
    beside the head, in a forked process, it saved wall time only by starting before
    those were known and running every rule, at more than twice the CPU:
    docs/board-diff.md, What it costs.) A base without the project (the pull request
    adds it) compares with nothing; a base the checker refuses (a malformed or
    hostile file) compares not at all, and says so."""

    def __init__(self, check, options, root: Path, target: Path):
        base_root = Path(os.path.abspath(options.base))
        # KiCad's own reports are the head's (or slow to make again): the base is checked
        # by the checker's own rules only, and only those findings are marked new or existing.
        self._options = replace(options, path=base_root / os.path.relpath(target, root), root=base_root,
                                base=None, baseline=None, progress=None, erc_report=None, drc_report=None,
                                run_kicad_cli=False)
        self._check = check
        self._root = Path(os.path.abspath(root))
        head, base = _kicad_files(self._root, target), _kicad_files(base_root, self._options.path)
        # A change that left every KiCad file as it was (firmware, docs) needs no second check.
        self.unchanged = self._options.path.exists() and _same_files(head, base)
        # A change to board-side files alone leaves the schematic and its ERC as they were.
        self._schematic_unchanged = (not self.unchanged and self._options.path.exists()
                                     and _same_files(_schematic_side(head), _schematic_side(base)))
        self._compared = set(_schematic_side(head) or ()) if self._schematic_unchanged else set()
        self.problem: str | None = None   # why the base could not be checked (after compare)

    def _checked(self, head_models, reuse: bool = True, rules: frozenset[str] | None = None) -> dict:
        """What the comparison needs of the base: the boards' diffs against the head's,
        its finding fingerprints (ERC's left out when they are the head's), BOM lines
        and schematic state (None: the head's). ``reuse`` (False only to compare with a
        full check): take what the head read where the inputs are the same; the base's
        board then shares the head's items (rules read items, never write them).
        ``rules``: the rules to run (None: all); ``compare`` asks for those the head has
        findings of, since the base's findings of other rules could not make a head
        finding existing."""
        from .errors import HostileInputError, NoProjectFound

        reused = self._reusable_schematics(head_models) if reuse else {}
        boards = {m.board.file: m.board for m in head_models if m.board is not None} if reuse else {}
        try:
            base = self._check(self._options, _readers(reused, boards, self._root, rules))
        except NoProjectFound:
            return {"boards": _board_diffs({}, head_models), "fingerprints": [], "erc_is_heads": False,
                    "bom": [], "schematic": schematic_state(None, self._root)}
        except Exception as exc:   # the base's problem, not the head's: its check goes on
            return {"unreadable": str(exc) if isinstance(exc, HostileInputError) else f"{type(exc).__name__}: {exc}"}
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
            for name in set(schematic.files) - self._compared:   # a sheet outside the project's folder
                if _regular_bytes(self._root / name) != _regular_bytes(base_root / name) \
                        or _regular_bytes(base_root / name) is None:
                    return {}
        return {s.root_file: s for s in schematics}

    def compare(self, head_bom: list[dict], models, findings: list[Finding]) -> dict:
        if self.unchanged:
            base = {"boards": _board_diffs({m.board.file: m.board for m in models if m.board is not None}, models),
                    "fingerprints": [f.fingerprint for f in findings], "erc_is_heads": False,
                    "bom": head_bom, "schematic": None}
        else:   # the base runs only the rules the head's own findings are of
            base = self._checked(models, rules=frozenset(f.rule_id for f in findings if f.source == "boardready"))
        self.problem = base.get("unreadable")
        return compare(models, base, head_bom, findings, self._root)


def _readers(schematics: dict, boards: dict, head_root: Path, rules: frozenset[str] | None = None):
    """The base's model readers: a schematic whose root file is among ``schematics``
    is that model, and its ERC findings are the head's (see BaseCheck); a board the
    head has too (``boards``, by file) is read only where it differs from the head's
    (_board_from_heads); only ``rules`` are run (None: all)."""
    from .runner import ModelReaders, load_schematic

    def schematic(root_file, reader, project_name):
        return schematics.get(reader.relative(root_file)) or load_schematic(root_file, reader, project_name)

    def board_reused(path, reader):
        head = boards.get(reader.relative(path))
        built = _board_from_heads(head, head_root, path, reader) if head is not None else None
        return built if built is not None else load_board(path, reader)

    return ModelReaders(schematic=schematic, board=board_reused if boards else None, run_erc=not schematics,
                        rules=rules)


# -- the base's board, from the head's where their files agree ------------------------

# A top-level list of a KiCad board file starts a line indented once (a tab since KiCad 8,
# two spaces before). What load_board turns into items: the rest (layers, setup, nets,
# groups, dimensions ...) must be the same on both sides for the head's items to be reused.
_TOP_LEVEL_OPENINGS = ("\n\t(", "\n  (")
_KIND = re.compile(r"([^\s()\"]+)")   # a list's name, after its parenthesis
_ITEM_KINDS = frozenset(("footprint", "module", "segment", "arc", "via", "zone", "gr_text", "gr_line", "gr_arc",
                         "gr_circle", "gr_rect", "gr_poly", "gr_curve"))
_BOARD_LISTS = ("footprints", "tracks", "vias", "edges", "zones", "copper_shapes", "silk_shapes", "mask_shapes",
                "silk_texts")
_BOARD_FIELDS = frozenset(_BOARD_LISTS + ("file", "version", "legacy", "layers", "nets", "title_block",
                                          "edge_connector", "castellated_pads", "setup", "uuids", "file_offsets"))


def _split(text: str) -> tuple[str, str, list[str], list[int], str] | None:
    """(what comes before the first top-level list, the line break, indent and
    parenthesis that open each, the top-level lists after their parenthesis, where
    each starts (its parenthesis) and where the root's closing parenthesis is, that
    parenthesis and after); None for a file not laid out as KiCad writes it. With no
    escaped quote in the file, a list holding an even number of quotes ends outside
    any string, so a line inside a string that looks like a list cannot split one
    (the caller counts them: _odd_quotes); a line indented the other way (a tab in a
    two-space file) leaves two lists in one, which is then compared, kept or loaded
    as one."""
    if _escaped_quote(text) or not text.startswith("(kicad_pcb"):
        return None
    # The indent is the first top-level list's: (version ..) or (general ..) opens the file.
    opening = next((o for o in _TOP_LEVEL_OPENINGS if o in text[:4096]), None)
    end = len(text) - 1
    while end > 0 and text[end] in " \t\r\n":
        end -= 1
    if opening is None or text[end] != ")":
        return None
    prefix, *chunks = text.split(opening)
    if not chunks or len(chunks[-1]) <= len(text) - end:
        return None
    chunks[-1] = chunks[-1][:len(chunks[-1]) - (len(text) - end)]   # without the root's closing parenthesis
    step = len(opening) - 1   # a list starts at its parenthesis, the last character of the opening
    starts = list(accumulate([len(prefix) + step, *(len(c) + len(opening) for c in chunks)]))
    starts[-1] = end
    return prefix, opening, chunks, starts, text[end:]


def _escaped_quote(text: str) -> bool:
    """Whether a backslash comes before a quote: the first backslashes looked up one by one
    (a board has few, if any, and a search for one character is the fastest), the rest of
    the text then searched for the pair."""
    at = text.find("\\")
    for _ in range(64):
        if at == -1:
            return False
        if text.startswith('"', at + 1):
            return True
        at = text.find("\\", at + 1)
    return '\\"' in text[at:]


_QUOTES = methodcaller("count", '"')
_odd = (1).__and__


def _odd_quotes(pieces) -> bool:
    """Whether any of the pieces holds an odd number of quotes (see _split)."""
    return any(map(_odd, map(_QUOTES, pieces)))


def _chunk_key(chunk: str) -> tuple[int, str, str]:
    return len(chunk), chunk[:96], chunk[-96:]


def _items_by_chunk(board, starts: list[int]) -> list[dict[str, list]] | None:
    """The board's items (every list load_board fills) grouped by the top-level list of
    the file they came from, in order; None when an item does not say where it is."""
    grouped: list[dict[str, list]] = [{} for _ in starts[:-1]]
    for name in _BOARD_LISTS:
        for item in getattr(board, name):
            location = getattr(item, "location", None)
            if location is None:
                return None
            chunk = bisect.bisect_right(starts, location.source.offset(location.ordinal)) - 1
            if not 0 <= chunk < len(grouped):
                return None
            grouped[chunk].setdefault(name, []).append(item)
    return grouped


class _TextReader:
    """What load_board asks of a reader, for a text already read and checked."""

    def __init__(self, text: str, relative: str, limits):
        self._text, self._relative, self.limits = text, relative, limits

    def relative(self, path) -> str:
        return self._relative

    def read_sexpr(self, path, *, multiple: bool = False, dense_points: bool = False):
        return sexpr.parse(self._text, path=self._relative, limits=self.limits, dense_points=dense_points)


def _board_from_heads(head, head_root: Path, path: Path, reader):
    """The base's board as load_board(path) makes it, built from the head's items for the
    top-level lists both files have byte for byte and by loading the others alone: the
    same lists in the same order (the rules number some items by their place), every
    item the same (an item is made from its own list and the file's header, which must
    be the same on both sides). Its uuid index is left empty: only KiCad's imported
    reports use it, and the base has none. None when that cannot be told from the files
    (another layout, another header, an item that does not say where it came from):
    the caller loads the base's board in full."""
    if {f.name for f in dataclasses.fields(Board)} != _BOARD_FIELDS:
        return None   # a board model this function does not know how to copy
    relative = reader.relative(path)
    try:
        head_text = sexpr.decode((head_root / head.file).read_bytes(), head.file)
    except (OSError, HostileInputError):
        return None
    base_text = reader.read_text(path)
    head_split, base_split = _split(head_text), _split(base_text)
    if head_split is None or base_split is None or head_split[:2] != base_split[:2] or head_split[4] != base_split[4]:
        return None
    (_, _, head_chunks, head_starts, _), (prefix, opening, base_chunks, base_starts, suffix) = head_split, base_split
    if _odd_quotes([prefix, *head_chunks]):
        return None

    def kind(chunk: str) -> str:
        match = _KIND.match(chunk)
        return match.group(1) if match else ""

    head_kinds, base_kinds = [kind(c) for c in head_chunks], [kind(c) for c in base_chunks]
    header = [c for c, k in zip(head_chunks, head_kinds) if k not in _ITEM_KINDS]
    if header != [c for c, k in zip(base_chunks, base_kinds) if k not in _ITEM_KINDS]:
        return None
    head_items = _items_by_chunk(head, head_starts)
    if head_items is None or any(items for items, k in zip(head_items, head_kinds) if k not in _ITEM_KINDS):
        return None
    # The head's item lists by a short key (hashing whole zone fills would cost more than
    # comparing them), each then compared in full; the first unused one of equal text is taken.
    reusable: dict[tuple, list[int]] = defaultdict(list)
    for index, (chunk, k) in enumerate(zip(head_chunks, head_kinds)):
        if k in _ITEM_KINDS:
            reusable[_chunk_key(chunk)].append(index)
    plan: list[int | str] = []   # per base item chunk: the head chunk it is, or its text to load
    for chunk, k in zip(base_chunks, base_kinds):
        if k in _ITEM_KINDS:
            candidates = reusable.get(_chunk_key(chunk), [])
            same = next((n for n, index in enumerate(candidates) if head_chunks[index] == chunk), None)
            plan.append(candidates.pop(same) if same is not None else chunk)
    loaded_texts = [step for step in plan if isinstance(step, str)]
    # The base's other lists are the head's, byte for byte, and its prefix (compared above).
    if _odd_quotes(loaded_texts):
        return None
    # The base's own items, loaded in one go: its header, then its lists the head lacks.
    pieces = [prefix, *(opening + chunk for chunk in (*header, *loaded_texts))]
    ends = list(accumulate(map(len, pieces)))
    starts = [at + len(opening) - 1 for at in ends[:-1]] + ends[-1:]   # each list's parenthesis, and the end
    loaded = load_board_text("".join(pieces) + suffix, relative, reader.limits)
    loaded_items = _items_by_chunk(loaded, starts)
    if loaded_items is None or any(loaded_items[:len(header)]):
        return None
    loaded_items = iter(loaded_items[len(header):])
    loaded_starts = iter(starts[len(header):])
    # Each list's start in the file it was read from and in the base's file, by file read
    # (its Source): an item's place in the base's file is its list's there, plus its own
    # place in that list (Board.offset_of; items are ordered by it).
    placed: dict[int, list[tuple[int, int]]] = defaultdict(list)
    in_base = (base_starts[n] for n, k in enumerate(base_kinds) if k in _ITEM_KINDS)
    board = Board(file=relative, version=head.version, legacy=head.legacy, layers=dict(head.layers),
                  nets=dict(head.nets), title_block=dict(head.title_block), edge_connector=head.edge_connector,
                  castellated_pads=head.castellated_pads, setup=dict(head.setup))
    for step in plan:
        if isinstance(step, int):
            items, start = head_items[step], head_starts[step]
        else:
            items, start = next(loaded_items), next(loaded_starts)
        at = next(in_base)
        for name, made in items.items():
            getattr(board, name).extend(made)
            placed[id(made[0].location.source)].append((start, at))
    board.file_offsets = _offsets_in_base({source: sorted(set(pairs)) for source, pairs in placed.items()})
    return board


def _offsets_in_base(placed: dict[int, list[tuple[int, int]]]):
    """Board.file_offsets of a board built from lists of other files: ``placed`` holds, per
    file read (the id of its Source), where each of its lists starts there and in the base's file."""
    starts = {source: ([read for read, _ in pairs], [base for _, base in pairs]) for source, pairs in placed.items()}

    def offset(location) -> int:
        read, base = starts[id(location.source)]
        at = location.source.offset(location.ordinal)
        chunk = bisect.bisect_right(read, at) - 1
        return base[chunk] + at - read[chunk]

    return offset


def load_board_text(text: str, relative: str, limits):
    return load_board(Path(relative), _TextReader(text, relative, limits))


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
    sizes = [(_regular_size(head[name]), _regular_size(base[name])) for name in head]
    if any(mine is None or mine != theirs for mine, theirs in sizes):
        return False   # the usual change, told without reading a file (or not a regular file)
    return all(_regular_bytes(head[name]) == _regular_bytes(base[name]) is not None for name in head)


def _regular_size(path: Path) -> int | None:
    """The size of a regular file (a link, device or folder: None) within the input limit."""
    try:
        info = os.lstat(path)
    except OSError:
        return None
    return info.st_size if stat.S_ISREG(info.st_mode) and info.st_size <= DEFAULT_LIMITS.max_total_bytes else None


def _regular_bytes(path: Path) -> bytes | None:
    """A regular file's bytes, never a link followed and never past the input limit; None otherwise."""
    size = _regular_size(path)
    if size is None:
        return None
    try:
        descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return None
    with os.fdopen(descriptor, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            return None
        data = handle.read(DEFAULT_LIMITS.max_total_bytes + 1)
    return data if len(data) <= DEFAULT_LIMITS.max_total_bytes else None


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
    if base["schematic"] is None:   # the base's schematic is the head's: nothing changed, nothing to read
        schematic = diff_schematic(schematic_state(None, root), schematic_state(None, root))
    else:
        schematic = diff_schematic(base["schematic"], schematic_state(first_schematic(models), root))
    lines = summary(boards[0]["diff"], bom) if boards else bom_summary(bom)
    return {"boards": boards, "bom": bom, "schematic": schematic, "summary": lines + schematic_summary(schematic)}

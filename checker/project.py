"""Finding a KiCad project on disk and reading its files under guard.

Everything the checker reads goes through ``InputReader``: it refuses paths
that leave the project root (by ``..``, absolute paths or symlinks), anything
that is not a regular file, and keeps a running byte budget that is checked
against the file size *before* the file is opened; reads are bounded too, so a
file that grows between stat and read still cannot blow the budget.
"""
from __future__ import annotations

import json
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from . import sexpr
from .errors import (
    InputTooLarge,
    MalformedJson,
    NoProjectFound,
    NotRegularFile,
    PathEscape,
    SymlinkEscape,
)
from .limits import DEFAULT_LIMITS, Limits

# Files a project may consist of; their sizes count against the input budget
# before anything is parsed.
KICAD_SUFFIXES = (".kicad_pro", ".kicad_sch", ".kicad_pcb", ".kicad_dru")


class InputReader:
    """Bounded, contained reads below ``root``; one instance per checker run."""

    def __init__(self, root: Path, limits: Limits = DEFAULT_LIMITS):
        self.root = Path(os.path.abspath(root))
        self.real_root = Path(os.path.realpath(self.root))
        self.limits = limits
        self.bytes_read = 0
        self._seen: set[Path] = set()

    def relative(self, path: Path) -> str:
        """Repository-relative path with forward slashes (what findings carry)."""
        try:
            return PurePosixPath(Path(os.path.abspath(path)).relative_to(self.root)).as_posix()
        except ValueError:
            return path.name

    def resolve_inside(self, base_dir: Path, reference: str, *, what: str) -> Path:
        """Join a path written inside a project file, refusing escapes.

        KiCad writes sheet paths with forward slashes even on Windows; a
        backslash is normalised so that ``..\\x`` cannot slip through.
        """
        text = reference.replace("\\", "/")
        if text.startswith("/") or (len(text) > 1 and text[1] == ":") or "\x00" in text:
            raise PathEscape(f"{what} path {reference!r} is absolute", path=self.relative(base_dir))
        joined = Path(os.path.normpath(os.path.join(base_dir, text)))
        if not _is_within(joined, self.root):
            raise PathEscape(f"{what} path {reference!r} leaves the project", path=self.relative(base_dir))
        return joined

    def check(self, path: Path) -> os.stat_result:
        """Containment, symlink and file-type checks; returns the target's stat."""
        absolute = Path(os.path.abspath(path))
        if not _is_within(absolute, self.root):
            raise PathEscape("path leaves the project", path=str(path))
        real = Path(os.path.realpath(absolute))
        if not _is_within(real, self.real_root):
            raise SymlinkEscape("symlink points outside the project", path=self.relative(absolute))
        info = os.stat(real)
        if not stat.S_ISREG(info.st_mode):
            raise NotRegularFile("not a regular file", path=self.relative(absolute))
        return info

    def reserve(self, paths: list[Path]) -> None:
        """Count sizes of files about to be read, before reading any of them."""
        total = self.bytes_read
        for path in paths:
            real = Path(os.path.realpath(path))
            if real in self._seen:
                continue
            total += self.check(path).st_size
        if total > self.limits.max_total_bytes:
            raise InputTooLarge(
                f"project input is {total} bytes, above the {self.limits.max_total_bytes}-byte limit",
                path=self.relative(paths[0]) if paths else None)

    def read_bytes(self, path: Path) -> bytes:
        real = Path(os.path.realpath(path))
        size = self.check(path).st_size
        if real in self._seen:
            # A sheet file used twice is read once per use; the budget counts it once.
            return _bounded_read(real, size + 1, self.relative(path))
        remaining = self.limits.max_total_bytes - self.bytes_read
        if size > remaining:
            raise InputTooLarge(
                f"reading {size} more bytes would pass the {self.limits.max_total_bytes}-byte input limit",
                path=self.relative(path))
        data = _bounded_read(real, remaining, self.relative(path))
        self.bytes_read += len(data)
        self._seen.add(real)
        return data

    def read_text(self, path: Path) -> str:
        return sexpr.decode(self.read_bytes(path), self.relative(path))

    def read_sexpr(self, path: Path, *, multiple: bool = False, dense_points: bool = False) -> sexpr.Node:
        return sexpr.parse(self.read_text(path), path=self.relative(path), limits=self.limits,
                           multiple=multiple, dense_points=dense_points)

    def read_json(self, path: Path) -> object:
        text = self.read_text(path)
        try:
            return json.loads(text)
        except RecursionError:
            raise MalformedJson("JSON nested too deeply", path=self.relative(path)) from None
        except json.JSONDecodeError as exc:
            raise MalformedJson(exc.msg, path=self.relative(path), line=exc.lineno, column=exc.colno) from None


def _bounded_read(path: Path, limit: int, shown: str) -> bytes:
    with open(path, "rb") as handle:
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise InputTooLarge("file grew past the input limit while being read", path=shown)
    return data


def _is_within(path: Path, root: Path) -> bool:
    try:
        path.relative_to(root)
        return True
    except ValueError:
        return False


@dataclass
class ProjectFiles:
    """The files of one KiCad project; any of them may be absent."""

    name: str
    folder: Path
    pro: Path | None = None
    schematic: Path | None = None
    board: Path | None = None
    dru: Path | None = None
    fp_lib_table: Path | None = None
    extra_inputs: list[Path] = field(default_factory=list)

    def known_inputs(self) -> list[Path]:
        return [p for p in (self.pro, self.schematic, self.board, self.dru, self.fp_lib_table) if p]


def discover(path: Path, reader: InputReader) -> list[ProjectFiles]:
    """Projects to check for ``PATH`` (a folder or a ``.kicad_pro``).

    A folder with ``.kicad_pro`` files yields each of them (two projects may
    share a folder); without one, sub-folders are searched; failing that,
    board and schematic files are grouped by file stem (a bare
    ``.kicad_pcb`` is still worth judging).
    """
    path = Path(os.path.abspath(path))
    if path.is_file() or path.suffix == ".kicad_pro":
        reader.check(path)
        if path.suffix != ".kicad_pro":
            raise NoProjectFound("PATH must be a folder or a .kicad_pro file", path=reader.relative(path))
        return [_project_for(path.parent, path.stem, path)]
    if not path.is_dir():
        raise NoProjectFound("PATH is neither a folder nor a .kicad_pro file", path=str(path))
    pros = _pro_files(path, reader)
    if pros:
        return [_project_for(pro.parent, pro.stem, pro) for pro in pros]
    stems: dict[str, None] = {}
    for entry in sorted(os.scandir(path), key=lambda e: e.name):
        if entry.is_file(follow_symlinks=False) and entry.name.endswith((".kicad_pcb", ".kicad_sch")):
            stems.setdefault(entry.name.rsplit(".", 1)[0], None)
    if not stems:
        raise NoProjectFound("no .kicad_pro, .kicad_sch or .kicad_pcb found", path=reader.relative(path))
    return [_project_for(path, stem, None) for stem in stems]


def _pro_files(folder: Path, reader: InputReader) -> list[Path]:
    """.kicad_pro files in ``folder``, else in the nearest sub-folders that have one."""
    level = [folder]
    for _ in range(reader.limits.max_project_search_depth + 1):
        found: list[Path] = []
        next_level: list[Path] = []
        for directory in level:
            try:
                entries = sorted(os.scandir(directory), key=lambda e: e.name)
            except OSError:
                continue
            for entry in entries:
                if entry.name.startswith("."):
                    continue
                if entry.is_file(follow_symlinks=False) and entry.name.endswith(".kicad_pro"):
                    found.append(Path(entry.path))
                elif entry.is_dir(follow_symlinks=False):
                    next_level.append(Path(entry.path))
        if found:
            return found
        level = next_level
        if not level:
            break
    return []


def _project_for(folder: Path, stem: str, pro: Path | None) -> ProjectFiles:
    def existing(name: str) -> Path | None:
        candidate = folder / name
        return candidate if os.path.lexists(candidate) else None

    return ProjectFiles(
        name=stem,
        folder=folder,
        pro=pro,
        schematic=existing(stem + ".kicad_sch"),
        board=existing(stem + ".kicad_pcb"),
        dru=existing(stem + ".kicad_dru"),
        fp_lib_table=existing("fp-lib-table"),
    )

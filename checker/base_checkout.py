"""``--base-ref REF``: the base commit's files, beside the checkout, for the board diff
and the policy comparison.

Only what a check can read is written out (KiCad files, the library tables and
``.boardready.toml``), into a temporary folder removed when the checker exits,
and only regular files: the commit is listed (``git ls-tree``) and each kept
blob is streamed from ``git cat-file`` into a file this module creates. A link
(to an absolute path, out of the tree, anywhere), a submodule, a file larger
than the input limit, or files past the input limit together, are skipped and
named in ``skipped``: whatever the commit holds, reading it costs at most the
limits the head is held to (checker/limits.py), and never a link followed.
"""
from __future__ import annotations

import atexit
import os
import shutil
import subprocess
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from .limits import DEFAULT_LIMITS, Limits
from .project import KICAD_SUFFIXES

_WANTED_SUFFIXES = KICAD_SUFFIXES + (".kicad_sym",)
_WANTED_NAMES = (".boardready.toml", "fp-lib-table", "sym-lib-table")
_REGULAR_MODES = ("100644", "100755")
_CHUNK = 1024 * 1024


class BaseRefError(Exception):
    def __init__(self, message: str, usage: bool = False):
        super().__init__(message)
        self.usage = usage   # not a revision at all: the command line's mistake


@dataclass
class BaseCheckout:
    folder: Path                                   # the checked folder as it was at the ref
    skipped: list[str] = field(default_factory=list)   # "path: why", for the files left out


def checkout_ref(ref: str, root: Path) -> Path:
    """The folder that is ``root`` as it was at ``ref``."""
    return read_ref(ref, root).folder


def read_ref(ref: str, root: Path, limits: Limits = DEFAULT_LIMITS) -> BaseCheckout:
    """``root`` as it was at ``ref``: its checkable files, each a regular file."""
    if not ref or ref.startswith("-") or any(c.isspace() for c in ref):
        raise BaseRefError(f"not a git revision: {ref!r}", usage=True)
    root = Path(os.path.abspath(root))
    folder = root if root.is_dir() else root.parent
    # Only read (rev-parse, ls-tree, cat-file): a checkout owned by another user (a CI
    # container's) is trusted for these commands, not in git's configuration.
    git = ["git", "-c", "safe.directory=*"]
    try:
        top = _run([*git, "-C", str(folder), "rev-parse", "--show-toplevel"]).decode("utf-8", "replace").strip()
        commit = _run([*git, "-C", top, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"]).decode().strip()
        listing = _run([*git, "-C", top, "ls-tree", "-r", "-z", "-l", "--full-tree", commit])
    except (OSError, subprocess.CalledProcessError, UnicodeDecodeError) as exc:
        detail = getattr(exc, "stderr", b"") or b""
        detail = detail.decode("utf-8", "replace") if isinstance(detail, bytes) else str(detail)
        raise BaseRefError(f"cannot read {ref} from git: {detail.strip() or exc}") from None
    inside = PurePosixPath(os.path.relpath(folder, top).replace(os.sep, "/"))
    kept, skipped = _choose(listing, inside, limits)
    scratch = Path(tempfile.mkdtemp(prefix="boardready-base-"))
    atexit.register(shutil.rmtree, scratch, True)
    if kept:
        try:
            _write_blobs([*git, "-C", top], kept, scratch)
        except (OSError, ValueError) as exc:
            raise BaseRefError(f"cannot read {ref}'s files from git: {exc}") from None
    target = scratch / inside
    target.mkdir(parents=True, exist_ok=True)
    return BaseCheckout(folder=target, skipped=skipped)


def _run(command: list[str]) -> bytes:
    return subprocess.run(command, check=True, capture_output=True).stdout


def _wanted(path: PurePosixPath) -> bool:
    return path.name in _WANTED_NAMES or path.name.endswith(_WANTED_SUFFIXES)


def _choose(listing: bytes, inside: PurePosixPath, limits: Limits) -> tuple[list[tuple[str, str, int]], list[str]]:
    """The (object id, path, size) of the blobs to write, the checked folder's first, and
    what was left out. ``ls-tree -l`` gives each blob's size before any is read."""
    candidates, skipped = [], []
    for entry in listing.split(b"\0"):
        if not entry:
            continue
        meta, _, raw_path = entry.partition(b"\t")
        try:
            mode, kind, oid, size = meta.decode("ascii").split()
            name = raw_path.decode("utf-8")
        except (UnicodeDecodeError, ValueError):
            continue
        path = PurePosixPath(name)
        if not _wanted(path):
            continue
        if path.is_absolute() or ".." in path.parts or "\x00" in name:
            skipped.append(f"{name}: not a path inside the repository")
        elif kind != "blob" or mode not in _REGULAR_MODES:
            skipped.append(f"{name}: not a regular file (git mode {mode})")
        elif not size.isdigit() or int(size) > limits.max_total_bytes:
            skipped.append(f"{name}: {size} bytes, above the {limits.max_total_bytes}-byte input limit")
        else:
            candidates.append((oid, name, int(size)))
    # The checked folder's files (and the repository's .boardready.toml) first: the budget
    # goes to what the check reads before any other project's files.
    candidates.sort(key=lambda c: (not (_is_under(PurePosixPath(c[1]), inside) or c[1] == ".boardready.toml"), c[1]))
    kept, total = [], 0
    for oid, name, size in candidates:
        if total + size > limits.max_total_bytes:
            skipped.append(f"{name}: past the {limits.max_total_bytes}-byte input limit of the base's files together")
            continue
        total += size
        kept.append((oid, name, size))
    return kept, skipped


def _is_under(path: PurePosixPath, folder: PurePosixPath) -> bool:
    return str(folder) in ("", ".") or folder in path.parents


def _write_blobs(git: list[str], kept: list[tuple[str, str, int]], scratch: Path) -> None:
    """Stream each blob from ``git cat-file --batch`` into a new regular file below ``scratch``."""
    process = subprocess.Popen([*git, "cat-file", "--batch"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL)
    # The ids go in from another thread: git answers each before it reads the next, and
    # a pipe full both ways would stop both sides.
    feeder = threading.Thread(target=_feed, args=(process.stdin, kept), daemon=True)
    feeder.start()
    try:
        for oid, name, size in kept:
            header = process.stdout.readline(256).split()
            if len(header) != 3 or header[0].decode("ascii", "replace") != oid or header[1] != b"blob" \
                    or int(header[2]) != size:
                raise ValueError(f"git cat-file answered {header!r} for {name}")
            destination = scratch.joinpath(*PurePosixPath(name).parts)
            destination.parent.mkdir(parents=True, exist_ok=True)
            descriptor = os.open(destination, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0),
                                 0o600)
            with os.fdopen(descriptor, "wb") as out:
                left = size
                while left:
                    chunk = process.stdout.read(min(_CHUNK, left))
                    if not chunk:
                        raise ValueError(f"git cat-file ended inside {name}")
                    out.write(chunk)
                    left -= len(chunk)
            process.stdout.read(1)   # the newline after each blob
    finally:
        process.stdout.close()
        if process.poll() is None:
            process.kill()
        process.wait()
        feeder.join()


def _feed(stdin, kept) -> None:
    try:
        for oid, _, _ in kept:
            stdin.write(oid.encode("ascii") + b"\n")
        stdin.close()
    except OSError:   # git stopped early: the reader says why
        pass

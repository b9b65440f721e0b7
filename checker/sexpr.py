"""An iterative S-expression reader for KiCad files that keeps line and column.

Why our own: generic readers (sexpdata) recurse per nesting level, build
symbol objects for every atom and drop positions. We need positions for every
list node (findings point at lines), bounded work on hostile input and speed
on megabyte boards. One compiled regular expression tokenises; a plain list
used as a stack builds the tree, so nesting depth never touches Python's
recursion limit.

Atoms are Python ``str`` (quoted strings unescaped, bare atoms verbatim);
callers convert numbers where they need them. ``Node.quoted`` is not kept
because no KiCad rule depends on it and it would cost memory per atom.
"""
from __future__ import annotations

import gc
import re
from bisect import bisect_right
from typing import Iterator

from .errors import AtomTooLong, InvalidUtf8, MalformedSexpr, NestingTooDeep, NulByte, TooManyTokens
from .limits import DEFAULT_LIMITS, Limits

# One match per token, whitespace included, so matches are contiguous:
#   1,2  a leaf list "(name atoms...)" without nested lists: the common case,
#        taken whole and split in C (str.split or _LEAF_ATOM), which is what
#        makes this reader several times faster than a token-at-a-time one;
#   3,4  "(" of a list that has nested lists, with its bare name if any;
#   5    ")";  6 a quoted string body;  7 a bare atom;
#   8    any other character (a stray quote): always an error.
# Possessive quantifiers keep hostile input from causing backtracking blow-ups.
_TOKEN = re.compile(
    r'[ \t\r\n\f\v]*+(?:'
    r'\(([^()"\s]++)((?:[^()"]++|"(?:[^"\\]|\\.)*+")*+)\)'
    r'|(\()(?:[ \t\r\n\f\v]*+([^()"\s]++))?'
    r'|(\))'
    r'|"((?:[^"\\]|\\.)*+)"'
    r'|([^\s()"]++)'
    r'|(.))',
    re.S,
)
_LEAF_ATOM = re.compile(r'"((?:[^"\\]|\\.)*+)"|([^\s"]++)', re.S)
_ESCAPE = re.compile(r"\\(.)", re.S)
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", '"': '"'}


def _unescape(body: str) -> str:
    return _ESCAPE.sub(lambda m: _ESCAPES.get(m.group(1), m.group(1)), body)


class Source:
    """The text a tree came from: turns a node's offset into line and column.

    Nodes keep their character offset and a reference to this object, so
    every node has a position without paying for line arithmetic on the
    hundred thousand nodes of a board when only a few become findings.
    """

    __slots__ = ("path", "newlines")

    def __init__(self, text: str, path: str | None = None):
        self.path = path
        self.newlines = [m.start() for m in re.finditer("\n", text)]

    def position(self, offset: int) -> tuple[int, int]:
        index = bisect_right(self.newlines, offset - 1)
        line_start = self.newlines[index - 1] + 1 if index else 0
        return index + 1, offset - line_start + 1


class Node:
    """One parenthesised list: ``name`` is its first bare atom, ``items`` the rest."""

    __slots__ = ("name", "items", "offset", "source")

    def __init__(self, name: str | None, items: list, offset: int, source: Source):
        self.name = name
        self.items = items
        self.offset = offset
        self.source = source

    @property
    def line(self) -> int:
        return self.source.position(self.offset)[0]

    @property
    def column(self) -> int:
        return self.source.position(self.offset)[1]

    def __repr__(self) -> str:
        return f"Node({self.name!r}, {len(self.items)} items, line {self.line})"

    # -- navigation helpers the KiCad readers use -------------------------------
    def nodes(self, name: str | None = None) -> Iterator["Node"]:
        """Child lists, optionally only those named ``name``."""
        for item in self.items:
            if type(item) is Node and (name is None or item.name == name):
                yield item

    def first(self, name: str) -> "Node | None":
        for item in self.items:
            if type(item) is Node and item.name == name:
                return item
        return None

    def atoms(self) -> list[str]:
        return [item for item in self.items if type(item) is str]

    def atom(self, index: int = 0, default: str | None = None) -> str | None:
        """The ``index``-th atom after the name (skipping child lists)."""
        seen = 0
        for item in self.items:
            if type(item) is str:
                if seen == index:
                    return item
                seen += 1
        return default

    def value(self, name: str, default: str | None = None) -> str | None:
        """First atom of the child list ``name``: ``(layer "F.Cu")`` -> ``F.Cu``."""
        child = self.first(name)
        if child is None:
            return default
        return child.atom(0, default)

    def number(self, name: str, index: int = 0) -> float | None:
        child = self.first(name)
        if child is None:
            return None
        return to_float(child.atom(index))

    def flag(self, name: str) -> bool | None:
        """A flag written either as a bare atom (``hide``) or as ``(hide yes)``.

        KiCad 6 writes many flags bare; KiCad 8 and later write ``(name yes|no)``.
        Returns None when the flag is absent in both spellings.
        """
        for item in self.items:
            if type(item) is str:
                if item == name:
                    return True
            elif item.name == name:
                text = item.atom(0)
                return text is None or text in ("yes", "true")
        return None


def to_float(text: str | None) -> float | None:
    if text is None:
        return None
    try:
        number = float(text)
    except ValueError:
        return None
    return number if number == number and abs(number) != float("inf") else None


def decode(data: bytes, path: str | None = None) -> str:
    """Bytes to text, refusing NUL bytes and invalid UTF-8 with a position."""
    nul = data.find(b"\x00")
    if nul >= 0:
        line = data.count(b"\n", 0, nul) + 1
        raise NulByte("NUL byte in a text file", path=path, line=line)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise InvalidUtf8(f"invalid UTF-8 at byte {exc.start}", path=path, line=line) from None


def parse(text: str, *, path: str | None = None, limits: Limits = DEFAULT_LIMITS,
          multiple: bool = False) -> Node:
    """Parse one KiCad S-expression document and return its top-level list.

    ``multiple=True`` accepts several top-level lists (``.kicad_dru`` files are
    written that way) and returns a nameless node holding them all.
    """
    gc_was_enabled = gc.isenabled()
    # The tree is acyclic and built in one go: generation-0 collections while
    # allocating it only cost time (a third of the parse on a 1 MB board).
    gc.disable()
    try:
        return _parse(text, path, limits, multiple)
    finally:
        if gc_was_enabled:
            gc.enable()


def _parse(text: str, path: str | None, limits: Limits, multiple: bool) -> Node:
    source = Source(text, path)
    max_depth = limits.max_depth
    max_atom = limits.max_atom_chars
    max_tokens = limits.max_tokens
    top = Node(None, [], 0, source)
    stack: list[Node] = []
    current = top
    items = top.items
    tokens = 0

    def fail(error_type, message: str, offset: int):
        line, column = source.position(offset)
        raise error_type(message, path=path, line=line, column=column)

    new_node = Node
    leaf_atoms = _leaf_atoms
    # Leaves are checked for depth through their parent: a list is refused one
    # level early, so no leaf can sit deeper than max_depth.
    for match in _TOKEN.finditer(text):
        kind = match.lastindex
        if kind <= 2:  # a leaf list: name plus atoms, no nested list
            name, rest = match.group(1, 2)
            if not stack and top.items and not multiple:
                fail(MalformedSexpr, "text after the top-level list", match.start(1) - 1)
            if len(rest) > max_atom and any(len(a) > max_atom for a in leaf_atoms(rest)):
                fail(AtomTooLong, f"atom longer than {max_atom} characters", match.start(1) - 1)
            parts = leaf_atoms(rest) if '"' in rest else rest.split()
            items.append(new_node(name, parts, match.start(1) - 1, source))
            tokens += len(parts) + 3
            continue
        if kind <= 4:  # "(" opening a list with nested lists, optionally named
            offset = match.start(3)
            if len(stack) >= max_depth - 1:
                fail(NestingTooDeep, f"nesting deeper than {max_depth}", offset)
            if not stack and top.items and not multiple:
                fail(MalformedSexpr, "text after the top-level list", offset)
            node = new_node(match.group(4), [], offset, source)
            items.append(node)
            stack.append(current)
            current = node
            items = node.items
            tokens += 2
            if tokens > max_tokens:
                raise TooManyTokens(f"more than {max_tokens} tokens", path=path)
        elif kind == 5:
            if not stack:
                fail(MalformedSexpr, "unbalanced ')'", match.start(5))
            current = stack.pop()
            items = current.items
        elif kind == 6 or kind == 7:
            atom = match.group(kind)
            if not stack:
                fail(MalformedSexpr, "atom outside any list", match.start(kind))
            if len(atom) > max_atom:
                fail(AtomTooLong, f"atom longer than {max_atom} characters", match.start(kind))
            if kind == 6 and "\\" in atom:
                atom = _unescape(atom)
            items.append(atom)
            tokens += 1
            if tokens > max_tokens:
                raise TooManyTokens(f"more than {max_tokens} tokens", path=path)
        else:  # kind 8: a character no token accepts, e.g. an unterminated quote
            offset = match.start(8)
            what = "unterminated string" if text[offset] == '"' else "unexpected character"
            fail(MalformedSexpr, what, offset)
    if tokens > max_tokens:
        raise TooManyTokens(f"more than {max_tokens} tokens", path=path)
    if stack:
        raise MalformedSexpr(f"{len(stack)} list(s) left open at end of file", path=path,
                             line=current.line, column=current.column)
    if not top.items and not multiple:
        raise MalformedSexpr("no S-expression found", path=path, line=1, column=1)
    return top if multiple else top.items[0]


def _leaf_atoms(rest: str) -> list[str]:
    atoms = []
    for quoted, bare in _LEAF_ATOM.findall(rest):
        if bare:
            atoms.append(bare)
        else:
            atoms.append(_unescape(quoted) if "\\" in quoted else quoted)
    return atoms


def parse_bytes(data: bytes, *, path: str | None = None, limits: Limits = DEFAULT_LIMITS,
                multiple: bool = False) -> Node:
    return parse(decode(data, path), path=path, limits=limits, multiple=multiple)


def walk(root: Node) -> Iterator[Node]:
    """Every list node below ``root`` (inclusive), depth first, without recursion."""
    pending = [root]
    while pending:
        node = pending.pop()
        yield node
        children = [item for item in node.items if type(item) is Node]
        children.reverse()
        pending.extend(children)

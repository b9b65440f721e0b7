"""An iterative S-expression reader for KiCad files that keeps line and column.

Why our own: generic readers (sexpdata) recurse per nesting level, build
symbol objects for every atom and drop positions. We need a position for every
list node (findings point at lines), bounded work on hostile input and speed
on megabyte boards. A plain list used as a stack builds the tree, so nesting
depth never touches Python's recursion limit.

Why it is shaped this way: most lists of a board are leaves, lists of bare
atoms and plain quoted words with no nested list (``(at 1 2)``,
``(layer "F.Cu")``), in runs of a few to a few dozen, and most of the others
are "twigs" that hold only such leaves (``(segment (start ..) (end ..) ..)``).
One compiled regular expression takes a whole run, or a whole twig, as one
token, and C-level calls (``str.replace``, ``str.split``, ``map``, ``zip``)
turn it into nodes without a Python statement per leaf. Only the other lists,
closings and atoms sitting directly in such lists go through the Python loop,
about one token in four. See bin/bench-checker for the figures.

That is also why a node stores its ordinal (the how-manieth list of its
document it is) rather than its character offset: the ordinals of a run are
consecutive numbers, which ``range`` supplies without a match object per leaf.
An ordinal becomes an offset, and the offset a line and column, only when a
position is asked for (a finding, an error), through an index of the document
built on the first such question. And a node is one flat tuple, the leaf's
split words with ordinal and source appended, so it costs one object.

Atoms are Python ``str`` (quoted strings unescaped, bare atoms verbatim);
callers convert numbers where they need them. Whether an atom was quoted is
not kept because no KiCad rule depends on it and it would cost memory per atom.
"""
from __future__ import annotations

import gc
import re
import sys
from array import array
from bisect import bisect_right
from collections.abc import Iterator
from contextlib import contextmanager
from itertools import islice, repeat
from math import isfinite
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

from .errors import (
    AtomTooLong,
    InvalidUtf8,
    MalformedSexpr,
    NestingTooDeep,
    NonFiniteCoordinate,
    NulByte,
    TooManyTokens,
)
from .limits import DEFAULT_LIMITS, Limits

_SPACE = r'\s*+'
_NAME = r'[^()"\s]++'
_STRING_BODY = r'[^"\\]*+(?:\\.[^"\\]*+)*+'  # unrolled: no alternation per character
_STRING = '"' + _STRING_BODY + '"'

# A leaf whose quoted strings are plain words (``"F.Cu"``: no space,
# parenthesis or backslash), so that its quotes only delimit and str.split
# reads it: "(name atoms...)".
_PLAIN_LEAF = r'\([^()"\s][^()"]*+(?:"[^"\s()\\]++"[^()"]*+)*+\)'   # unrolled, as _STRING_BODY
# Leaves taken per run at most: bounds what is built before the token count
# is checked again, at no cost on real boards (runs there are 1 to 30 long).
_MAX_RUN = 256
_PLAIN_LEAVES = "(?:" + _PLAIN_LEAF + _SPACE + f"){{1,{_MAX_RUN}}}+"

# Zone fills are most of a board's text: tens of thousands of (xy x y) lists
# in (pts ...) lists, written "(xy 12.3 -4.5)". With ``dense_points`` such a
# pts list is one token, which becomes a Points node holding an N x 2 array
# (no node and no three strings per point) when every number reads as a
# finite float, as the board reader would read it, and a twig otherwise.
# Without ``dense_points`` the token is switched off ("(?!)" fails at once,
# keeping the group numbers), so pts lists are read like any other list.
_XY = r'\(xy [^()"]*+\)'   # one fast loop per point; the words are counted when read

# One match per token, leading whitespace included, so matches are contiguous.
# ``lastindex`` tells the kind (the last group to close):
#   1    a pts list of nothing but (xy x y) points (their text), with dense_points;
#   2    a run of plain leaves;
#   4    a twig: a named list holding only a run of plain leaves (3 name),
#        e.g. (segment (start ..) (end ..) (width ..) (layer ..) (net ..));
#   6    any other leaf (5 name, 6 its atoms' text), e.g. (net 3 "Net-(D1-Pad2)");
#   7    a text's effects as KiCad writes nearly all of them, (effects (font (size
#        x y)) [(justify ..)] [(hide ..)]): 8, 9 the size, 10 the justify words,
#        11 the hide word (see Effects);
#   12   a library symbol's pin as KiCad writes nearly all of them: 13-19 its type,
#        shape, at x, y, angle, length and hide word, 20 its name and 21-24 the name's
#        effects, 25 its number and 26-29 the number's effects (see Pin);
#   30   a symbol's field as KiCad writes nearly all of them: 31, 32 key and value,
#        33-35 at x, y, angle, 36 the hide word, 37-40 its effects (see Property);
#   41   a wire or bus as KiCad writes them: 42 wire or bus, 43-46 its two points,
#        47, 48 the stroke's width and type, 49 its uuid (see Wire);
#   50   a placed symbol's pin: 51 its number, 52 its uuid (see PinRef);
#   53   a local label as KiCad writes it: 54 its text, 55-57 at x, y, angle, 58 the
#        fields_autoplaced word, 59-62 its effects, 63 its uuid (see Label);
#   64   a footprint's line as KiCad writes it: 65-68 start and end, 69, 70 the
#        stroke's width and type, 71 its layer, 72 its uuid (see FootprintLine);
#   73,74 "(" of any other list, with its bare name (74) if it has one;
#   75   ")";  76 a quoted string body;  77 a bare atom;
#   78   any other character (a stray quote): always an error.
# Runs and twigs are most of a board and are split in C; the rest goes
# through the Python loop. Possessive quantifiers keep hostile input from
# causing backtracking blow-ups.
# Effects are a third of a schematic's reading (ten thousand on the video demo, in
# pins, fields and labels), and most are never looked into: one token and one node
# (Effects) each, their lists made only when asked for. Words of at most 64
# characters, so that no word can be longer than a reading's atom limit allows
# (the pattern is used only when that limit is 64 or more: _effects_token).
_EFFECTS_WORD_MAX = 64
_EFFECTS_WORD = r'[^\s()"]{1,64}+'
_EFFECTS = (r"\(effects\s*+\(font\s*+\(size (" + _EFFECTS_WORD + ") (" + _EFFECTS_WORD + r")\)\s*+\)\s*+"
            r"(?:\(justify (" + _EFFECTS_WORD + "(?: " + _EFFECTS_WORD + r"){0,2})\)\s*+)?"
            r"(?:\(hide (" + _EFFECTS_WORD + r")\)\s*+)?\)")     # 4 groups: size x, y, justify, hide
# A library symbol's pin as KiCad 8+ writes it (half a schematic's lists are in its
# symbols' pins): (pin TYPE SHAPE (at x y angle) (length l) [(hide ..)] (name "n"
# EFFECTS) (number "m" EFFECTS)), names of at most 64 characters without escapes.
_PIN_NAME = r'"([^"\\]{0,64}+)"'
_PIN = (r"\(pin (" + _EFFECTS_WORD + ") (" + _EFFECTS_WORD + r")\s*+\(at (" + _EFFECTS_WORD + ") (" + _EFFECTS_WORD
        + ") (" + _EFFECTS_WORD + r")\)\s*+\(length (" + _EFFECTS_WORD + r")\)\s*+(?:\(hide (" + _EFFECTS_WORD
        + r")\)\s*+)?\(name " + _PIN_NAME + r"\s*+" + _EFFECTS + r"\s*+\)\s*+\(number " + _PIN_NAME + r"\s*+"
        + _EFFECTS + r"\s*+\)\s*+\)")                   # 17 groups
# A symbol's field as KiCad 7+ writes it (a third of a schematic's lists): (property
# "key" "value" (at x y angle) [(hide ..)] EFFECTS), strings without escapes.
_PROPERTY = (r'\(property "([^"\\]*+)" "([^"\\]*+)"\s*+\(at (' + _EFFECTS_WORD + ") (" + _EFFECTS_WORD + ") ("
             + _EFFECTS_WORD + r")\)\s*+(?:\(hide (" + _EFFECTS_WORD + r")\)\s*+)?" + _EFFECTS + r"\s*+\)")   # 10 groups
# A wire or bus as KiCad 7+ writes it: (wire (pts (xy ..) (xy ..)) (stroke (width ..) (type
# ..)) (uuid "..")); a placed symbol's pin: (pin "number" (uuid "..")).
_QUOTED_WORD = r'"([^\s()"\\]{1,64}+)"'      # as a plain leaf's quoted word, at most 64 characters
_WIRE = (r"\((wire|bus)\s*+\(pts\s*+\(xy (" + _EFFECTS_WORD + ") (" + _EFFECTS_WORD + r")\)\s*+\(xy ("
         + _EFFECTS_WORD + ") (" + _EFFECTS_WORD + r")\)\s*+\)\s*+\(stroke\s*+\(width (" + _EFFECTS_WORD
         + r")\)\s*+\(type (" + _EFFECTS_WORD + r")\)\s*+\)\s*+\(uuid " + _QUOTED_WORD + r"\)\s*+\)")   # 8 groups
_PIN_REF = r"\(pin " + _PIN_NAME + r"\s*+\(uuid " + _QUOTED_WORD + r"\)\s*+\)"                        # 2 groups
# A local label as KiCad 7+ writes it: (label "text" (at x y angle) [(fields_autoplaced ..)]
# EFFECTS (uuid "..")), its text without escapes.
_LABEL = (r'\(label "([^"\\]*+)"\s*+\(at (' + _EFFECTS_WORD + ") (" + _EFFECTS_WORD + ") (" + _EFFECTS_WORD
          + r")\)\s*+(?:\(fields_autoplaced (" + _EFFECTS_WORD + r")\)\s*+)?" + _EFFECTS + r"\s*+\(uuid "
          + _QUOTED_WORD + r"\)\s*+\)")                                                               # 10 groups
# A footprint's line as KiCad 7+ writes it (a third of a board's footprint text): (fp_line
# (start x y) (end x y) (stroke (width w) (type t)) (layer "L") (uuid "..")).
_FP_LINE = (r"\(fp_line\s*+\(start (" + _EFFECTS_WORD + ") (" + _EFFECTS_WORD + r")\)\s*+\(end (" + _EFFECTS_WORD
            + ") (" + _EFFECTS_WORD + r")\)\s*+\(stroke\s*+\(width (" + _EFFECTS_WORD + r")\)\s*+\(type ("
            + _EFFECTS_WORD + r")\)\s*+\)\s*+\(layer " + _QUOTED_WORD + r"\)\s*+\(uuid " + _QUOTED_WORD
            + r"\)\s*+\)")                                                                              # 8 groups
_EFFECTS_TOKEN = ("|(" + _EFFECTS + ")" + "|(" + _PIN + ")" + "|(" + _PROPERTY + ")" + "|(" + _WIRE + ")"
                  + "|(" + _PIN_REF + ")" + "|(" + _LABEL + ")" + "|(" + _FP_LINE + ")")
_NO_EFFECTS_TOKEN = (r"|(\(effects(?!)" + "()" * 4 + r")|(\(pin(?!)" + "()" * 17 + r")|(\(property(?!)" + "()" * 10
                     + r")|(\(wire(?!)" + "()" * 8 + r")|(\(pin(?!)" + "()" * 2 + r")|(\(label(?!)" + "()" * 10
                     + r")|(\(fp_line(?!)" + "()" * 8 + ")")   # the same groups, never matching
_OTHER_TOKENS = (
    "|(" + _PLAIN_LEAVES + ")"
    + r"|\((" + _NAME + r")\s*+(" + _PLAIN_LEAVES + r")\)"
    + r'|\((' + _NAME + r')([^()"]*+(?:' + _STRING + r'[^()"]*+)*+)\)'
    + _EFFECTS_TOKEN
    + r"|(\()(?:" + _SPACE + "(" + _NAME + "))?"
    + r"|(\))"
    + '|"(' + _STRING_BODY + ')"'
    + r'|([^\s()"]++)'
    + "|(.))"
)
_DENSE_PTS = r"(?:\(pts\s*+((?:" + _XY + _SPACE + r")++)\)"
_NO_PTS = r"(?:\(pts(?!)()"


class _TokenPatterns(dict):
    """By (dense_points, compact lists): the token pattern of a reading, compiled when first
    used (each takes milliseconds, and a schematic-only run uses one)."""

    def __missing__(self, key: tuple[bool, bool]) -> re.Pattern:
        dense, compact = key
        pattern = re.compile(_SPACE + (_DENSE_PTS if dense else _NO_PTS) + _OTHER_TOKENS.replace(
            _EFFECTS_TOKEN, _EFFECTS_TOKEN if compact else _NO_EFFECTS_TOKEN), re.S)
        self[key] = pattern
        return pattern


_TOKENS = _TokenPatterns()
# A board's track segment as KiCad 7 and later write it, the leaves of a twig named
# "segment" (a fifth of a large board's text): read with ``dense_points`` into a
# Segment node, no leaf nodes. Words as the twig's reading splits them (a plain
# quoted word loses its quotes); any other spelling is read as a twig.
_WORD = r'([^\s()"]++)'
_SEGMENT_LEAVES = re.compile(
    rf'\(start {_WORD} {_WORD}\)\s*+\(end {_WORD} {_WORD}\)\s*+\(width {_WORD}\)\s*+'
    rf'\(layer "?{_WORD}"?\)\s*+\(net {_WORD}\)\s*+\(uuid "?{_WORD}"?\)\s*+')
_LEAF_ATOM = re.compile('"(' + _STRING_BODY + r')"|([^\s"]++)', re.S)
_ESCAPE = re.compile(r"\\(.)", re.S)
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", '"': '"'}


def _unescape(body: str) -> str:
    return _ESCAPE.sub(lambda m: _ESCAPES.get(m.group(1), m.group(1)), body)


class Source:
    """The text a tree came from: turns a node's ordinal into line and column.

    The index (where each list starts, where each line starts) is built on the
    first question and the text dropped then: most nodes of a board are never
    asked, and a parse nobody asks about costs nothing for positions.
    """

    __slots__ = ("path", "_text", "_list_starts", "_newlines")

    def __init__(self, text: str, path: str | None = None):
        self.path = path
        self._text: str | None = text
        self._list_starts = array("q")
        self._newlines = array("q")

    def _build_index(self) -> None:
        self._list_starts, self._newlines = _index(self._text)
        self._text = None  # last: another thread seeing None finds the index built

    def offset(self, ordinal: int) -> int:
        """Character offset of the "(" of the ``ordinal``-th list (from 0)."""
        if ordinal < 0:  # the nameless holder of a several-list document
            return 0
        if self._text is not None:
            self._build_index()
        return self._list_starts[ordinal]

    def position(self, offset: int) -> tuple[int, int]:
        """1-based line and column of a character offset."""
        if self._text is not None:
            self._build_index()
        index = bisect_right(self._newlines, offset - 1)
        line_start = self._newlines[index - 1] + 1 if index else 0
        return index + 1, offset - line_start + 1


def _index(text: str) -> tuple[array, array]:
    """Character offsets of every "(" outside quoted strings, and of every newline.

    Array operations over the encoded text instead of a regular expression
    match per list (a fifth of the time on a 4 MB board). A "(" is a list's
    when an even number of string delimiters precede it. Every quote
    delimits except one inside a string that an odd run of backslashes
    escapes (outside strings a backslash is an ordinary character); only
    quotes after such a run need a look in order, and real files have
    none or a handful. Offsets are counted in bytes, then in characters
    by subtracting the UTF-8 continuation bytes before them (the four
    characters looked for are ASCII, never part of a longer character).
    """
    if len(text) < SMALL_TEXT and "numpy" not in sys.modules:
        return _index_small(text)
    import numpy as np

    data = text.encode("utf-8", "surrogatepass")
    raw = np.frombuffer(data, dtype=np.uint8)
    quotes = np.flatnonzero(raw == 34)
    delimiters = quotes
    if len(quotes) and b"\\" in data:
        delimiters = quotes[~_escaped_quotes(raw, quotes)]
    opens = np.flatnonzero(raw == 40)
    opens = opens[np.searchsorted(delimiters, opens) % 2 == 0]
    newlines = np.flatnonzero(raw == 10)
    if len(data) != len(text):
        continuation = np.flatnonzero((raw & 0xC0) == 0x80)
        opens = opens - np.searchsorted(continuation, opens)
        newlines = newlines - np.searchsorted(continuation, newlines)
    return _int_array(opens), _int_array(newlines)


# Below this many characters, and while nothing else has loaded numpy, the index is
# built in Python: a schematic-only check then never pays numpy's import (longer
# than indexing a 1 MB sheet with a regular expression).
SMALL_TEXT = 1 << 20
_OPEN_OR_STRING = re.compile(r'"[^"\\]*+(?:\\.[^"\\]*+)*+(?:"|\\?\Z)|\(', re.S)   # a string may run to the end


def _index_small(text: str) -> tuple[array, array]:
    """_index without numpy: the same offsets, from one regular expression pass.
    A string runs to its closing quote (an escaped quote does not close it);
    every "(" outside strings opens a list; newlines count everywhere."""
    opens = array("q", [m.start() for m in _OPEN_OR_STRING.finditer(text) if m.group() == "("])
    newlines = array("q")
    find, at = text.find, text.find("\n")
    while at >= 0:
        newlines.append(at)
        at = find("\n", at + 1)
    return opens, newlines


def _escaped_quotes(raw: np.ndarray, quotes: np.ndarray) -> np.ndarray:
    """Which quotes an odd run of backslashes escapes: those inside a string."""
    import numpy as np

    backslashes = np.flatnonzero(raw == 92)
    # For each backslash, where its run of consecutive backslashes starts (an index into backslashes).
    starts = np.ones(len(backslashes), dtype=bool)
    starts[1:] = backslashes[1:] != backslashes[:-1] + 1
    run_start = np.maximum.accumulate(np.where(starts, np.arange(len(backslashes)), 0))
    after_backslash = np.flatnonzero(raw[np.maximum(quotes - 1, 0)] == 92) if len(quotes) else quotes
    after_backslash = after_backslash[quotes[after_backslash] > 0]
    last = np.searchsorted(backslashes, quotes[after_backslash] - 1)   # the run's last backslash
    odd = after_backslash[(last - run_start[last] + 1) % 2 == 1]
    escaped = np.zeros(len(quotes), dtype=bool)
    delimiters = 0      # quotes so far that delimit a string
    previous = 0
    for k in odd.tolist():
        delimiters += k - previous          # the quotes in between all delimit
        if delimiters % 2 == 1:             # inside a string: escaped
            escaped[k] = True
        else:                               # outside: it opens a string
            delimiters += 1
        previous = k + 1
    return escaped


def _int_array(values: np.ndarray) -> array:
    """numpy positions as array("q"), which bisect searches in C."""
    out = array("q")
    out.frombytes(values.astype("int64").tobytes())
    return out


class Location:
    """Where a list is in its file, without holding the list: models keep
    this instead of nodes, so a board's parse tree is freed once the model
    is built, and the line and column are still found on demand."""

    __slots__ = ("source", "ordinal")

    def __init__(self, source: Source, ordinal: int):
        self.source = source
        self.ordinal = ordinal

    @property
    def line(self) -> int:
        return self.source.position(self.source.offset(self.ordinal))[0]

    @property
    def column(self) -> int:
        return self.source.position(self.source.offset(self.ordinal))[1]


class Located:
    """A model item's line and column, from the Location it keeps, computed on
    first use: most items never appear in a finding, and positions cost an index
    of the file."""

    location: Location

    @property
    def line(self) -> int:
        return self.location.line

    @property
    def column(self) -> int:
        return self.location.column


class Node(tuple):
    """One parenthesised list: ``name`` is its first bare atom, ``items`` the rest.

    Underneath one flat tuple ``(name, *items, ordinal, source)``: what
    ``str.split`` makes of a leaf's text plus two appended fields, so a run of
    leaves becomes nodes in C, and a node costs one object. Use the attributes
    and helpers, not indexes or iteration. Equality and hashing are by
    identity, as for any tree node.
    """

    __slots__ = ()

    def __eq__(self, other):
        return self is other

    def __ne__(self, other):
        return self is not other

    __hash__ = object.__hash__

    @property
    def name(self) -> str | None:
        return self[0]

    @property
    def items(self) -> tuple:
        """Child atoms and lists after the name."""
        return self[1:-2]

    @property
    def offset(self) -> int:
        return self[-1].offset(self[-2])

    @property
    def location(self) -> Location:
        return Location(self[-1], self[-2])

    @property
    def line(self) -> int:
        return self[-1].position(self.offset)[0]

    @property
    def column(self) -> int:
        return self[-1].position(self.offset)[1]

    def __repr__(self) -> str:
        return f"Node({self[0]!r}, {len(self) - 3} items, line {self.line})"

    # -- navigation helpers the KiCad readers use -------------------------------
    # Items are either str or Node, so "type(item) is str" tells them apart.
    # A slice copies a few pointers: cheaper than an islice for lists of a few items,
    # and these two are the readers' most frequent calls (77 000 on the video demo).
    def nodes(self, name: str | None = None) -> Iterator[Node]:
        """Child lists, optionally only those named ``name``."""
        for item in self[1:-2]:
            if type(item) is not str and (name is None or item[0] == name):
                yield item

    def first(self, name: str) -> Node | None:
        for item in self[1:-2]:
            if type(item) is not str and item[0] == name:
                return item
        return None

    def atoms(self) -> list[str]:
        return [item for item in islice(self, 1, len(self) - 2) if type(item) is str]

    def atom(self, index: int = 0, default: str | None = None) -> str | None:
        """The ``index``-th atom after the name (skipping child lists)."""
        # Atoms come first in KiCad's lists: when the items up to the index-th are all
        # atoms, it is the item at that place (no loop; (at x y angle) asks for 0, 1, 2).
        if index == 0:
            if len(self) > 3 and type(self[1]) is str:
                return self[1]
        elif index == 1:
            if len(self) > 4 and type(self[1]) is str and type(self[2]) is str:
                return self[2]
        elif index == 2:
            if len(self) > 5 and type(self[1]) is str and type(self[2]) is str and type(self[3]) is str:
                return self[3]
        seen = 0
        for item in islice(self, 1, len(self) - 2):
            if type(item) is str:
                if seen == index:
                    return item
                seen += 1
        return default

    def value(self, name: str, default: str | None = None) -> str | None:
        """First atom of the child list ``name``: ``(layer "F.Cu")`` -> ``F.Cu``."""
        for child in self[1:-2]:   # first(name) and atom(0), inlined: 25 000 calls on the video demo
            if type(child) is not str and child[0] == name:
                if len(child) > 3 and type(child[1]) is str:
                    return child[1]
                return child.atom(0, default)
        return default

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
        for item in islice(self, 1, len(self) - 2):
            if type(item) is str:
                if item == name:
                    return True
            elif item[0] == name:
                text = item.atom(0)
                return text is None or text in ("yes", "true")
        return None


class Points(Node):
    """A (pts (xy x y) ...) list read with ``dense_points``: ``array`` holds the
    points (N x 2); the xy lists are not nodes, so it has no child lists or atoms.
    Underneath: ``("pts", array, ordinal, source)``."""

    __slots__ = ()

    @property
    def items(self) -> tuple:
        return ()

    @property
    def array(self) -> np.ndarray:
        return self[1]

    def nodes(self, name: str | None = None) -> Iterator[Node]:
        return iter(())

    def first(self, name: str) -> Node | None:
        return None

    def atoms(self) -> list[str]:
        return []

    def atom(self, index: int = 0, default: str | None = None) -> str | None:
        return default

    def flag(self, name: str) -> bool | None:
        return None

    def __repr__(self) -> str:
        return f"Points({len(self[1])} points, line {self.line})"


class Compact(Node):
    """A list read as one token and one node of its words (the kinds below, the spellings
    KiCad 7-9 write for a file's most frequent lists). Its child lists, with the ordinals
    that follow its own, are made only when something asks for them (``as_node``), and it
    then answers every question as the lists it was read from. It has no atoms unless its
    kind says otherwise."""

    __slots__ = ()

    def as_node(self) -> Node:
        raise NotImplementedError

    @property
    def items(self) -> tuple:
        return self.as_node().items

    def nodes(self, name: str | None = None) -> Iterator[Node]:
        return self.as_node().nodes(name)

    def first(self, name: str) -> Node | None:
        return self.as_node().first(name)

    def atoms(self) -> list[str]:
        return []

    def atom(self, index: int = 0, default: str | None = None) -> str | None:
        return default

    def value(self, name: str, default: str | None = None) -> str | None:
        return self.as_node().value(name, default)

    def flag(self, name: str) -> bool | None:
        return self.as_node().flag(name)


class Segment(Compact):
    """A track segment read with ``dense_points``: ``(segment (start x0 y0) (end x1 y1)
    (width w) (layer "L") (net n) (uuid "u"))`` as ``("segment", x0, y0, x1, y1, w, L, n,
    u, ordinal, source)``, its words as they are written (the board reads them by place).
    Its six leaves, the ordinals after its own, are made only when asked for: it then
    answers every question as the twig it was read from."""

    __slots__ = ()

    def as_node(self) -> Node:
        ordinal, source = self[-2], self[-1]
        return Node(("segment", Node(("start", self[1], self[2], ordinal + 1, source)),
                     Node(("end", self[3], self[4], ordinal + 2, source)), Node(("width", self[5], ordinal + 3, source)),
                     Node(("layer", self[6], ordinal + 4, source)), Node(("net", self[7], ordinal + 5, source)),
                     Node(("uuid", self[8], ordinal + 6, source)), ordinal, source))

    def __repr__(self) -> str:
        return f"Segment({self[6]!r}, line {self.line})"


class Effects(Compact):
    """A text's (effects (font (size x y)) [(justify ..)] [(hide ..)]), the spelling of
    nearly every effects list KiCad writes, read as one node: ``("effects", size_x,
    size_y, justify words or "", hide word or "", ordinal, source)``. Its lists (font,
    size, justify, hide: the ordinals after its own) are made only when asked for; it
    then answers every question as the lists it was read from."""

    __slots__ = ()

    def as_node(self) -> Node:
        size_x, size_y, justify, hide, ordinal, source = self[1:]
        children = [Node(("font", Node(("size", size_x, size_y, ordinal + 2, source)), ordinal + 1, source))]
        following = ordinal + 3
        if justify:
            children.append(Node(("justify", *justify.split(" "), following, source)))
            following += 1
        if hide:
            children.append(Node(("hide", hide, following, source)))
        return Node(("effects", *children, ordinal, source))

    @property
    def size(self) -> tuple[str, str]:
        """The font size's two words, as written (width, height)."""
        return self[1], self[2]

    def flag(self, name: str) -> bool | None:
        if name == "hide":      # (hide word): the first list named hide
            return (self[4] in ("yes", "true")) if self[4] else None
        return self.as_node().flag(name)

    def __repr__(self) -> str:
        return f"Effects({self[1]} x {self[2]}, line {self.line})"


class Pin(Compact):
    """A library symbol's pin as KiCad 8+ writes it, read as one node: ``("pin", type, shape,
    x, y, angle, length, hide word or "", name, name's Effects, number, number's Effects,
    ordinal, source)``. Its lists (at, length, hide, name and number with their effects: the
    ordinals after its own) are made only when asked for; it then answers every question as
    the lists it was read from."""

    __slots__ = ()

    def as_node(self) -> Node:
        kind, shape, x, y, angle, length, hide, name, name_effects, number, number_effects, ordinal, source = self[1:]
        children: list = [kind, shape, Node(("at", x, y, angle, ordinal + 1, source)),
                          Node(("length", length, ordinal + 2, source))]
        if hide:
            children.append(Node(("hide", hide, ordinal + 3, source)))
        children.append(Node(("name", name, name_effects, name_effects[-2] - 1, source)))
        children.append(Node(("number", number, number_effects, number_effects[-2] - 1, source)))
        return Node(("pin", *children, ordinal, source))

    def atoms(self) -> list[str]:
        return [self[1], self[2]]

    def atom(self, index: int = 0, default: str | None = None) -> str | None:
        return self[1 + index] if index in (0, 1) else default

    def __repr__(self) -> str:
        return f"Pin({self[10]!r} {self[8]!r}, line {self.line})"


class Property(Compact):
    """A symbol's field as KiCad 7+ writes it, read as one node: ``("property", key, value,
    x, y, angle, hide word or "", Effects, ordinal, source)``. Its key and value are its atoms
    and its effects its Effects; its other lists (at, hide) are made only when asked for."""

    __slots__ = ()

    def as_node(self) -> Node:
        key, value, x, y, angle, hide, effects, ordinal, source = self[1:]
        children: list = [key, value, Node(("at", x, y, angle, ordinal + 1, source))]
        if hide:
            children.append(Node(("hide", hide, ordinal + 2, source)))
        return Node(("property", *children, effects, ordinal, source))

    def first(self, name: str) -> Node | None:
        if name == "effects":
            return self[7]
        return self.as_node().first(name)

    def atoms(self) -> list[str]:
        return [self[1], self[2]]

    def atom(self, index: int = 0, default: str | None = None) -> str | None:
        return self[1 + index] if index in (0, 1) else default

    def __repr__(self) -> str:
        return f"Property({self[1]!r}, {self[2]!r}, line {self.line})"


class Wire(Compact):
    """A wire or bus as KiCad 7+ writes it, read as one node: ``(name, x1, y1, x2, y2, width,
    type, uuid, ordinal, source)``. Its lists (pts and its two xy, stroke, width, type, uuid:
    the ordinals after its own) are made only when asked for."""

    __slots__ = ()

    def as_node(self) -> Node:
        name, x1, y1, x2, y2, width, kind, uuid, ordinal, source = self
        return Node((name, Node(("pts", Node(("xy", x1, y1, ordinal + 2, source)),
                                 Node(("xy", x2, y2, ordinal + 3, source)), ordinal + 1, source)),
                     Node(("stroke", Node(("width", width, ordinal + 5, source)), Node(("type", kind, ordinal + 6, source)),
                           ordinal + 4, source)), Node(("uuid", uuid, ordinal + 7, source)), ordinal, source))

    def value(self, name: str, default: str | None = None) -> str | None:
        if name == "uuid":
            return self[7]
        return self.as_node().value(name, default)

    def __repr__(self) -> str:
        return f"Wire({self[0]}, line {self.line})"


class Label(Compact):
    """A local label as KiCad 7+ writes it, read as one node: ``("label", text, x, y, angle,
    fields_autoplaced word or "", Effects, uuid, ordinal, source)``. Its text is its atom;
    its lists (at, fields_autoplaced, effects, uuid) are made only when asked for."""

    __slots__ = ()

    def as_node(self) -> Node:
        _, text, x, y, angle, autoplaced, effects, uuid, ordinal, source = self
        children: list = [text, Node(("at", x, y, angle, ordinal + 1, source))]
        if autoplaced:
            children.append(Node(("fields_autoplaced", autoplaced, ordinal + 2, source)))
        children.append(effects)
        uuid_at = effects[-2] + (3 + bool(effects[3]) + bool(effects[4]))
        children.append(Node(("uuid", uuid, uuid_at, source)))
        return Node(("label", *children, ordinal, source))

    def nodes(self, name: str | None = None) -> Iterator[Node]:
        if name == "property":      # a label read as one node has none (no list between its at and effects)
            return iter(())
        return self.as_node().nodes(name)

    def first(self, name: str) -> Node | None:
        if name == "effects":
            return self[6]
        return self.as_node().first(name)

    def atoms(self) -> list[str]:
        return [self[1]]

    def atom(self, index: int = 0, default: str | None = None) -> str | None:
        return self[1] if index == 0 else default

    def value(self, name: str, default: str | None = None) -> str | None:
        if name == "uuid":
            return self[7]
        return self.as_node().value(name, default)

    def __repr__(self) -> str:
        return f"Label({self[1]!r}, line {self.line})"


class FootprintLine(Compact):
    """A footprint's line as KiCad 7+ writes it, read as one node: ``("fp_line", x1, y1, x2, y2,
    width, type, layer, uuid, ordinal, source)``. Its lists (start, end, stroke with width and
    type, layer, uuid: the ordinals after its own) are made only when asked for: most lines
    of a board are on layers no rule reads (fabrication drawings)."""

    __slots__ = ()

    def as_node(self) -> Node:
        name, x1, y1, x2, y2, width, kind, layer, uuid, ordinal, source = self
        return Node((name, Node(("start", x1, y1, ordinal + 1, source)), Node(("end", x2, y2, ordinal + 2, source)),
                     Node(("stroke", Node(("width", width, ordinal + 4, source)), Node(("type", kind, ordinal + 5, source)),
                           ordinal + 3, source)), Node(("layer", layer, ordinal + 6, source)),
                     Node(("uuid", uuid, ordinal + 7, source)), ordinal, source))

    def value(self, name: str, default: str | None = None) -> str | None:
        if name == "layer":
            return self[7]
        if name == "uuid":
            return self[8]
        return self.as_node().value(name, default)

    def __repr__(self) -> str:
        return f"FootprintLine({self[7]!r}, line {self.line})"


class PinRef(Compact):
    """A placed symbol's pin, ``(pin "number" (uuid ".."))``, read as one node: ``("pin",
    number, uuid, ordinal, source)``; its uuid list is made only when asked for."""

    __slots__ = ()

    def as_node(self) -> Node:
        _, number, uuid, ordinal, source = self
        return Node(("pin", number, Node(("uuid", uuid, ordinal + 1, source)), ordinal, source))

    def atoms(self) -> list[str]:
        return [self[1]]

    def atom(self, index: int = 0, default: str | None = None) -> str | None:
        return self[1] if index == 0 else default

    def value(self, name: str, default: str | None = None) -> str | None:
        if name == "uuid":
            return self[2]
        return self.as_node().value(name, default)

    def __repr__(self) -> str:
        return f"PinRef({self[1]!r}, line {self.line})"


def to_float(text: str | None) -> float | None:
    if text is None:
        return None
    try:
        number = float(text)
    except (ValueError, TypeError):   # TypeError: a list where a hostile file should have a number
        return None
    if not isfinite(number):
        # NaN, infinity or past a double's range (1e999): kicad-cli 9 fails to load the file
        # (its parseDouble refuses what strtod cannot read or overflows), so the checker refuses it.
        raise NonFiniteCoordinate(f"{text[:40]!r} where a number belongs: NaN, infinite or out of range")
    return number


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
          multiple: bool = False, dense_points: bool = False) -> Node:
    """Parse one KiCad S-expression document and return its top-level list.

    ``multiple=True`` accepts several top-level lists (``.kicad_dru`` files are
    written that way) and returns a nameless node holding them all.
    ``dense_points=True`` reads (pts (xy x y) ...) lists of plain decimal
    points as Points nodes (an N x 2 array, no xy nodes): for boards, whose
    zone fills are two thirds of their text.
    """
    with paused_collection():
        return _parse(text, path, limits, multiple, dense_points)


@contextmanager
def paused_collection():
    """No cyclic garbage collection inside: for building acyclic trees in one go.

    Each collection walks every young object, so collections while a tree of
    hundreds of thousands of nodes is allocated only cost time (a third of
    the parse on a 1 MB board), and so do the ones while models are built
    from it (the whole tree, twice, on its way to the old generation). Whatever
    is allocated inside and survives goes straight to the oldest generation
    (``_age_survivors``), walked by the next full collection if one comes.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            _age_survivors()
            gc.enable()


def _age_survivors() -> None:
    """Move what was allocated inside to the oldest generation before collection resumes.

    Otherwise the first allocation after ``gc.enable()`` collects the youngest
    generation, now every object of the trees and models: 70 ms after a check of
    a 6 MB board, to find no cycle (they are acyclic and freed by reference
    counting). In the oldest generation they wait for the next full collection,
    which a command-line run never reaches. ``freeze`` and ``unfreeze`` only move
    lists of objects; nothing else in this process freezes objects (unfreezing
    would also thaw those)."""
    gc.freeze()
    gc.unfreeze()


def _parse(text: str, path: str | None, limits: Limits, multiple: bool, dense_points: bool) -> Node:
    source = Source(text, path)
    max_depth = limits.max_depth
    max_atom = limits.max_atom_chars
    max_tokens = limits.max_tokens
    lists: list = []  # the document's top-level lists
    parts = lists  # name and items so far of the innermost open list
    # For each open list, its parent's parts and its own ordinal: an open
    # list becomes a Node only when it closes, a node being an immutable tuple.
    stack: list[tuple[list, int]] = []
    tokens = 0
    ordinal = 0  # of the next list to open, counted from 0 as Source counts them
    attach = list.extend  # appends (ordinal, source) to a leaf's words, mapped in C
    # A run of plain leaves is split in C: with no quoted space, parenthesis
    # or backslash in it, every "(" opens a leaf, every ")" closes one and
    # quotes only delimit words. The chunk before the first "(" is whitespace.
    split = str.split

    def fail(error_type, message: str, offset: int):
        line, column = _line_and_column(text, offset)
        raise error_type(message, path=path, line=line, column=column)

    # Depth needs no check for leaves: a leaf's parent was refused one level
    # early, so no leaf sits deeper than max_depth.
    for match in _TOKENS[dense_points, max_atom >= _EFFECTS_WORD_MAX].finditer(text):
        kind = match.lastindex
        if kind == 2:  # a run of plain leaves
            run = match.group(2)
            leaves = list(map(split, islice(run.replace(")", " ").replace('"', " ").split("("), 1, None)))
            count = len(leaves)
            if not stack and not multiple:
                if lists:
                    fail(MalformedSexpr, "text after the top-level list", match.start(2))
                if count > 1:
                    fail(MalformedSexpr, "text after the top-level list", match.start(2) + run.index("(", 1))
            if len(run) > max_atom:
                _refuse_long_atoms(leaves, run, match.start(2), max_atom, fail)
            if count == 1:   # a lone leaf: no iterators to set up
                leaf = leaves[0]
                tokens += 2 + len(leaf)
                leaf.append(ordinal)
                leaf.append(source)
                parts.append(Node(leaf))
                ordinal += 1
            else:
                tokens += 2 * count + sum(map(len, leaves))
                any(map(attach, leaves, zip(range(ordinal, ordinal + count), repeat(source))))
                parts.extend(map(Node, leaves))
                ordinal += count
        elif kind == 4:  # a twig: a named list of plain leaves
            if len(stack) >= max_depth - 1:
                fail(NestingTooDeep, f"nesting deeper than {max_depth}", match.start(3) - 1)
            if not stack and not multiple and lists:
                fail(MalformedSexpr, "text after the top-level list", match.start(3) - 1)
            name, run = match.group(3, 4)
            if name == "segment" and dense_points and len(run) <= max_atom:
                fields = _SEGMENT_LEAVES.fullmatch(run)
                if fields is not None:   # KiCad 7+'s track segment: one node of its eight words
                    parts.append(Segment(("segment", *fields.groups(), ordinal, source)))
                    ordinal += 7
                    tokens += 29      # as the twig: "(", "segment", ")", six leaves' "(" and ")", 14 words
                    if tokens > max_tokens:
                        raise TooManyTokens(f"more than {max_tokens} tokens", path=path)
                    continue
            leaves = list(map(split, islice(run.replace(")", " ").replace('"', " ").split("("), 1, None)))
            if len(name) > max_atom:
                fail(AtomTooLong, f"atom longer than {max_atom} characters", match.start(3))
            if len(run) > max_atom:
                _refuse_long_atoms(leaves, run, match.start(4), max_atom, fail)
            count = len(leaves)
            if count == 1:   # a lone leaf: no iterators to set up
                leaf = leaves[0]
                tokens += 5 + len(leaf)
                leaf.append(ordinal + 1)
                leaf.append(source)
                parts.append(Node((name, Node(leaf), ordinal, source)))
            else:
                tokens += 3 + 2 * count + sum(map(len, leaves))
                any(map(attach, leaves, zip(range(ordinal + 1, ordinal + 1 + count), repeat(source))))
                parts.append(Node((name, *map(Node, leaves), ordinal, source)))
            ordinal += 1 + count
        elif kind == 6:  # any other leaf: quoted strings that need the full reading
            offset = match.start(5) - 1
            if not stack and not multiple and lists:
                fail(MalformedSexpr, "text after the top-level list", offset)
            name, rest = match.group(5, 6)
            atoms = _leaf_atoms(rest)
            if len(name) > max_atom or len(rest) > max_atom:
                _refuse_long_atoms([[name, *atoms]], "(", offset, max_atom, fail)
            parts.append(Node((name, *atoms, ordinal, source)))
            ordinal += 1
            tokens += len(atoms) + 3
        elif kind == 1:  # a pts list of (xy x y) points (dense_points)
            if len(stack) >= max_depth - 1:
                fail(NestingTooDeep, f"nesting deeper than {max_depth}", text.index("(", match.start()))
            if not stack and not multiple and lists:
                fail(MalformedSexpr, "text after the top-level list", text.index("(", match.start()))
            run = match.group(1)
            count = run.count("(")   # one per point: the pattern allows no other
            if len(run) > max_atom:
                _refuse_long_atoms(_split_leaves(run), run, match.start(1), max_atom, fail)
            points = _plain_points(run, count)
            if points is not None:   # three words a point
                tokens += 3 + 5 * count   # as for a twig: "(", "pts", ")" and per point "(", ")", 3 words
            else:
                words = run.replace(")", " ").split()
                tokens += 3 + 2 * count + len(words)
                points = _points_array(words, count)
            if tokens > max_tokens:
                raise TooManyTokens(f"more than {max_tokens} tokens", path=path)
            if points is not None:
                parts.append(Points(("pts", points, ordinal, source)))
            else:   # not three words a point, or a number that is not a finite float: a twig
                leaves = _split_leaves(run)
                any(map(attach, leaves, zip(range(ordinal + 1, ordinal + 1 + count), repeat(source))))
                parts.append(Node(("pts", *map(Node, leaves), ordinal, source)))
            ordinal += 1 + count
        elif kind == 7:  # effects as KiCad writes them: one node, its lists made when asked for
            offset = match.start(7)
            if len(stack) >= max_depth - 2:   # as the lists would be refused: effects', else font's
                fail(NestingTooDeep, f"nesting deeper than {max_depth}",
                     offset if len(stack) >= max_depth - 1 else text.index("(", offset + 1))
            if not stack and not multiple and lists:
                fail(MalformedSexpr, "text after the top-level list", offset)
            size_x, size_y, justify, hide = match.group(8, 9, 10, 11)
            parts.append(Effects(("effects", size_x, size_y, justify or "", hide or "", ordinal, source)))
            effects_tokens, effects_lists = _effects_counts(justify, hide)
            tokens += effects_tokens
            ordinal += effects_lists
        elif kind == 12:  # a library pin as KiCad writes it: one node, its lists made when asked for
            offset = match.start(12)
            depth = len(stack)
            if depth >= max_depth - 4:   # as the lists would be refused: the pin's, its name's, effects', font's
                name_at = text.index("(name", offset)
                effects_at = text.index("(effects", name_at)   # not "(" alone: the name may hold one
                fail(NestingTooDeep, f"nesting deeper than {max_depth}",
                     offset if depth >= max_depth - 1 else name_at if depth >= max_depth - 2
                     else effects_at if depth >= max_depth - 3 else text.index("(font", effects_at))
            if not stack and not multiple and lists:
                fail(MalformedSexpr, "text after the top-level list", offset)
            (kind_, shape, x, y, angle, length, hide, name, name_x, name_y, name_justify, name_hide,
             number, number_x, number_y, number_justify, number_hide) = match.group(*range(13, 30))
            # As read list by list: the pin's "(" and name, two atoms, the (at)(length)[(hide)] run,
            # then for name and number "(", name, the string and the effects.
            tokens += 20
            at_name = ordinal + 3
            if hide is not None:
                tokens += 4
                at_name += 1
            name_effects = Effects(("effects", name_x, name_y, name_justify or "", name_hide or "", at_name + 1,
                                    source))
            effects_tokens, effects_lists = _effects_counts(name_justify, name_hide)
            tokens += effects_tokens
            at_number = at_name + 1 + effects_lists
            number_effects = Effects(("effects", number_x, number_y, number_justify or "", number_hide or "",
                                      at_number + 1, source))
            effects_tokens, effects_lists = _effects_counts(number_justify, number_hide)
            tokens += effects_tokens
            parts.append(Pin(("pin", kind_, shape, x, y, angle, length, hide or "", name, name_effects, number,
                              number_effects, ordinal, source)))
            ordinal = at_number + 1 + effects_lists
        elif kind == 30:  # a field as KiCad writes it: one node, its lists made when asked for
            offset = match.start(30)
            depth = len(stack)
            if depth >= max_depth - 1:
                fail(NestingTooDeep, f"nesting deeper than {max_depth}", offset)
            if not stack and not multiple and lists:
                fail(MalformedSexpr, "text after the top-level list", offset)
            key, value, x, y, angle, hide, size_x, size_y, justify, effects_hide = match.group(*range(31, 41))
            if len(key) > max_atom:       # as the strings would be refused, then the effects' lists
                fail(AtomTooLong, f"atom longer than {max_atom} characters", match.start(31))
            if len(value) > max_atom:
                fail(AtomTooLong, f"atom longer than {max_atom} characters", match.start(32))
            if depth >= max_depth - 3:
                effects_at = text.index("(effects", match.end(35))
                fail(NestingTooDeep, f"nesting deeper than {max_depth}",
                     effects_at if depth >= max_depth - 2 else text.index("(font", effects_at))
            # As read list by list: "(" and name, two strings, the (at)[(hide)] run, the effects.
            tokens += 10
            at_effects = ordinal + 2
            if hide is not None:
                tokens += 4
                at_effects += 1
            effects_tokens, effects_lists = _effects_counts(justify, effects_hide)
            tokens += effects_tokens
            parts.append(Property(("property", key, value, x, y, angle, hide or "", Effects((
                "effects", size_x, size_y, justify or "", effects_hide or "", at_effects, source)), ordinal, source)))
            ordinal = at_effects + effects_lists
        elif kind == 41:  # a wire or bus as KiCad writes it: one node, its lists made when asked for
            if len(stack) >= max_depth - 2:   # as the lists would be refused: the wire's, else its points'
                offset = match.start(41)
                fail(NestingTooDeep, f"nesting deeper than {max_depth}",
                     offset if len(stack) >= max_depth - 1 else text.index("(", offset + 1))
            if not stack and not multiple and lists:
                fail(MalformedSexpr, "text after the top-level list", match.start(41))
            parts.append(Wire((*match.group(*range(42, 50)), ordinal, source)))
            tokens += 30    # as read list by list: 2, the pts twig 13, the stroke twig 11, the uuid leaf 4
            ordinal += 8
        elif kind == 50:  # a placed symbol's pin: one node, its uuid list made when asked for
            if len(stack) >= max_depth - 1:
                fail(NestingTooDeep, f"nesting deeper than {max_depth}", match.start(50))
            if not stack and not multiple and lists:
                fail(MalformedSexpr, "text after the top-level list", match.start(50))
            parts.append(PinRef(("pin", *match.group(51, 52), ordinal, source)))
            tokens += 7     # as read list by list: "(" and name 2, the string 1, the uuid leaf 4
            ordinal += 2
        elif kind == 53:  # a local label as KiCad writes it: one node, its lists made when asked for
            offset = match.start(53)
            depth = len(stack)
            if depth >= max_depth - 1:
                fail(NestingTooDeep, f"nesting deeper than {max_depth}", offset)
            if not stack and not multiple and lists:
                fail(MalformedSexpr, "text after the top-level list", offset)
            (label, x, y, angle, autoplaced, size_x, size_y, justify, effects_hide,
             uuid) = match.group(*range(54, 64))
            if len(label) > max_atom:       # as the string would be refused, then the effects' lists
                fail(AtomTooLong, f"atom longer than {max_atom} characters", match.start(54))
            if depth >= max_depth - 3:
                effects_at = text.index("(effects", match.end(57))
                fail(NestingTooDeep, f"nesting deeper than {max_depth}",
                     effects_at if depth >= max_depth - 2 else text.index("(font", effects_at))
            # As read list by list: "(" and name, the string, the (at)[(fields_autoplaced)] run,
            # the effects, the uuid leaf.
            tokens += 13
            at_effects = ordinal + 2
            if autoplaced is not None:
                tokens += 4
                at_effects += 1
            effects_tokens, effects_lists = _effects_counts(justify, effects_hide)
            tokens += effects_tokens
            parts.append(Label(("label", label, x, y, angle, autoplaced or "", Effects((
                "effects", size_x, size_y, justify or "", effects_hide or "", at_effects, source)), uuid,
                ordinal, source)))
            ordinal = at_effects + effects_lists + 1
        elif kind == 64:  # a footprint's line as KiCad writes it: one node, its lists made when asked for
            if len(stack) >= max_depth - 2:   # as the lists would be refused: the line's, else its stroke's
                offset = match.start(64)
                fail(NestingTooDeep, f"nesting deeper than {max_depth}",
                     offset if len(stack) >= max_depth - 1 else text.index("(stroke", offset))
            if not stack and not multiple and lists:
                fail(MalformedSexpr, "text after the top-level list", match.start(64))
            parts.append(FootprintLine(("fp_line", *match.group(*range(65, 73)), ordinal, source)))
            tokens += 31    # as read list by list: 2, the start/end run 10, the stroke twig 11, the layer/uuid run 8
            ordinal += 8
        elif kind <= 74:  # "(" opening any other list, optionally named
            offset = match.start(73)
            if len(stack) >= max_depth - 1:
                fail(NestingTooDeep, f"nesting deeper than {max_depth}", offset)
            if not stack and not multiple and lists:
                fail(MalformedSexpr, "text after the top-level list", offset)
            name = match.group(74)
            if name is not None and len(name) > max_atom:
                fail(AtomTooLong, f"atom longer than {max_atom} characters", match.start(74))
            stack.append((parts, ordinal))
            parts = [name]
            ordinal += 1
            tokens += 2
        elif kind == 75:
            if not stack:
                fail(MalformedSexpr, "unbalanced ')'", match.start(75))
            closed = parts
            parts, own_ordinal = stack.pop()
            closed.append(own_ordinal)
            closed.append(source)
            parts.append(Node(closed))
            continue
        elif kind <= 77:
            atom = match.group(kind)
            if not stack:
                fail(MalformedSexpr, "atom outside any list", match.start(kind))
            if len(atom) > max_atom:
                fail(AtomTooLong, f"atom longer than {max_atom} characters", match.start(kind))
            if kind == 76 and "\\" in atom:
                atom = _unescape(atom)
            parts.append(atom)
            tokens += 1
        else:  # kind 78: a character no token accepts, e.g. an unterminated quote
            offset = match.start(78)
            what = "unterminated string" if text[offset] == '"' else "unexpected character"
            fail(MalformedSexpr, what, offset)
        if tokens > max_tokens:
            raise TooManyTokens(f"more than {max_tokens} tokens", path=path)
    if stack:
        line, column = _line_and_column(text, source.offset(stack[-1][1]))
        raise MalformedSexpr(f"{len(stack)} list(s) left open at end of file", path=path,
                             line=line, column=column)
    if multiple:
        # A nameless holder, ordinal -1: it is no list of the text.
        return Node((None, *lists, -1, source))
    if not lists:
        raise MalformedSexpr("no S-expression found", path=path, line=1, column=1)
    return lists[0]


def _plain_points(run: str, count: int) -> np.ndarray | None:
    """_points_array without splitting the text into words: numpy reads the numbers
    straight from the text (a third of the cost on a board's fills), each "(xy" read
    as a NaN marker. The markers at every third number and finite numbers in between
    mean exactly two numbers a point, as _points_array asks. None when numpy reads
    the text otherwise (a number Python reads and numpy does not, e.g. "1_0"): the
    caller then takes _points_array's word by word reading."""
    import numpy as np

    try:
        numbers = np.fromstring(run.replace("(xy", " nan ").replace(")", " "), sep=" ")
    except (ValueError, DeprecationWarning):   # numpy 2.3+ refuses unread text; older ones warn
        return None
    if len(numbers) != 3 * count:
        return None
    points = numbers.reshape(-1, 3)
    if not np.isnan(points[:, 0]).all() or not np.isfinite(points[:, 1:]).all():
        return None
    return np.ascontiguousarray(points[:, 1:])


def _effects_counts(justify: str | None, hide: str | None) -> tuple[int, int]:
    """Tokens and lists of an Effects as read list by list: "(" and name (2), the font twig
    holding size (8), each leaf's "(", ")" and words; effects, font and size, then justify and
    hide when present."""
    tokens, lists = 10, 3
    if justify is not None:
        tokens += 4 + justify.count(" ")
        lists += 1
    if hide is not None:
        tokens += 4
        lists += 1
    return tokens, lists


def _points_array(words: list[str], count: int) -> np.ndarray | None:
    """``count`` points' words ("(xy", x, y, ...) as an N x 2 array; None unless every point
    has exactly two words after its "(xy" and every number is a finite float.

    "(" only starts a point, so "(xy" at every third word and nowhere else means three
    words a point."""
    if len(words) != 3 * count or words[::3].count("(xy") != count:
        return None
    del words[::3]
    import numpy as np

    try:
        numbers = np.array(words, dtype=np.float64)
    except ValueError:
        return None
    return numbers.reshape(-1, 2) if np.isfinite(numbers).all() else None


def _split_leaves(run: str) -> list[list[str]]:
    """The words of each leaf of a run of plain leaves, split in C."""
    return list(map(str.split, islice(run.replace(")", " ").replace('"', " ").split("("), 1, None)))


def _refuse_long_atoms(leaves: list[list[str]], text: str, offset: int, max_atom: int, fail) -> None:
    """The exact check, only for text longer than one atom may be.

    ``leaves`` were split from ``text`` (found at ``offset``), one per "(".
    """
    start = -1
    for leaf in leaves:
        start = text.index("(", start + 1)
        if any(len(atom) > max_atom for atom in leaf):
            fail(AtomTooLong, f"atom longer than {max_atom} characters", offset + start)


def _line_and_column(text: str, offset: int) -> tuple[int, int]:
    """Position of an offset without building a Source index: for one error."""
    return text.count("\n", 0, offset) + 1, offset - (text.rfind("\n", 0, offset) + 1) + 1


def _leaf_atoms(rest: str) -> list[str]:
    atoms = []
    for quoted, bare in _LEAF_ATOM.findall(rest):
        if bare:
            atoms.append(bare)
        else:
            atoms.append(_unescape(quoted) if "\\" in quoted else quoted)
    return atoms


def parse_bytes(data: bytes, *, path: str | None = None, limits: Limits = DEFAULT_LIMITS,
                multiple: bool = False, dense_points: bool = False) -> Node:
    return parse(decode(data, path), path=path, limits=limits, multiple=multiple, dense_points=dense_points)


def walk(root: Node) -> Iterator[Node]:
    """Every list node below ``root`` (inclusive), depth first, without recursion."""
    pending = [root]
    while pending:
        node = pending.pop()
        yield node
        children = list(node.nodes())
        children.reverse()
        pending.extend(children)

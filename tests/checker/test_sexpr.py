from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from checker import sexpr
from checker.errors import (AtomTooLong, HostileInputError, InvalidUtf8, MalformedSexpr, NestingTooDeep,
                            NulByte, TooManyTokens)
from checker.limits import Limits

from checker_fixtures import KICAD


def test_positions_names_and_atoms():
    root = sexpr.parse('(kicad_sch (version 20211123)\n  (symbol (lib_id "Device:R")\n    (property "Reference" "R1" (id 0)) hide))')
    symbol = root.first("symbol")
    assert (symbol.line, symbol.column) == (2, 3)
    assert symbol.value("lib_id") == "Device:R"
    prop = symbol.first("property")
    assert prop.atoms() == ["Reference", "R1"] and prop.value("id") == "0"
    assert (prop.line, prop.column) == (3, 5)
    assert symbol.flag("hide") is True and symbol.flag("dnp") is None


def test_flags_in_both_spellings():
    node = sexpr.parse("(x (hide yes) (dnp no) bare)")
    assert node.flag("hide") is True
    assert node.flag("dnp") is False
    assert node.flag("bare") is True


def test_escapes_and_parentheses_inside_strings():
    node = sexpr.parse(r'(a (descr "x (y) \"q\" \\ z") "s\nt")')
    assert node.first("descr").atom(0) == 'x (y) "q" \\ z'
    assert node.atoms() == ["s\nt"]


@pytest.mark.parametrize("board", ["v9/kicad_bot_examples/drc-violation/drc-violation.kicad_pcb",
                                   "v6/stickhub/StickHub.kicad_pcb"])
def test_matches_sexpdata_on_a_real_board(board):
    import sexpdata

    text = (KICAD / board).read_text()

    def ours(node):
        head = [node.name] if node.name is not None else []
        return head + [ours(i) if isinstance(i, sexpr.Node) else i for i in node.items]

    def theirs(value):
        if isinstance(value, list):
            return [theirs(v) for v in value]
        if isinstance(value, sexpdata.Symbol):
            return value.value()
        return str(value) if not isinstance(value, str) else value

    def normalise(tree):
        return [normalise(t) if isinstance(t, list) else (repr(float(t)) if _numeric(t) else t) for t in tree]

    assert normalise(ours(sexpr.parse(text))) == normalise(theirs(sexpdata.loads(text)))


def test_every_node_points_at_its_own_parenthesis_on_a_real_board():
    # Runs and twigs of leaves get their ordinals from a counter, and the
    # position index counts "(" outside strings: if the two ever disagreed,
    # nodes would point at a neighbour's line. Net names like "Net-(D1-Pad2)"
    # put parentheses inside strings on this board.
    text = (KICAD / "v6/flat_hierarchy/flat_hierarchy.kicad_pcb").read_text()
    lines = text.split("\n")
    nodes = list(sexpr.walk(sexpr.parse(text)))
    assert len(nodes) == 34072
    for node in nodes:
        assert text[node.offset] == "("
        assert text[node.offset + 1:].lstrip().startswith(node.name)
        assert lines[node.line - 1][node.column - 1] == "("


def test_leaf_runs_twigs_and_other_lists_read_alike():
    # The same lists written so that each reading path takes them: a run of
    # plain leaves, a twig, leaves with strings that need unescaping, and a
    # list with atoms beside its children.
    node = sexpr.parse('(board (a 1 "x")(b)\n (twig (c 2) (d "F.Cu"))'
                       ' (e "two words" "q\\"") (f top (g 3) "h(i)") (j"k"l))')
    assert [n.name for n in node.nodes()] == ["a", "b", "twig", "e", "f", "j"]
    assert node.first("a").atoms() == ["1", "x"] and node.first("b").atoms() == []
    twig = node.first("twig")
    assert twig.value("c") == "2" and twig.value("d") == "F.Cu" and (twig.line, twig.column) == (2, 2)
    assert node.first("e").atoms() == ["two words", 'q"']
    f = node.first("f")
    assert f.atoms() == ["top", "h(i)"] and f.value("g") == "3"
    assert node.first("j").atoms() == ["k", "l"]
    assert [(n.name, n.line, n.column) for n in sexpr.walk(node)][-3:] == [("f", 2, 48), ("g", 2, 55), ("j", 2, 69)]


def _numeric(text) -> bool:
    try:
        float(text)
        return True
    except (TypeError, ValueError):
        return False


@pytest.mark.parametrize("text, error", [
    ('(a "unterminated)', MalformedSexpr),
    ("(a))", MalformedSexpr),
    ("(a (b)", MalformedSexpr),
    ("(a) (b)", MalformedSexpr),
    ("(a (b)) (c)", MalformedSexpr),
    ("(a (b)) (c (d))", MalformedSexpr),
    ("(a (b)) (c \"d e\")", MalformedSexpr),
    ("atom", MalformedSexpr),
    ("", MalformedSexpr),
])
def test_malformed_text_is_refused_with_a_position(text, error):
    with pytest.raises(error) as caught:
        sexpr.parse(text)
    assert caught.value.line is not None and caught.value.code == "malformed_sexpr"


def test_deep_nesting_is_refused_without_recursion():
    depth = 100_000
    with pytest.raises(NestingTooDeep) as caught:
        sexpr.parse("(" * depth + ")" * depth)
    assert caught.value.code == "nesting_too_deep"


def test_long_atom_and_token_count_are_bounded():
    with pytest.raises(AtomTooLong):
        sexpr.parse('(a "' + "x" * 200 + '")', limits=Limits(max_atom_chars=100))
    with pytest.raises(AtomTooLong):
        sexpr.parse("(a (b " + "y" * 200 + "))", limits=Limits(max_atom_chars=100))
    with pytest.raises(TooManyTokens):
        sexpr.parse("(a " + "x " * 1000 + ")", limits=Limits(max_tokens=500))


@pytest.mark.parametrize("text", [
    "(a x (b c) (d " + "y" * 200 + "))",        # a run of plain leaves
    "(a (b c) (d " + "y" * 200 + "))",          # a twig
    "(a (" + "n" * 200 + " c) x)",              # a leaf's name
    "(" + "n" * 200 + " (b c) x)",              # the name of a list with children
    '(a x (b "' + "y" * 200 + '" "z w"))',      # a leaf with strings read fully
])
def test_long_atoms_are_refused_on_every_reading_path(text):
    with pytest.raises(AtomTooLong) as caught:
        sexpr.parse(text, limits=Limits(max_atom_chars=100))
    assert caught.value.line == 1


def test_tokens_are_counted_in_runs_of_leaves():
    with pytest.raises(TooManyTokens):
        sexpr.parse("(a x " + "(b 1 2) " * 1000 + ")", limits=Limits(max_tokens=2000))
    sexpr.parse("(a x " + "(b 1 2) " * 1000 + ")", limits=Limits(max_tokens=5100))


def test_nul_and_invalid_utf8_are_refused():
    with pytest.raises(NulByte) as nul:
        sexpr.parse_bytes(b"(a\n (b \x00))")
    assert nul.value.line == 2
    with pytest.raises(InvalidUtf8):
        sexpr.parse_bytes(b'(a "\xff\xfe")')


def test_multiple_top_level_forms_for_dru_files():
    node = sexpr.parse("(version 1)\n(rule a (constraint track_width (min 0.1mm)))", multiple=True)
    assert [n.name for n in node.nodes()] == ["version", "rule"]
    assert (node.first("rule").line, node.first("rule").first("constraint").column) == (2, 9)
    assert (node.line, node.column) == (1, 1)


_SEED = (KICAD / "v9/kicad_bot_examples/drc-violation/drc-violation.kicad_pcb").read_bytes()


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=400))
def test_random_bytes_raise_only_typed_errors(data):
    try:
        sexpr.parse_bytes(data, limits=Limits(max_depth=50, max_atom_chars=64, max_tokens=2000))
    except HostileInputError:
        pass


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.integers(0, len(_SEED) - 1), st.integers(0, 40), st.binary(max_size=8)),
                min_size=1, max_size=6))
def test_mutated_board_text_raises_only_typed_errors(edits):
    data = bytearray(_SEED)
    for position, cut, insert in edits:
        data[position:position + cut] = insert
    try:
        sexpr.parse_bytes(bytes(data))
    except HostileInputError:
        pass


def _reference_index(text: str) -> tuple[list[int], list[int]]:
    """The position index read one character at a time: a backslash escapes the next character
    inside a quoted string only; a "(" outside strings opens a list."""
    lists, inside, escaped = [], False, False
    for offset, char in enumerate(text):
        if escaped:
            escaped = False
        elif inside:
            escaped, inside = char == "\\", char != '"'
        elif char == '"':
            inside = True
        elif char == "(":
            lists.append(offset)
    return lists, [offset for offset, char in enumerate(text) if char == "\n"]


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet='()"\\\n aµ€', max_size=60))
def test_position_index_agrees_with_a_character_by_character_reading(text):
    lists, newlines = sexpr._index(text)
    assert (list(lists), list(newlines)) == _reference_index(text)


def test_position_index_counts_characters_not_bytes():
    text = '(a (b "µ (x) \\" ü") (c "\\\\")\n (d "€"))'
    root = sexpr.parse(text)
    assert [(n.name, n.line, n.column, text[n.offset]) for n in sexpr.walk(root)] == [
        ("a", 1, 1, "("), ("b", 1, 4, "("), ("c", 1, 21, "("), ("d", 2, 2, "(")]


def test_dense_points_read_the_same_numbers_and_keep_every_other_position():
    # Zone fills as arrays: the same numbers as the xy lists, and every other
    # list keeps its line and column (the points still count as lists).
    text = (KICAD / "v6/flat_hierarchy/flat_hierarchy.kicad_pcb").read_text()
    plain, dense = sexpr.parse(text), sexpr.parse(text, dense_points=True)
    plain_nodes = [n for n in sexpr.walk(plain) if n.name != "xy"]
    dense_nodes = list(sexpr.walk(dense))
    assert [(n.name, n.line, n.column) for n in plain_nodes] == [(n.name, n.line, n.column) for n in dense_nodes]
    arrays = 0
    for ours, theirs in zip(dense_nodes, plain_nodes):
        if isinstance(ours, sexpr.Points):
            assert ours.array.tolist() == [[float(xy.atom(0)), float(xy.atom(1))] for xy in theirs.nodes("xy")]
            assert ours.nodes() is not None and list(ours.nodes()) == [] and ours.atoms() == []
            arrays += 1
    assert arrays == 2   # the zone outline and its fill


@pytest.mark.parametrize("text", [
    "(zone (pts (xy nan 2) (xy 1 2)))",              # not finite
    "(zone (pts (xy 1" + "0" * 400 + " 2)))",         # too large for a float
    "(zone (pts (xy 0x10 2)))",                       # not a number
    "(zone (pts (xy 1 2) (arc (start 0 0) (mid 1 1) (end 2 0))))",
    "(zone (pts (xy 1 2 3) (xy 1 2)))",              # three numbers
    '(zone (pts (xy "1" 2)))',                        # a quoted number
    "(zone (pts (xy 1 2 3) (xy 4)))",                # six words, but not three a point
    "(zone (pts (xy 1) (xy 2 3 4)))",
])
def test_points_that_are_not_plain_take_the_general_path(text):
    pts = sexpr.parse(text, dense_points=True).first("pts")
    assert not isinstance(pts, sexpr.Points) and list(pts.nodes())


def test_dense_points_are_counted_and_bounded_like_any_list():
    text = "(zone (pts " + "(xy 1.5 -2) " * 100 + "))"
    for dense in (False, True):
        # 2 for the zone, 3 for pts, 5 per point: 505 in all.
        sexpr.parse(text, limits=Limits(max_tokens=505), dense_points=dense)
        with pytest.raises(TooManyTokens):
            sexpr.parse(text, limits=Limits(max_tokens=504), dense_points=dense)
        with pytest.raises(NestingTooDeep):
            sexpr.parse(text, limits=Limits(max_depth=2), dense_points=dense)
        with pytest.raises(AtomTooLong):
            sexpr.parse("(zone (pts (xy 123456 1)))", limits=Limits(max_atom_chars=5), dense_points=dense)
        with pytest.raises(MalformedSexpr):
            sexpr.parse("(zone) (pts (xy 1 2))", dense_points=dense)


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet='()"\\\n aµ€', max_size=60))
def test_the_index_without_numpy_agrees_with_a_character_by_character_reading(text):
    # A schematic-only check builds the index without numpy (sexpr._index_small).
    lists, newlines = sexpr._index_small(text)
    assert (list(lists), list(newlines)) == _reference_index(text)


def test_dense_segments_answer_as_the_twig_they_were_read_from():
    # KiCad 7+'s track segments are one compact node with dense_points (board loading):
    # walked, they give the same lists, atoms, ordinals and positions as the plain reading.
    text = (KICAD / "v9/kicad_bot_examples/drc-violation/drc-violation.kicad_pcb").read_text()
    plain, dense = sexpr.parse(text), sexpr.parse(text, dense_points=True)
    segments = [n for n in dense.nodes("segment") if isinstance(n, sexpr.Segment)]
    assert segments and len(segments) == len(list(plain.nodes("segment")))

    def listed(root):
        return [(n.name, n.atoms(), n.line, n.column) for n in sexpr.walk(root)
                if not isinstance(n, sexpr.Points) and n.name != "xy"]
    assert listed(plain) == listed(dense)
    first = segments[0]
    twig = next(plain.nodes("segment"))
    assert first.value("layer") == twig.value("layer") and first.first("uuid").atoms() == twig.first("uuid").atoms()
    assert first.number("width") == twig.number("width") and first.flag("locked") is None


@pytest.mark.parametrize("text", [
    '(segment (start 1 2) (end 3 4) (width 0.2) (layer "F.Cu") (net 1) (tstamp "a"))',   # KiCad 6
    '(segment (start 1 2) (end 3 4) (width 0.2) (layer "F.Cu") (net 1) (uuid "a") (locked yes))',
    '(segment (start 1  2) (end 3 4) (width 0.2) (layer "F.Cu") (net 1) (uuid "a"))',
    '(segment (start 1 2) (end 3 4) (width 0.2) (layer "F.Cu" x) (net 1) (uuid "a"))',
])
def test_other_segment_spellings_are_read_as_twigs(text):
    segment = sexpr.parse(f"(kicad_pcb {text})", dense_points=True).first("segment")
    assert not isinstance(segment, sexpr.Segment)


def test_dense_segments_are_counted_and_bounded_like_the_twig():
    text = '(kicad_pcb (segment (start 1 2) (end 3 4) (width 0.2) (layer "F.Cu") (net 1) (uuid "a")))'
    for dense in (False, True):
        # 2 for kicad_pcb, 29 for the segment (3 for its own list, 2 per leaf, 14 words).
        sexpr.parse(text, limits=Limits(max_tokens=31), dense_points=dense)
        with pytest.raises(TooManyTokens):
            sexpr.parse(text, limits=Limits(max_tokens=30), dense_points=dense)
        with pytest.raises(NestingTooDeep):
            sexpr.parse(text, limits=Limits(max_depth=2), dense_points=dense)
        with pytest.raises(AtomTooLong):   # a long uuid: any text longer than the bound takes the twig's check
            sexpr.parse(text.replace('"a"', '"' + "a" * 30 + '"'), limits=Limits(max_atom_chars=20),
                        dense_points=dense)


def test_compact_effects_answer_as_the_lists_they_were_read_from(monkeypatch):
    # A schematic's (effects (font (size ..)) [(justify ..)] [(hide ..)]) is one Effects node;
    # walked, the file gives the same lists, atoms, ordinals and positions as read list by list.
    text = (KICAD / "v6/flat_hierarchy/flat_hierarchy.kicad_sch").read_text()
    compact = sexpr.parse(text)
    monkeypatch.setitem(sexpr._TOKENS, (False, True), sexpr._TOKENS[False, False])   # effects list by list
    plain = sexpr.parse(text)
    effects = [n for n in sexpr.walk(compact) if isinstance(n, sexpr.Effects)]
    assert effects and not any(isinstance(n, sexpr.Effects) for n in sexpr.walk(plain))

    def listed(root):
        return [(n.name, n.atoms(), n.line, n.column) for n in sexpr.walk(root)]
    assert listed(compact) == listed(plain)


@pytest.mark.parametrize("text, hidden", [
    ("(effects (font (size 1.27 1.27)) (justify left bottom) (hide yes))", True),
    ("(effects (font (size 1.27 1.27)) (hide no))", False),
    ("(effects (font (size 1 2)))", None),
])
def test_compact_effects_flags_and_sizes(text, hidden):
    effects = sexpr.parse(text)
    assert isinstance(effects, sexpr.Effects)
    plain = sexpr.parse(text, limits=Limits(max_atom_chars=sexpr._EFFECTS_WORD_MAX - 1))
    assert effects.flag("hide") == plain.flag("hide") == hidden
    assert effects.size == tuple(plain.first("font").first("size").atoms())
    assert effects.first("justify") is None or effects.first("justify").atoms() == plain.first("justify").atoms()


@pytest.mark.parametrize("text", [
    "(effects (font (size 1.27 1.27) (thickness 0.15)))",
    "(effects (font (size 1.27 1.27) bold))",
    "(effects (font (size 1.27 1.27)) hide)",
    "(effects (font (face \"KiCad Font\") (size 1.27 1.27)))",
    "(effects (font (size 1.27 1.27)) (hide yes) (justify left))",
])
def test_other_effects_are_read_list_by_list(text):
    assert not isinstance(sexpr.parse(text), sexpr.Effects)


def test_compact_effects_are_counted_and_bounded_like_their_lists():
    text = "(label (effects (font (size 1.27 1.27)) (justify left bottom) (hide yes)))"
    for limits in (Limits(), Limits(max_atom_chars=sexpr._EFFECTS_WORD_MAX - 1)):   # compact, then list by list
        assert isinstance(sexpr.parse(text, limits=limits).first("effects"), sexpr.Effects) == (
            limits.max_atom_chars >= sexpr._EFFECTS_WORD_MAX)
        # 2 for the label, 2 for effects, 8 for the font twig, 5 for justify, 4 for hide: 21.
        sexpr.parse(text, limits=Limits(max_tokens=21, max_atom_chars=limits.max_atom_chars))
        with pytest.raises(TooManyTokens):
            sexpr.parse(text, limits=Limits(max_tokens=20, max_atom_chars=limits.max_atom_chars))
        for depth, column in ((2, 8), (3, 17)):   # refused at effects, then at font
            with pytest.raises(NestingTooDeep) as refused:
                sexpr.parse(text, limits=Limits(max_depth=depth, max_atom_chars=limits.max_atom_chars))
            assert refused.value.column == column
        with pytest.raises(MalformedSexpr):
            sexpr.parse("(label) " + text[7:-1], limits=limits)


_PIN = ('(symbol "R_1_1" (pin passive line (at 0 3.81 270) (length 1.27) (hide yes) (name "VCC(3V)" (effects '
        '(font (size 1.27 1.27)))) (number "1" (effects (font (size 1.27 1.27)) (justify left) (hide yes)))))')


def test_compact_pins_answer_as_the_lists_they_were_read_from(monkeypatch):
    # A library symbol's pin as KiCad writes it is one Pin node; walked, the file gives the same
    # lists, atoms, ordinals and positions as read list by list.
    text = (KICAD / "v6/flat_hierarchy/flat_hierarchy.kicad_sch").read_text() + _PIN
    compact = sexpr.parse(text, multiple=True)
    monkeypatch.setitem(sexpr._TOKENS, (False, True), sexpr._TOKENS[False, False])   # list by list
    plain = sexpr.parse(text, multiple=True)
    assert any(isinstance(n, sexpr.Pin) for n in sexpr.walk(compact))

    def listed(root):
        return [(n.name, n.atoms(), n.line, n.column) for n in sexpr.walk(root)]
    assert listed(compact) == listed(plain)


def test_compact_pins_are_counted_and_bounded_like_their_lists(monkeypatch):
    assert isinstance(sexpr.parse(_PIN).first("pin"), sexpr.Pin)
    # symbol 2 + string 1; pin 2, 2 atoms, run 14 (at 6, length 4, hide 4); name 3 + effects 10;
    # number 3 + effects 18 (10, justify 4, hide 4): 55.
    for compact in (True, False):
        if not compact:
            monkeypatch.setitem(sexpr._TOKENS, (False, True), sexpr._TOKENS[False, False])
        assert isinstance(sexpr.parse(_PIN).first("pin"), sexpr.Pin) == compact
        sexpr.parse(_PIN, limits=Limits(max_tokens=55))
        with pytest.raises(TooManyTokens):
            sexpr.parse(_PIN, limits=Limits(max_tokens=54))
        columns = []
        for depth in (2, 3, 4, 5):    # refused at the pin, its name, the name's effects, their font
            with pytest.raises(NestingTooDeep) as refused:
                sexpr.parse(_PIN, limits=Limits(max_depth=depth))
            columns.append(refused.value.column)
        assert columns == [_PIN.index("(pin") + 1, _PIN.index("(name") + 1, _PIN.index("(effects") + 1,
                           _PIN.index("(font") + 1]
        sexpr.parse(_PIN, limits=Limits(max_depth=6))


_PROPERTY = '(symbol (property "Reference" "U(1)" (at 1 2 0) (hide yes) (effects (font (size 1.27 1.27)) (justify left))))'


def test_compact_properties_are_counted_and_bounded_like_their_lists(monkeypatch):
    # symbol 2; property 2, two strings 2, run 10 (at 6, hide 4); effects 14 (10, justify 4): 30.
    for compact in (True, False):
        if not compact:
            monkeypatch.setitem(sexpr._TOKENS, (False, True), sexpr._TOKENS[False, False])
        field = sexpr.parse(_PROPERTY).first("property")
        assert isinstance(field, sexpr.Property) == compact
        assert field.atoms() == ["Reference", "U(1)"] and field.value("hide") == "yes"
        assert field.first("effects").first("justify").atoms() == ["left"]
        sexpr.parse(_PROPERTY, limits=Limits(max_tokens=30))
        with pytest.raises(TooManyTokens):
            sexpr.parse(_PROPERTY, limits=Limits(max_tokens=29))
        columns = []
        for depth in (2, 3, 4):    # refused at the field, its effects, their font
            with pytest.raises(NestingTooDeep) as refused:
                sexpr.parse(_PROPERTY, limits=Limits(max_depth=depth))
            columns.append(refused.value.column)
        assert columns == [_PROPERTY.index("(property") + 1, _PROPERTY.index("(effects") + 1,
                           _PROPERTY.index("(font") + 1]
        sexpr.parse(_PROPERTY, limits=Limits(max_depth=5))
        with pytest.raises(AtomTooLong) as refused:   # the value, as its string would be
            sexpr.parse(_PROPERTY.replace("U(1)", "U" * 70), limits=Limits(max_atom_chars=64))
        assert refused.value.column == _PROPERTY.index("U(1)") + 1


_WIRES = ('(kicad_sch (wire (pts (xy 1 2) (xy 3 4)) (stroke (width 0) (type default)) (uuid "ab-c")) '
          '(symbol (pin "1" (uuid "d-e"))))')


def test_compact_wires_and_placed_pins_are_counted_and_bounded_like_their_lists(monkeypatch):
    # kicad_sch 2; wire 2, pts twig 13, stroke twig 11, uuid 4; symbol 2, pin 2, "1" 1, uuid 4: 41.
    for compact in (True, False):
        if not compact:
            monkeypatch.setitem(sexpr._TOKENS, (False, True), sexpr._TOKENS[False, False])
        root = sexpr.parse(_WIRES)
        wire, pin = root.first("wire"), root.first("symbol").first("pin")
        assert isinstance(wire, sexpr.Wire) == compact and isinstance(pin, sexpr.PinRef) == compact
        assert wire.value("uuid") == "ab-c" and [xy.atoms() for xy in wire.first("pts").nodes()] == [["1", "2"], ["3", "4"]]
        assert pin.atom(0) == "1" and pin.value("uuid") == "d-e" and pin.atom(1) is None
        assert [(n.name, n.line, n.column) for n in sexpr.walk(root)][-1] == ("uuid", 1, _WIRES.index('(uuid "d') + 1)
        sexpr.parse(_WIRES, limits=Limits(max_tokens=41))
        with pytest.raises(TooManyTokens):
            sexpr.parse(_WIRES, limits=Limits(max_tokens=40))
        columns = []
        for depth in (2, 3):    # refused at the wire, then at its points
            with pytest.raises(NestingTooDeep) as refused:
                sexpr.parse(_WIRES, limits=Limits(max_depth=depth))
            columns.append(refused.value.column)
        assert columns == [_WIRES.index("(wire") + 1, _WIRES.index("(pts") + 1]


_LABEL = ('(kicad_sch (label "D(0)" (at 1 2 0) (fields_autoplaced yes) (effects (font (size 1.27 1.27)) '
          '(justify left bottom)) (uuid "ab-c")))')


def test_compact_labels_are_counted_and_bounded_like_their_lists(monkeypatch):
    # kicad_sch 2; label 2, the string 1, run 10 (at 6, fields_autoplaced 4), effects 15, uuid 4: 34.
    for compact in (True, False):
        if not compact:
            monkeypatch.setitem(sexpr._TOKENS, (False, True), sexpr._TOKENS[False, False])
        root = sexpr.parse(_LABEL)
        label = root.first("label")
        assert isinstance(label, sexpr.Label) == compact
        assert label.atoms() == ["D(0)"] and label.value("uuid") == "ab-c" and list(label.nodes("property")) == []
        assert [(n.name, n.column) for n in sexpr.walk(root)][-1] == ("uuid", _LABEL.index("(uuid") + 1)
        sexpr.parse(_LABEL, limits=Limits(max_tokens=34))
        with pytest.raises(TooManyTokens):
            sexpr.parse(_LABEL, limits=Limits(max_tokens=33))
        columns = []
        for depth in (2, 3, 4):    # refused at the label, its effects, their font
            with pytest.raises(NestingTooDeep) as refused:
                sexpr.parse(_LABEL, limits=Limits(max_depth=depth))
            columns.append(refused.value.column)
        assert columns == [_LABEL.index("(label") + 1, _LABEL.index("(effects") + 1, _LABEL.index("(font") + 1]


_FP_LINE = ('(footprint "R" (fp_line (start -1 -2) (end 1 -2) (stroke (width 0.12) (type solid)) (layer "F.SilkS") '
            '(uuid "ab-c")))')


def test_compact_footprint_lines_are_counted_and_bounded_like_their_lists(monkeypatch):
    # footprint 2, the string 1; fp_line 2, start/end 10, stroke twig 11, layer/uuid 8: 34.
    for compact in (True, False):
        if not compact:
            monkeypatch.setitem(sexpr._TOKENS, (False, True), sexpr._TOKENS[False, False])
        root = sexpr.parse(_FP_LINE)
        line = root.first("fp_line")
        assert isinstance(line, sexpr.FootprintLine) == compact
        assert line.value("layer") == "F.SilkS" and line.first("stroke").value("width") == "0.12"
        assert [(n.name, n.column) for n in sexpr.walk(root)][-1] == ("uuid", _FP_LINE.index("(uuid") + 1)
        sexpr.parse(_FP_LINE, limits=Limits(max_tokens=34))
        with pytest.raises(TooManyTokens):
            sexpr.parse(_FP_LINE, limits=Limits(max_tokens=33))
        columns = []
        for depth in (2, 3):    # refused at the line, then at its stroke
            with pytest.raises(NestingTooDeep) as refused:
                sexpr.parse(_FP_LINE, limits=Limits(max_depth=depth))
            columns.append(refused.value.column)
        assert columns == [_FP_LINE.index("(fp_line") + 1, _FP_LINE.index("(stroke") + 1]

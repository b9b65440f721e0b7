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


def test_matches_sexpdata_on_a_real_board():
    import sexpdata

    text = (KICAD / "v9/kicad_bot_examples/drc-violation/drc-violation.kicad_pcb").read_text()

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


def test_nul_and_invalid_utf8_are_refused():
    with pytest.raises(NulByte) as nul:
        sexpr.parse_bytes(b"(a\n (b \x00))")
    assert nul.value.line == 2
    with pytest.raises(InvalidUtf8):
        sexpr.parse_bytes(b'(a "\xff\xfe")')


def test_multiple_top_level_forms_for_dru_files():
    node = sexpr.parse("(version 1)\n(rule a (constraint track_width (min 0.1mm)))", multiple=True)
    assert [n.name for n in node.nodes()] == ["version", "rule"]


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

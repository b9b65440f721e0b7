"""The condition language of KiCad's custom design rules (``.kicad_dru``), as KiCad 9 reads it.

KiCad compiles a rule's ``(condition "...")`` with its expression evaluator
(common/libeval_compiler.cpp, pcbnew/pcbexpr_evaluator.cpp, pcbexpr_functions.cpp):

* operators ``||`` ``&&`` ``!``, comparisons ``==`` ``!=`` ``<`` ``<=`` ``>`` ``>=``,
  arithmetic ``+ - * /``, parentheses;
* literals: quoted strings ('...' or "..."), numbers with a unit (``0.3mm``,
  ``12mil``, ``0.01in``, ``5um``, ``45deg``); a bare number in an expression is in
  KiCad's internal unit (nanometres), as KiCad reads it;
* ``A.<property>`` / ``B.<property>`` / ``L`` (the layer being checked), property names
  case-insensitive with ``_`` for a space (``A.Pad_Type`` is "Pad Type");
* ``A.<function>('arg', ...)`` calls (``A.isPlated()``, ``A.intersectsArea('x')`` ...).

Values follow KiCad's: string equality is case-insensitive and accepts ``*``/``?``
wildcards on the right; a property the item does not have (``A.Pad_Type`` of a track) is
*undefined*, and every comparison with it is false, ``!=`` included
(PCBEXPR_VAR_REF::GetValue, LIBEVAL::VALUE::EqualTo/NotEqualTo).

Evaluation is vectorised: an ``ItemSet`` gives each property or function as one numpy
array over the items (or pairs) being checked, ``None``/NaN for undefined. numpy is imported
by the functions that evaluate, not by the module: the rule book compiles a project's
conditions on every check, a schematic-only check included, which never evaluates one.
"""
from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass


class ConditionError(ValueError):
    """The condition cannot be read, or uses something the checker does not evaluate."""


# Millimetres per unit; a bare number is KiCad's internal unit (1 nm).
UNITS = {"mm": 1.0, "mil": 0.0254, "mils": 0.0254, "th": 0.0254, "in": 25.4, "um": 0.001, "nm": 1e-6,
         "deg": 1.0, "ps": 1.0, "fs": 0.001}
_NUMBER_UNIT = r"(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?\s*(?:mm|mils?|th|in|um|nm|deg|ps|fs)?(?![A-Za-z_])"
_TOKEN = re.compile(r"\s*(?:(?P<op>&&|\|\||==|!=|<=|>=|<|>|!|\(|\)|,|\+|-|\*|/)"
                    r"|'(?P<single>[^']*)'|\"(?P<double>[^\"]*)\""
                    rf"|(?P<number>{_NUMBER_UNIT})"
                    r"|(?P<name>[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)?))")

# The item properties KiCad's rule conditions name (PROPERTY_MANAGER names, lower case, as
# spelt with spaces), and what the checker knows them by. A property of KiCad's that the
# checker has no value for is in UNSUPPORTED_PROPERTIES with the reason.
PROPERTIES = {
    "type": "type", "layer": "layer",
    "net": "net", "net name": "net", "netname": "net",
    "net class": "netclass", "netclass": "netclass",
    "width": "width", "track width": "width",
    "diameter": "diameter", "via diameter": "diameter",
    "hole": "hole", "hole size": "hole", "drill": "hole",
    "hole size x": "hole_x", "hole size y": "hole_y",
    "size x": "size_x", "size y": "size_y",
    "pad type": "pad_type", "pad shape": "pad_shape", "shape": "pad_shape",
    "pad number": "number", "number": "number",
    "fabrication property": "fabrication_property",
    "pin type": "pin_type",
    "via type": "via_type",
    "reference": "reference", "value": "value",
    "library link": "library_link", "footprint": "library_link",
    "name": "zone_name", "zone name": "zone_name",
}
UNSUPPORTED_PROPERTIES = {
    "pin name": "pad pin names are not read from the board",
    "keywords": "footprint keywords are not read",
    "component class": "component classes are not read",
    "sheetname": "sheet names are not read", "sheetfile": "sheet files are not read",
    "line width": "graphic line widths are not evaluated (only copper items are)",
    "text height": "text properties are not evaluated",
    "text width": "text properties are not evaluated",
    "text thickness": "text properties are not evaluated",
    "orientation": "orientations are not evaluated",
}

# KiCad 9's condition functions (PCBEXPR_BUILTIN_FUNCTIONS::RegisterAllFunctions), lower case,
# with the checker's name for those it evaluates and, else, why not.
FUNCTIONS = {
    "isplated": "is_plated", "existsonlayer": "exists_on_layer",
    "insidecourtyard": "intersects_courtyard", "intersectscourtyard": "intersects_courtyard",
    "insidefrontcourtyard": "intersects_front_courtyard", "insidebackcourtyard": "intersects_back_courtyard",
    "intersectsfrontcourtyard": "intersects_front_courtyard",
    "intersectsbackcourtyard": "intersects_back_courtyard",
    "insidearea": "intersects_area", "intersectsarea": "intersects_area", "enclosedbyarea": "enclosed_by_area",
    "ismicrovia": "is_micro_via", "isblindburiedvia": "is_blind_buried_via",
    "isblindvia": "is_blind_buried_via", "isburiedvia": "is_blind_buried_via",
    "memberoffootprint": "member_of_footprint",
    "iscoupleddiffpair": "is_coupled_diff_pair", "indiffpair": "in_diff_pair",
    "hasnetclass": "has_netclass",
}
UNSUPPORTED_FUNCTIONS = {
    "fromto": "from-to (pad to pad) paths are not traced",
    "memberof": "groups are not read from the board", "memberofgroup": "groups are not read from the board",
    "memberofsheet": "footprints' sheet paths are not evaluated",
    "getfield": "footprint fields other than Reference and Value are not read",
    "hascomponentclass": "component classes are not read",
}


@dataclass(frozen=True)
class Condition:
    """A compiled condition. ``tree`` nodes: ('or'|'and', x, y), ('not', x), ('cmp', op, x, y),
    ('arith', op, x, y), ('neg', x), ('num', mm), ('str', text), ('prop', side, name),
    ('call', side, name, args), ('layer',)."""

    tree: tuple
    text: str = ""

    def evaluate(self, a, b=None):
        """A boolean (or boolean array) for the items ``a`` and ``b`` (``ItemSet``s, or dicts of
        property -> value/array as the copper rules give them)."""
        import numpy as np
        a = _as_items(a)
        b = _as_items(b) if b is not None else a
        result = _truth(_eval(self.tree, a, b))
        return bool(result) if np.ndim(result) == 0 else result

    def uses(self) -> set[str]:
        """The checker names of the properties and functions the condition uses."""
        found: set[str] = set()
        _walk(self.tree, found)
        return found


def _walk(node: tuple, found: set[str]) -> None:
    kind = node[0]
    if kind == "prop":
        found.add(node[2])
    elif kind == "call":
        found.add(node[2] + "()")
    for part in node[1:]:
        if isinstance(part, tuple):
            _walk(part, found)


def parse_condition(text: str) -> Condition:
    """Compile a condition as KiCad does; ConditionError says why it cannot be evaluated."""
    tokens = _tokens(text)
    if not tokens:
        return Condition(("const", True), text)
    parser = _Parser(tokens)
    tree = parser.expression()
    if parser.index != len(tokens):
        raise ConditionError(f"unexpected {parser.tokens[parser.index][1]!r} in the condition")
    return Condition(tree, text)


def parse_value(text: str) -> float | None:
    """A constraint value in mm: ``0.2mm``, ``4mil``, ``0.2`` (mm: a constraint's bare number is
    in mm), or arithmetic of such (``1.5mm + 2.0mm``); None when it is none of these."""
    try:
        tokens = _tokens(text)
    except ConditionError:
        return None
    if not tokens:
        return None
    parser = _Parser(tokens, bare_mm=1.0)
    try:
        tree = parser.sum()
    except ConditionError:
        return None
    if parser.index != len(tokens) or not _numeric_only(tree):
        return None
    value = _eval(tree, None, None)
    return float(value)


def _numeric_only(node: tuple) -> bool:
    if node[0] == "num":
        return True
    if node[0] == "neg":
        return _numeric_only(node[1])
    if node[0] == "arith":
        return _numeric_only(node[2]) and _numeric_only(node[3])
    return False


def _tokens(text: str) -> list[tuple]:
    tokens: list[tuple] = []
    position, end = 0, len(text.rstrip())
    while position < end:
        match = _TOKEN.match(text, position)
        if not match or match.end() == position:
            raise ConditionError(f"cannot read the condition at {text[position:position + 20]!r}")
        position = match.end()
        if match.group("op"):
            tokens.append(("op", match.group("op")))
        elif match.group("single") is not None or match.group("double") is not None:
            tokens.append(("str", match.group("single") if match.group("single") is not None else match.group("double")))
        elif match.group("number"):
            literal = match.group("number").replace(" ", "")
            unit = re.search(r"[A-Za-z]+$", literal)
            number = float(literal[:unit.start()] if unit else literal)
            tokens.append(("number", (number, unit.group().lower() if unit else None)))
        else:
            tokens.append(("name", match.group("name")))
    return tokens


class _Parser:
    def __init__(self, tokens: list[tuple], bare_mm: float = 1e-6):
        self.tokens = tokens
        self.index = 0
        self.bare_mm = bare_mm      # mm per unit of a number without one: nm in a condition

    def peek(self):
        return self.tokens[self.index] if self.index < len(self.tokens) else None

    def take(self):
        token = self.peek()
        if token is None:
            raise ConditionError("the condition ends too early")
        self.index += 1
        return token

    def expect(self, op: str) -> None:
        if self.take() != ("op", op):
            raise ConditionError(f"expected {op!r} in the condition")

    def expression(self):
        left = self.conjunction()
        while self.peek() == ("op", "||"):
            self.take()
            left = ("or", left, self.conjunction())
        return left

    def conjunction(self):
        left = self.comparison()
        while self.peek() == ("op", "&&"):
            self.take()
            left = ("and", left, self.comparison())
        return left

    def comparison(self):
        left = self.sum()
        token = self.peek()
        if token in (("op", "=="), ("op", "!="), ("op", "<"), ("op", "<="), ("op", ">"), ("op", ">=")):
            self.take()
            left = ("cmp", token[1], left, self.sum())
        return left

    def sum(self):
        left = self.product()
        while self.peek() in (("op", "+"), ("op", "-")):
            op = self.take()[1]
            left = ("arith", op, left, self.product())
        return left

    def product(self):
        left = self.unary()
        while self.peek() in (("op", "*"), ("op", "/")):
            op = self.take()[1]
            left = ("arith", op, left, self.unary())
        return left

    def unary(self):
        token = self.take()
        if token == ("op", "!"):
            return ("not", self.unary())
        if token == ("op", "-"):
            return ("neg", self.unary())
        if token == ("op", "("):
            inner = self.expression()
            self.expect(")")
            return inner
        if token[0] == "str":
            return ("str", token[1])
        if token[0] == "number":
            number, unit = token[1]
            return ("num", number * (UNITS[unit] if unit else self.bare_mm))
        if token[0] == "name":
            return self.reference(token[1])
        raise ConditionError(f"unexpected {token[1]!r} in the condition")

    def reference(self, name: str):
        if "." not in name:
            lowered = name.lower()
            if lowered in ("true", "false"):
                return ("const", lowered == "true")
            if lowered == "l":
                return ("layer",)
            raise ConditionError(f"{name!r} is not an item property (A.<property> or B.<property>)")
        side, member = name.split(".", 1)
        side = side.upper()
        if side not in ("A", "B", "AB"):
            raise ConditionError(f"{name!r}: only A., B. and AB. name items")
        if self.peek() == ("op", "("):
            self.take()
            args = []
            while self.peek() != ("op", ")"):
                token = self.take()
                if token[0] != "str":
                    raise ConditionError(f"{member}(): arguments are quoted strings")
                args.append(token[1])
                if self.peek() == ("op", ","):
                    self.take()
            self.take()
            function = member.lower()
            if function in UNSUPPORTED_FUNCTIONS:
                raise ConditionError(f"{side}.{member}() is not evaluated by boardready: "
                                     f"{UNSUPPORTED_FUNCTIONS[function]}")
            if function not in FUNCTIONS:
                raise ConditionError(f"{side}.{member}() is not a KiCad 9 rule function")
            return ("call", side, FUNCTIONS[function], tuple(args))
        if side == "AB":
            raise ConditionError(f"{name!r}: AB. names functions only")
        prop = member.replace("_", " ").lower()
        if prop in UNSUPPORTED_PROPERTIES:
            raise ConditionError(f"{side}.{member} is not evaluated by boardready: {UNSUPPORTED_PROPERTIES[prop]}")
        if prop not in PROPERTIES:
            raise ConditionError(f"{side}.{member} is not a property boardready knows")
        return ("prop", side, PROPERTIES[prop])


# -- evaluation ---------------------------------------------------------------------------

class ItemSet:
    """The items one side of a condition stands for, as arrays: subclasses give ``value``
    (an object or float array, None/NaN where undefined) and ``call``."""

    size: int = 1

    def value(self, name: str):
        raise KeyError(name)

    def call(self, name: str, args: tuple, other: ItemSet):
        raise KeyError(name)

    def layer(self):
        """The layer being checked (``L``)."""
        return self.value("layer")


class DictItems(ItemSet):
    """Properties given as a dict (name -> scalar or array), as the copper rules pass them."""

    def __init__(self, values: dict):
        self.values = values

    def value(self, name: str):
        if name not in self.values:
            raise ConditionError(f"{name} is not known for these items")
        return self.values[name]

    def call(self, name: str, args: tuple, other: ItemSet):
        function = self.values.get(name + "()")
        if function is None:
            raise ConditionError(f"{name}() is not known for these items")
        return function(args, other)


def _as_items(value) -> ItemSet:
    return value if isinstance(value, ItemSet) else DictItems(value)


def _side(side: str, a: ItemSet, b: ItemSet) -> ItemSet:
    return a if side == "A" else b


def _eval(node: tuple, a: ItemSet, b: ItemSet):
    kind = node[0]
    if kind == "const":
        return node[1]
    if kind == "num":
        return node[1]
    if kind == "str":
        return _Text(node[1])
    if kind == "or":
        return _truth(_eval(node[1], a, b)) | _truth(_eval(node[2], a, b))
    if kind == "and":
        return _truth(_eval(node[1], a, b)) & _truth(_eval(node[2], a, b))
    if kind == "not":
        return _negate(_truth(_eval(node[1], a, b)))
    if kind == "neg":
        return -_numeric(_eval(node[1], a, b))
    if kind == "arith":
        import numpy as np

        left, right = _numeric(_eval(node[2], a, b)), _numeric(_eval(node[3], a, b))
        with np.errstate(divide="ignore", invalid="ignore"):
            return {"+": left + right, "-": left - right, "*": left * right, "/": left / right}[node[1]]
    if kind == "prop":
        return _side(node[1], a, b).value(node[2])
    if kind == "layer":
        return a.layer()
    if kind == "call":
        side, name, args = node[1], node[2], node[3]
        if side == "AB":
            return a.call(name, args, b)
        return _side(side, a, b).call(name, args, b if side == "A" else a)
    if kind == "cmp":
        return _compare(node[1], _eval(node[2], a, b), _eval(node[3], a, b))
    raise ConditionError(f"cannot evaluate {kind}")


class _Text(str):
    """A quoted string of the condition (the side a wildcard is read from)."""


def _truth(value):
    import numpy as np
    if isinstance(value, np.ndarray):
        if value.dtype == bool:
            return value
        if value.dtype == object:
            return np.array([_scalar_truth(v) for v in value], dtype=bool)
        return np.nan_to_num(value.astype(float)) != 0
    return _scalar_truth(value)


def _scalar_truth(value) -> bool:
    import numpy as np
    if value is None:
        return False
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, float, np.floating, np.integer)):
        return bool(value) and not np.isnan(value)
    return bool(value)


def _negate(value):
    import numpy as np
    return ~value if isinstance(value, np.ndarray) else not value


def _numeric(value):
    import numpy as np
    if isinstance(value, np.ndarray):
        if value.dtype == object:
            return np.array([v if isinstance(v, (int, float)) and not isinstance(v, bool) else np.nan
                             for v in value], dtype=float)
        return value.astype(float)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    return np.nan


def _compare(op: str, left, right):
    import numpy as np
    if isinstance(left, _Text) and not isinstance(right, _Text):
        left, right = right, left          # the quoted string is the pattern
    if op in ("==", "!="):
        equal, defined = _equal(left, right)
        return equal & defined if op == "==" else _negate(equal) & defined
    # KiCad compares integer nanometres: 0.2mm - 0.05mm is exactly 0.15mm there
    left_n, right_n = np.round(_numeric(left) * 1e6), np.round(_numeric(right) * 1e6)
    with np.errstate(invalid="ignore"):
        result = {"<": np.less, "<=": np.less_equal, ">": np.greater, ">=": np.greater_equal}[op](left_n, right_n)
    return result if isinstance(result, np.ndarray) else bool(result)


def _equal(left, right):
    """(equal, both defined) for two values, scalar or array: strings case-insensitively, a
    quoted right-hand string with * or ? as a wildcard; numbers within 1 nm."""
    import numpy as np
    if isinstance(right, _Text):
        pattern = str(right).lower()
        wildcard = "*" in pattern or "?" in pattern

        def one(value):
            if value is None or isinstance(value, float) and np.isnan(value):
                return False, False
            text = str(value).lower() if not isinstance(value, (int, float)) else None
            if text is None:
                return False, True
            return (fnmatch.fnmatchcase(text, pattern) if wildcard else text == pattern), True
        return _map2(one, left)
    if isinstance(left, np.ndarray) or isinstance(right, np.ndarray):
        size = len(left) if isinstance(left, np.ndarray) else len(right)
        left_a = left if isinstance(left, np.ndarray) else np.array([left] * size, dtype=object)
        right_a = right if isinstance(right, np.ndarray) else np.array([right] * size, dtype=object)
        pairs = [_equal_scalar(x, y) for x, y in zip(left_a, right_a)]
        return np.array([p[0] for p in pairs], dtype=bool), np.array([p[1] for p in pairs], dtype=bool)
    return _equal_scalar(left, right)


def _equal_scalar(x, y):
    import numpy as np
    undefined = (x is None or y is None or isinstance(x, float) and np.isnan(x)
                 or isinstance(y, float) and np.isnan(y))
    if undefined:
        return False, False
    numeric_x = isinstance(x, (int, float, np.floating)) and not isinstance(x, bool)
    numeric_y = isinstance(y, (int, float, np.floating)) and not isinstance(y, bool)
    if numeric_x and numeric_y:
        return abs(float(x) - float(y)) < 1e-6, True
    if numeric_x or numeric_y:
        return False, True
    return str(x).lower() == str(y).lower(), True


def _map2(one, values):
    import numpy as np
    if isinstance(values, np.ndarray):
        pairs = [one(v) for v in values]
        return np.array([p[0] for p in pairs], dtype=bool), np.array([p[1] for p in pairs], dtype=bool)
    return one(values)


# -- the file -------------------------------------------------------------------------------

def without_comments(text: str) -> str:
    """The rule file with its comments blanked (lines kept, so places stay right): KiCad's rule
    lexer (DSNLEXER) takes a line whose first non-blank character is ``#`` as a comment; fab
    houses' published rule files are full of them."""
    return "\n".join("" if line.lstrip().startswith("#") else line for line in text.split("\n"))


def read_dru(reader, path):
    """A ``.kicad_dru`` as KiCad reads it: its top-level lists, comments left out."""
    from . import sexpr

    return sexpr.parse(without_comments(reader.read_text(path)), path=reader.relative(path),
                       limits=reader.limits, multiple=True)

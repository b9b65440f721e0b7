"""The .kicad_dru condition language as real rule files use it (checker/dru_expr.py,
checker/dru_items.py): the rule files under tests/fixtures/kicad-dru compile as KiCad 9
compiles them, comments included, and conditions evaluate with KiCad's values."""
from __future__ import annotations

import shutil

import numpy as np
import pytest

from checker.dru_expr import ConditionError, parse_condition, parse_value, without_comments
from checker.rulebook import BoardRules, _read_custom
from checker.runner import RunOptions, check
from checker.sexpr import parse

from checker_fixtures import FIXTURES, KICAD

RULE_FILES = sorted((FIXTURES / "kicad-dru").rglob("*.kicad_dru"))
# rule -> why the checker skips it (both are errors KiCad 9 itself reports when compiling them)
SKIPPED = {"keepout bottom footprints": "A.Layer_Bottom is not a property boardready knows"}


def _rules(path):
    rules = BoardRules()
    _read_custom(parse(without_comments(path.read_text(encoding="utf-8")), multiple=True), rules)
    return rules


def test_the_real_rule_files_compile_but_for_what_kicad_refuses_too():
    assert len(RULE_FILES) >= 12
    total = 0
    skipped = {}
    for path in RULE_FILES:
        rules = _rules(path)
        total += len(rules.custom) + len(rules.unsupported)
        skipped.update({name: reason for name, reason, _ in rules.unsupported})
    assert skipped == SKIPPED
    assert total >= 50


@pytest.mark.parametrize("text, item, expected", [
    ("A.Type == 'Pad' && A.Pad_Type == 'Through-hole'", {"type": "Pad", "pad_type": "Through-hole"}, True),
    ("A.Type == 'pad' && A.Pad_Type == 'NPTH, mechanical'", {"type": "Pad", "pad_type": "Through-hole"}, False),
    ("A.Hole_Size_X < 0.3mm && A.Size_X <= 0.4mm", {"hole_x": 0.25, "size_x": 0.4}, True),
    ("A.Hole < 12mil", {"hole": 0.3}, True),
    ("A.Hole < 0.3", {"hole": 0.25}, False),                  # a bare number is nanometres, as in KiCad
    ("A.NetClass == 'HV*'", {"netclass": "hv_input"}, True),    # case-insensitive wildcard
    ("A.Pad_Type != 'SMD'", {"pad_type": None}, False),        # undefined: every comparison is false
    ("!(A.Pad_Type == 'SMD')", {"pad_type": None}, True),
    ("A.Width >= 0.2mm - 0.05mm", {"width": 0.15}, True),
    ("true", {}, True),
])
def test_condition_values_as_kicad_compares_them(text, item, expected):
    assert parse_condition(text).evaluate(item, item) is expected


def test_net_comparison_between_two_items_is_per_pair():
    condition = parse_condition("A.Net != B.Net && A.Type == 'Via'")
    a = {"net": np.array(["GND", "VCC"], dtype=object), "type": np.array(["Via", "Via"], dtype=object)}
    b = {"net": np.array(["GND", "GND"], dtype=object), "type": np.array(["Track", "Track"], dtype=object)}
    assert condition.evaluate(a, b).tolist() == [False, True]


@pytest.mark.parametrize("text, reason", [
    ("A.fromTo('U1-1', 'U2-1')", "from-to"),
    ("A.memberOfGroup('x')", "groups"),
    ("A.Foo == 'x'", "not a property"),
    ("A.Type == ", "ends too early"),
])
def test_what_is_not_evaluated_says_why(text, reason):
    with pytest.raises(ConditionError, match=reason):
        parse_condition(text)


def test_constraint_values_with_units_and_arithmetic():
    assert parse_value("0.2mm") == pytest.approx(0.2)
    assert parse_value("8mil") == pytest.approx(0.2032)
    assert parse_value("0.2") == pytest.approx(0.2)          # a constraint's bare number is mm
    assert parse_value("1.5mm + 2.0mm") == pytest.approx(3.5)
    assert parse_value("A.Width") is None


def test_a_commented_rule_file_is_read_as_kicad_reads_it(tmp_path):
    # Fab houses' published rule files are full of '#' comment lines; the checker refused the
    # whole project as malformed input before.
    folder = tmp_path / "ecc83"
    shutil.copytree(KICAD / "v6" / "ecc83", folder)
    (folder / "ecc83-pp.kicad_dru").write_text(
        "(version 1)\n# JLCPCB: 1-2 layers\n  # indented too\n(rule \"Pad to track\"\n"
        "  # a comment inside the rule\n  (constraint clearance (min 0.2mm))\n"
        "  (condition \"A.Type == 'Pad' && A.Pad_Type == 'Through-hole' && B.Type == 'Track'\"))\n",
        encoding="utf-8")
    outcome = check(RunOptions(path=folder / "ecc83-pp.kicad_pro", root=folder, run_kicad_cli=False))
    assert not [f for f in outcome.findings if f.rule_id == "rules.unsupported"]
    assert outcome.result["readiness"] in ("ready", "at-risk", "blocked")


def test_custom_rules_on_a_real_board_find_what_kicad_9_finds(tmp_path):
    """pic_programmer with a rule file of real constructs: every clearance violation kicad-cli
    9.0.8 reports (413, each naming its rule) is one the checker reports at the same two items."""
    import json
    import re
    from collections import Counter

    cut = FIXTURES / "kicad-corpus-cuts" / "dru-conditions-pic-programmer"
    folder = tmp_path / "pic_programmer"
    shutil.copytree(KICAD / "v6" / "pic_programmer", folder)
    shutil.copy(cut / "pic_programmer.kicad_dru", folder)
    outcome = check(RunOptions(path=folder / "pic_programmer.kicad_pro", root=folder, run_kicad_cli=False))
    ours = {frozenset(place.get("uuids") or []) for f in outcome.findings if f.kicad_type == "clearance"
            for place in f.all_locations()}
    report = json.loads((cut / "kicad-drc.json").read_text(encoding="utf-8"))
    theirs = Counter()
    found = Counter()
    for violation in report["violations"]:
        rule = re.search(r"rule '([^']*)'", violation["description"]).group(1)
        theirs[rule] += 1
        found[rule] += frozenset(item["uuid"] for item in violation["items"]) in ours
    assert len(theirs) == 6 and sum(theirs.values()) == 413
    assert found == theirs
    assert not [f for f in outcome.findings if f.rule_id == "rules.unsupported"]


def test_custom_size_rules_on_a_real_board_as_kicad_9(tmp_path):
    """hole_size / via_diameter / annular_width rules on pic_programmer: every violation kicad-cli
    9.0.8 reports is the checker's at the same item, same type and severity, and none more."""
    import json
    from collections import Counter

    cut = FIXTURES / "kicad-corpus-cuts" / "dru-sizes-pic-programmer"
    folder = tmp_path / "pic_programmer"
    shutil.copytree(KICAD / "v6" / "pic_programmer", folder)
    shutil.copy(cut / "pic_programmer.kicad_dru", folder)
    outcome = check(RunOptions(path=folder / "pic_programmer.kicad_pro", root=folder, run_kicad_cli=False))
    types = ("annular_width", "drill_out_of_range", "via_diameter")
    ours = Counter((f.kicad_type, "error" if f.severity == "error" else "warning", uuid)
                   for f in outcome.findings if f.kicad_type in types
                   for place in (f.all_locations() or [f.extra]) for uuid in place.get("uuids") or [])
    report = json.loads((cut / "kicad-drc.json").read_text(encoding="utf-8"))
    theirs = Counter((v["type"], v["severity"], v["items"][0]["uuid"]) for v in report["violations"])
    assert sum(theirs.values()) == 315
    assert ours == theirs

"""ERC disagreements with KiCad 9 seen on real projects, each kept as a small real project
(tests/fixtures/kicad-corpus-cuts/erc-*, with kicad-cli 9.0.8's report beside it and its
README saying where it comes from): the checker reports those types as KiCad does, at the
same items, at KiCad's severity."""
from __future__ import annotations

import json
from collections import Counter

import pytest

from checker.runner import RunOptions, check

from checker_fixtures import FIXTURES

CUTS = FIXTURES / "kicad-corpus-cuts"
# cut -> the KiCad types compared (what the cut is about)
COMPARED = {
    "erc-pin-conflict-ground": ("pin_to_pin",),
    "erc-global-label-floating": ("global_label_dangling", "label_dangling"),
    "erc-label-power-net": ("power_pin_not_driven", "pin_not_driven", "label_dangling"),   # KiCad: none
    "erc-unit-footprint-single-unit": ("different_unit_footprint",),                          # KiCad: none
}


def _kicad(folder, types):
    report = json.loads((folder / "kicad-erc.json").read_text(encoding="utf-8"))
    return Counter((v["type"], frozenset(item["uuid"] for item in v["items"]), v["severity"])
                   for sheet in report["sheets"] for v in sheet["violations"] if v["type"] in types)


def _ours(folder, types):
    pro = next(folder.glob("*.kicad_pro"))
    outcome = check(RunOptions(path=pro, root=folder, run_kicad_cli=False))
    findings = [f for f in outcome.findings if f.kicad_type in types and f.source == "boardready"]
    return Counter((f.kicad_type, frozenset(f.uuids), "error" if f.severity == "error" else "warning")
                   for f in findings), outcome


def test_every_cut_is_compared():
    assert sorted(p.name for p in CUTS.glob("erc-*") if p.is_dir()) == sorted(
        [*COMPARED, "erc-duplicate-sheet-names-merge"])


@pytest.mark.parametrize("name", sorted(COMPARED))
def test_cut_is_reported_as_kicad_reports_it(name):
    folder = CUTS / name
    types = COMPARED[name]
    theirs = _kicad(folder, types)
    ours, _ = _ours(folder, types)
    assert ours == theirs


def test_ground_pin_conflict_is_one_warning_at_the_unspecified_pin():
    # ~100 pins of GND against one Unspecified pin (U2 pin 8): KiCad 9 puts one marker on the
    # heaviest pin (ERC_SETTINGS pin weights: Unspecified 10) naming the nearest other pin, and
    # rates it from the pin map (Unspecified-Passive: warning) though the project sets
    # "pin_to_pin": "error".
    folder = CUTS / "erc-pin-conflict-ground"
    assert json.loads((folder / "StickHub.kicad_pro").read_text())["erc"]["rule_severities"]["pin_to_pin"] == "error"
    ours, outcome = _ours(folder, ("pin_to_pin",))
    [(finding, count)] = ours.items()
    assert count == 1 and finding[2] == "warning"
    [pin_to_pin] = [f for f in outcome.findings if f.kicad_type == "pin_to_pin"]
    assert pin_to_pin.extra["pins"] == ["U2:8", "C28:2"]


def test_sheets_named_alike_share_their_local_nets():
    # KiCad 6 pins carry no uuid in the file (kicad-cli makes them up), so the match is
    # erc_compare's: by place and by reference and pin number.
    from tools import erc_compare

    folder = CUTS / "erc-duplicate-sheet-names-merge"
    pro = folder / "complex_hierarchy.kicad_pro"
    violations = erc_compare.read_violations(json.loads((folder / "kicad-erc.json").read_text(encoding="utf-8")))
    assert sorted(v.type for v in violations if v.type in ("pin_to_pin", "duplicate_sheet_names")) == [
        "duplicate_sheet_names", "pin_to_pin"]
    result = erc_compare.compare(pro, violations)
    assert result.matched["pin_to_pin"] == 1 and result.matched["duplicate_sheet_names"] == 1
    assert not result.missed, [(v.type, v.description) for v in result.missed]

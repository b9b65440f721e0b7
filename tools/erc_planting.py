"""Plant one schematic (ERC) defect in each copy of a real fixture project, and let KiCad 9 judge it.

``python -m tools.erc_planting OUT`` (kicad-cli 9 on the PATH): for every plant
below it copies the source project's schematic files and project file into
``OUT/<plant>/``, makes the one text edit, and writes KiCad's own ERC report
beside it (``kicad-erc.json``: ``kicad-cli sch erc --format json --severity-all
--units mm``). The committed copies live in ``tests/fixtures/kicad-planted-erc/``
and ``tests/checker/test_erc_planted.py`` checks the checker against those
reports without KiCad. Never imported by the checker or the service.

Sources (real projects, see tests/fixtures/README.md): ``kicad/v6/ecc83``
(KiCad 6 demo, GPL-2+), ``kicad/v6/complex_hierarchy`` (KiCad 6 demo, one sheet
file used twice) and ``kicad/v9/kicad_sch_api_reference_projects/multi_unit_7400``
(KiCad 9, a 7400 with its five units placed, nothing wired).
"""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
KICAD = ROOT / "tests" / "fixtures" / "kicad"
ECC83 = (KICAD / "v6" / "ecc83", "ecc83-pp", ["ecc83-pp.kicad_sch", "ecc83-pp.kicad_pro"])
HIERARCHY = (KICAD / "v6" / "complex_hierarchy", "complex_hierarchy",
             ["complex_hierarchy.kicad_sch", "ampli_ht.kicad_sch", "complex_hierarchy.kicad_pro"])
GATES = (KICAD / "v9" / "kicad_sch_api_reference_projects" / "multi_unit_7400", "multi_unit_7400",
         ["multi_unit_7400.kicad_sch", "multi_unit_7400.kicad_pro"])
DIVIDER = (KICAD / "v9" / "kicad_sch_api_reference_projects" / "resistor_divider", "resistor_divider",
           ["resistor_divider.kicad_sch", "resistor_divider.kicad_pro"])


def _uuid(name: str) -> str:
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"boardready-erc-plant/{name}"))


def _wire(x1: float, y1: float, x2: float, y2: float, name: str) -> str:
    return (f"  (wire (pts (xy {x1} {y1}) (xy {x2} {y2}))\n    (stroke (width 0) (type solid) (color 0 0 0 0))\n"
            f"    (uuid {_uuid(name)})\n  )\n")


def _label(kind: str, text: str, x: float, y: float, name: str, shape: str = "") -> str:
    shape_part = f" (shape {shape})" if shape else ""
    return (f"  ({kind} \"{text}\"{shape_part} (at {x} {y} 0)\n    (effects (font (size 1.27 1.27)) (justify left bottom))\n"
            f"    (uuid {_uuid(name)})\n  )\n")


def _netclass_flag(netclass: str, x: float, y: float, name: str) -> str:
    return (f'\t(netclass_flag ""\n\t\t(length 2.54)\n\t\t(shape round)\n\t\t(at {x} {y} 0)\n'
            f'\t\t(effects\n\t\t\t(font\n\t\t\t\t(size 1.27 1.27)\n\t\t\t)\n\t\t\t(justify left bottom)\n\t\t)\n'
            f'\t\t(uuid "{_uuid(name)}")\n\t\t(property "Netclass" "{netclass}"\n\t\t\t(at {x} {y - 2.54} 0)\n'
            f'\t\t\t(effects\n\t\t\t\t(font\n\t\t\t\t\t(size 1.27 1.27)\n\t\t\t\t)\n\t\t\t\t(justify left)\n'
            f'\t\t\t)\n\t\t)\n\t)\n')


def _bus_v9(x1: float, y1: float, x2: float, y2: float, name: str) -> str:
    return (f"\t(bus\n\t\t(pts\n\t\t\t(xy {x1} {y1}) (xy {x2} {y2})\n\t\t)\n\t\t(stroke\n\t\t\t(width 0)\n"
            f"\t\t\t(type default)\n\t\t)\n\t\t(uuid \"{_uuid(name)}\")\n\t)\n")


def _label_v9(text: str, x: float, y: float, name: str) -> str:
    return (f"\t(label \"{text}\"\n\t\t(at {x} {y} 0)\n\t\t(effects\n\t\t\t(font\n\t\t\t\t(size 1.27 1.27)\n"
            f"\t\t\t)\n\t\t\t(justify left bottom)\n\t\t)\n\t\t(uuid \"{_uuid(name)}\")\n\t)\n")


def _bus_entry_v9(x: float, y: float, name: str) -> str:
    return (f"\t(bus_entry\n\t\t(at {x} {y})\n\t\t(size 2.54 2.54)\n\t\t(stroke\n\t\t\t(width 0)\n"
            f"\t\t\t(type default)\n\t\t)\n\t\t(uuid \"{_uuid(name)}\")\n\t)\n")


def _wire_v9(x1: float, y1: float, x2: float, y2: float, name: str) -> str:
    return (f"\t(wire\n\t\t(pts\n\t\t\t(xy {x1} {y1}) (xy {x2} {y2})\n\t\t)\n\t\t(stroke\n\t\t\t(width 0)\n"
            f"\t\t\t(type default)\n\t\t)\n\t\t(uuid \"{_uuid(name)}\")\n\t)\n")


def _hier_label_v9(text: str, x: float, y: float, name: str) -> str:
    return (f"\t(hierarchical_label \"{text}\"\n\t\t(shape input)\n\t\t(at {x} {y} 0)\n\t\t(effects\n\t\t\t(font\n"
            f"\t\t\t\t(size 1.27 1.27)\n\t\t\t)\n\t\t\t(justify left)\n\t\t)\n\t\t(uuid \"{_uuid(name)}\")\n\t)\n")


def _delete_v9_symbol(text: str, unit_line: str) -> str:
    """Delete the tab-indented (symbol ...) placement whose lines include ``unit_line``."""
    at = text.index(unit_line)
    start = text.rindex("\n\t(symbol\n", 0, at) + 1
    end = text.index("\n\t)\n", at) + len("\n\t)\n")
    return text[:start] + text[end:]


def _insert_v9(text: str, addition: str) -> str:
    at = text.rindex("\n\t(sheet_instances")
    return text[:at + 1] + addition + text[at + 1:]


def _insert_before_sheet_instances(text: str, addition: str) -> str:
    """New items go before (sheet_instances ...), or a sub-sheet's closing parenthesis."""
    marker = "\n  (sheet_instances"
    at = text.find(marker)
    if at < 0:
        at = text.rstrip().rindex("\n)")
    return text[:at + 1] + addition + text[at + 1:]


def _delete_block(text: str, first_line: str) -> str:
    """Delete the two-space-indented list that starts with ``first_line`` (through its closing line)."""
    start = text.index(first_line)
    end = text.index("\n  )\n", start) + len("\n  )\n")
    return text[:start] + text[end:]


def _delete_line(text: str, line_start: str) -> str:
    start = text.index(line_start)
    end = text.index("\n", start) + 1
    return text[:start] + text[end:]


# name -> (source, file edited, edit, what was planted, what KiCad 9 says)
PLANTS = {
    "power-not-driven": (
        ECC83, "ecc83-pp.kicad_sch",
        lambda t: _delete_block(t, '  (symbol (lib_id "ecc83_schlib:PWR_FLAG") (at 53.34 55.88 270)'),
        "the PWR_FLAG #FLG at (53.34, 55.88) on the GND net deleted",
        "power_pin_not_driven: GND's power inputs have no power output"),
    "unconnected-pin": (
        ECC83, "ecc83-pp.kicad_sch",
        lambda t: _delete_line(t, "  (no_connect (at 154.94 177.8)"),
        "the no-connect flag on pin 1 of P? at (154.94, 177.8) deleted",
        "pin_not_connected"),
    "dangling-label": (
        ECC83, "ecc83-pp.kicad_sch",
        lambda t: _insert_before_sheet_instances(t, _label("label", "PLANTED_LABEL", 101.6, 149.86, "dangling-label")),
        "a local label PLANTED_LABEL at (101.6, 149.86), on nothing",
        "label_dangling"),
    "wire-stub": (
        ECC83, "ecc83-pp.kicad_sch",
        lambda t: _insert_before_sheet_instances(t, _wire(101.6, 160.02, 111.76, 160.02, "wire-stub")),
        "a wire from (101.6, 160.02) to (111.76, 160.02) touching nothing",
        "wire_dangling, and unconnected_wire_endpoint at both ends"),
    "two-net-names": (
        ECC83, "ecc83-pp.kicad_sch",
        lambda t: _insert_before_sheet_instances(
            t, _label("label", "PLANTED_A", 190.5, 76.2, "two-net-names-a")
            + _label("label", "PLANTED_B", 193.04, 76.2, "two-net-names-b")),
        "labels PLANTED_A and PLANTED_B on the wire (185.42, 76.2)-(198.12, 76.2)",
        "multiple_net_names (a warning in KiCad 9)"),
    "hier-label-without-pin": (
        HIERARCHY, "ampli_ht.kicad_sch",
        lambda t: _insert_before_sheet_instances(
            t, _label("hierarchical_label", "PLANTED_IN", 50.8, 190.5, "hier-label-without-pin", "input")),
        "a hierarchical label PLANTED_IN in ampli_ht.kicad_sch (used by two sheets), no sheet pin for it",
        "hier_label_mismatch on each of the two sheets, label_dangling"),
    "outputs-shorted": (
        GATES, "multi_unit_7400.kicad_sch",
        lambda t: t[:t.rindex("\n\t(sheet_instances")] + "\n" + _wire(119.38, 41.91, 119.38, 58.42, "outputs-shorted")
        .replace("  ", "\t") + t[t.rindex("\n\t(sheet_instances") + 1:],
        "a wire from the output of gate A (pin 3, (119.38, 41.91)) to the output of gate B (pin 6, (119.38, 58.42))",
        "pin_to_pin error: Output and Output connected"),
    "undefined-netclass": (
        DIVIDER, "resistor_divider.kicad_sch",
        lambda t: _insert_v9(t, _netclass_flag("Planted_Fast", 95.25, 81.28, "undefined-netclass")),
        "a netclass directive naming the class Planted_Fast (not defined) on the wire (100.33, 81.28)-(91.44, 81.28)",
        "undefined_netclass"),
    "missing-unit": (
        ECC83, "ecc83-pp.kicad_sch",
        lambda t: _delete_block(t, '  (symbol (lib_id "ecc83_schlib:ECC83") (at 63.5 74.93 0) (unit 3)'),
        "unit 3 (the heater) of U1, an ECC83, deleted",
        "missing_unit (and what the unplaced unit's pins need)"),
    "no-connect-dangling": (
        ECC83, "ecc83-pp.kicad_sch",
        lambda t: _insert_before_sheet_instances(
            t, f"  (no_connect (at 101.6 170.18) (uuid {_uuid('no-connect-dangling')}))\n"),
        "a no-connect flag at (101.6, 170.18), on nothing", "no_connect_dangling"),
    "similar-labels": (
        ECC83, "ecc83-pp.kicad_sch",
        lambda t: _insert_before_sheet_instances(
            t, _label("label", "planted_sig", 190.5, 76.2, "similar-labels-a")
            + _label("label", "PLANTED_SIG", 86.36, 52.07, "similar-labels-b")),
        "labels planted_sig and PLANTED_SIG on two different wires", "similar_labels"),
    "duplicate-sheet-names": (
        HIERARCHY, "complex_hierarchy.kicad_sch",
        lambda t: t.replace('(property "Sheet name" "ampli_ht_horizontal"', '(property "Sheet name" "AMPLI_HT_vertical"', 1),
        "the second sheet renamed AMPLI_HT_vertical, the first's name but for case",
        "duplicate_sheet_names"),
    "power-unit-missing": (
        GATES, "multi_unit_7400.kicad_sch",
        lambda t: _delete_v9_symbol(t, "\t\t(at 111.76 111.76 0)\n\t\t(unit 5)"),
        "unit E (the power unit, VCC and GND) of U1, a 7400, deleted",
        "missing_unit, missing_power_pin"),
    "net-label-on-bus": (
        DIVIDER, "resistor_divider.kicad_sch",
        lambda t: _insert_v9(t, _bus_v9(120.65, 60.96, 135.89, 60.96, "net-label-on-bus")
                             + _label_v9("PLANTED_NET", 125.73, 60.96, "net-label-on-bus-label")),
        "a bus from (120.65, 60.96) to (135.89, 60.96) carrying only a net label PLANTED_NET",
        "bus_to_net_conflict"),
    "net-not-bus-member": (
        DIVIDER, "resistor_divider.kicad_sch",
        lambda t: _insert_v9(t, _bus_v9(120.65, 60.96, 135.89, 60.96, "net-not-bus-member")
                             + _label_v9("PLANTED{A B}", 120.65, 60.96, "net-not-bus-member-bus-label")
                             + _bus_entry_v9(123.19, 60.96, "net-not-bus-member-entry-1")
                             + _wire_v9(125.73, 63.5, 125.73, 68.58, "net-not-bus-member-wire-1")
                             + _label_v9("PLANTED.C", 125.73, 68.58, "net-not-bus-member-outsider")),
        "a bus PLANTED{A B} from (120.65, 60.96) to (135.89, 60.96) with a bus entry at (123.19, 60.96) to a "
        "wire labelled PLANTED.C, not a member (KiCad 9.0.8 says nothing when the label is PLANTED.A)",
        "net_not_bus_member (a warning in KiCad 9) for PLANTED.C"),
    "bus-two-names": (
        DIVIDER, "resistor_divider.kicad_sch",
        lambda t: _insert_v9(t, _bus_v9(120.65, 60.96, 135.89, 60.96, "bus-two-names")
                             + _label_v9("PLANTED[0..3]", 123.19, 60.96, "bus-two-names-label")
                             + _hier_label_v9("OTHER[0..3]", 135.89, 60.96, "bus-two-names-hier")),
        "a bus from (120.65, 60.96) to (135.89, 60.96) named by a label PLANTED[0..3] and a hierarchical "
        "label OTHER[0..3] (no member in common)",
        "multiple_net_names (a warning) for the two bus names, and pin_not_connected for the root's "
        "hierarchical label"),
}


def plant(out: Path, name: str) -> Path:
    (source, stem, files), edited, edit, _planted, _expected = PLANTS[name]
    folder = out / name
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    for file in files:
        shutil.copy2(source / file, folder / file)
    target = folder / edited
    target.write_text(edit(target.read_text(encoding="utf-8")), encoding="utf-8")
    return folder / f"{stem}.kicad_sch"


def kicad_erc(schematic: Path) -> None:
    """KiCad's report on a scratch copy (kicad-cli may touch the project file), written beside it."""
    scratch = schematic.parent.parent / f".{schematic.parent.name}-scratch"
    shutil.copytree(schematic.parent, scratch)
    try:
        report = scratch / "kicad-erc.json"
        subprocess.run(["kicad-cli", "sch", "erc", "--format", "json", "--severity-all", "--units", "mm",
                        "-o", str(report), str(scratch / schematic.name)], check=False, capture_output=True,
                       timeout=600)
        data = json.loads(report.read_text(encoding="utf-8"))
        data.pop("date", None)          # so a remake changes nothing when KiCad says the same
        (schematic.parent / "kicad-erc.json").write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    finally:
        shutil.rmtree(scratch)


def main(argv: list[str]) -> int:
    """``python -m tools.erc_planting [OUT [PLANT ...]]``: every plant, or only those named."""
    out = Path(argv[0]) if argv else ROOT / "tests" / "fixtures" / "kicad-planted-erc"
    only = set(argv[1:])
    out.mkdir(parents=True, exist_ok=True)
    listing = {}
    for name, (_source, _edited, _edit, planted, expected) in PLANTS.items():
        if not only or name in only:
            kicad_erc(plant(out, name))
        listing[name] = {"planted": planted, "expected": expected}
    (out / "plants.json").write_text(json.dumps(listing, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

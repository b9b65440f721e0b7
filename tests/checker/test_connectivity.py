"""The schematic connectivity model: where pins land, what drawing joins, what names join."""
from __future__ import annotations

import json
import shutil

from checker.runner import RunOptions, check
from tools import erc_compare

from checker_fixtures import KICAD

DIVIDER = KICAD / "v9/kicad_sch_api_reference_projects/resistor_divider"


def _run(pro):
    return check(RunOptions(path=pro, root=pro.parent, run_kicad_cli=False))


def test_pins_land_where_kicad_reports_them():
    # Every pin KiCad names in a committed report (rotated, mirrored, multi-unit symbols of KiCad 6
    # and 9 files) is where the model places the pin with that uuid.
    compared = 0
    for pro in erc_compare.projects():
        report = erc_compare.report_for(pro)
        if report is None:
            continue
        places = {}
        for sheet in json.loads(report.read_text(encoding="utf-8"))["sheets"]:
            for violation in sheet["violations"]:
                for item in violation["items"]:
                    if item["description"].startswith("Symbol ") and " Pin " in item["description"]:
                        places[item["uuid"]] = (item["pos"]["x"] * 100, item["pos"]["y"] * 100)
        if not places:
            continue
        graph = _run(pro).models[0].schematic.connectivity
        for sub in graph.subgraphs:
            for item in sub.items:
                if item.kind == "pin" and item.uuid in places:
                    x, y = places[item.uuid]
                    assert abs(item.position[0] / 10_000 - x) < 0.001 and abs(item.position[1] / 10_000 - y) < 0.001, \
                        (pro.name, item.uuid, item.position, (x, y))
                    compared += 1
    assert compared > 40


def _divider_with(tmp_path, edit):
    for name in ("resistor_divider.kicad_sch", "resistor_divider.kicad_pro"):
        shutil.copy2(DIVIDER / name, tmp_path / name)
    schematic = tmp_path / "resistor_divider.kicad_sch"
    schematic.write_text(edit(schematic.read_text(encoding="utf-8")), encoding="utf-8")
    return _run(tmp_path / "resistor_divider.kicad_pro")


def _types(outcome):
    return sorted(f.kicad_type for f in outcome.findings if f.rule_id.startswith("erc."))


def test_a_label_in_the_middle_of_a_wire_names_it(tmp_path):
    moved = _divider_with(tmp_path, lambda t: t.replace("(at 100.33 81.28 0)", "(at 95.25 81.28 0)", 1))
    # The wire end the label left touches nothing now; the label still names the wire.
    assert _types(moved) == ["power_pin_not_driven"] * 2 + ["unconnected_wire_endpoint"]
    graph = moved.models[0].schematic.connectivity
    [vout] = [net for net in graph.nets if any(i.text == "VOUT" for s in net.subgraphs for i in s.items)]
    assert sorted(graph.reference(pin, instance) for pin, instance in vout.pins) == ["R1", "R2"]


def test_a_wire_ending_in_the_middle_of_another_does_not_join_it(tmp_path):
    stub = ('\t(wire\n\t\t(pts\n\t\t\t(xy 95.25 88.9) (xy 95.25 81.28)\n\t\t)\n\t\t(stroke\n\t\t\t(width 0)\n'
            '\t\t\t(type default)\n\t\t)\n\t\t(uuid "7d0b1e52-5c55-4b8e-a1a4-2f0f3c1d0a01")\n\t)\n')
    outcome = _divider_with(tmp_path, lambda t: t.replace("\n\t(sheet_instances", "\n" + stub + "\t(sheet_instances", 1))
    assert _types(outcome) == ["power_pin_not_driven"] * 2 + ["unconnected_wire_endpoint"] * 2 + ["wire_dangling"]


def test_items_stacked_on_one_point_cost_no_quadratic_work(tmp_path):
    # A hostile schematic: thousands of labels on one point where thousands of wires meet. Every
    # label is on a wire and the net has no pin, so each is a dangling label, as KiCad says.
    from checker import erc
    from checker.limits import DEFAULT_LIMITS
    from checker.project import InputReader
    from checker.schematic import load_schematic

    count = 4000
    parts = ['(kicad_sch (version 20250114) (generator "eeschema") (uuid "11111111-1111-1111-1111-111111111111") '
             '(paper "A4") (lib_symbols)']
    for i in range(count):
        parts.append(f'(label "L{i % 7}" (at 10 10 0) (uuid "00000000-0000-0000-0000-{i:012d}"))')
        parts.append(f'(wire (pts (xy 10 10) (xy {20 + i % 50} 10)) (uuid "10000000-0000-0000-0000-{i:012d}"))')
    (tmp_path / "stacked.kicad_sch").write_text("\n".join(parts) + ")", encoding="utf-8")
    schematic = load_schematic(tmp_path / "stacked.kicad_sch", InputReader(tmp_path, DEFAULT_LIMITS), "stacked")
    findings = erc.run(schematic, {})
    kinds = {f.kicad_type for f in findings}
    assert len([f for f in findings if f.kicad_type == "label_dangling"]) == count
    assert "multiple_net_names" in kinds and len(schematic.connectivity.nets) == 1


def test_a_labels_netclass_field_names_a_class_the_project_must_define(tmp_path):
    # KiCad 9.0.8 says undefined_netclass for this label (checked with kicad-cli by hand).
    field = ('\n\t\t(property "Netclass" "Planted_Label_Class"\n\t\t\t(at 100.33 78.74 0)\n\t\t\t(effects\n'
             '\t\t\t\t(font\n\t\t\t\t\t(size 1.27 1.27)\n\t\t\t\t)\n\t\t\t)\n\t\t)')

    def add_field(text):
        start = text.index('\t(label "VOUT"')
        end = text.index("\n\t)\n", start)
        return text[:end] + field + text[end:]

    outcome = _divider_with(tmp_path, add_field)
    [finding] = [f for f in outcome.findings if f.kicad_type == "undefined_netclass"]
    assert "Planted_Label_Class" in finding.message and finding.severity == "error"
    label = next(i for s in outcome.models[0].schematic.connectivity.subgraphs for i in s.items if i.text == "VOUT")
    assert finding.uuids == [label.uuid]


def test_slanted_wires_are_found_through_their_grid_as_by_testing_every_one():
    # Slanted wires are bucketed along their length (a hostile file with many of them must not
    # make every label scan every wire); the answers must be those of testing each wire in file order.
    import random

    from checker.connectivity import Item, SegmentIndex, _on_segment

    rng = random.Random(27)
    wires = []
    for i in range(1500):
        a = (rng.randint(-200_000, 200_000), rng.randint(-200_000, 200_000))
        b = (a[0] + rng.choice((-1, 1)) * rng.randint(1, 60_000), a[1] + rng.choice((-1, 1)) * rng.randint(1, 60_000))
        wires.append(Item("wire", f"w{i}", (a, b), None))
    wires += [Item("wire", f"long{i}", ((-10**6, -10**6 + 777 * i), (10**6, 10**6 - 333 * i)), None) for i in range(10)]
    index = SegmentIndex(wires)
    points = []
    for wire in rng.sample(wires, 600):
        (ax, ay), (bx, by) = wire.points
        t = rng.random()
        points.append((round(ax + t * (bx - ax)) + rng.randint(-1, 1), round(ay + t * (by - ay)) + rng.randint(-1, 1)))
    points += [(rng.randint(-200_000, 200_000), rng.randint(-200_000, 200_000)) for _ in range(600)]
    on_some = 0
    for point in points:
        hits = [wire for wire in wires if _on_segment(point, *wire.points)]
        assert index.first(point) is (hits[0] if hits else None)
        assert set(map(id, index.at(point, limit=100))) == set(map(id, hits))
        on_some += bool(hits)
    assert on_some >= 300          # many sampled points do lie on wires (a unit off may be off it)
    assert sum(map(len, index.diagonals.cells.values())) < 20 * len(index.other)   # buckets stay linear

"""Shorts and edge clearance over all copper (tracks, vias, pads, zone fills), and
schematic/board parity paired by symbol path, on variants of real fixture boards."""
from __future__ import annotations

import re

import numpy as np
import pytest
import shapely
from hypothesis import given, settings
from hypothesis import strategies as st

from checker.copper import ARC, TRACK, components
from checker.rules import copper_rules
from checker.runner import RunOptions, check

from checker_fixtures import FIXTURES, KICAD


def _findings(folder, rule_id, board_file=None):
    outcome = check(RunOptions(path=folder, run_kicad_cli=False))
    return [f for f in outcome.findings if f.rule_id == rule_id and (board_file is None or f.path == board_file)]


def _edit(path, old, new, count=1):
    text = path.read_text()
    assert text.count(old) >= count, f"fixture changed: {old!r} not found"
    path.write_text(text.replace(old, new))


def test_edge_clearance_covers_pads_and_zone_fills_grouped_by_net(copy_project):
    folder = copy_project("v6/ecc83")
    board = "ecc83-pp.kicad_pcb"
    assert _findings(folder, "board.edge-clearance", board) == []
    # Pull the right-hand board edge in from x=173.355 to x=172.3: the two 5.6 mm
    # mounting-hole pads (P6, P7, right side at x=172.345, no net) now cross it, and the
    # GND pour on B.Cu (filled up to x=172.085) is 0.215 mm from it. No track
    # comes closer than 7 mm, so only pads and the zone can be reported.
    _edit(folder / board, "173.355", "172.3", count=3)
    found = sorted(_findings(folder, "board.edge-clearance", board), key=lambda f: f.message)
    assert [f.message for f in found] == [
        "1 copper item(s) of net GND (zone fill) closer to the board edge than 0.3 mm (generic's minimum); "
        "closest: zone fill at 0.215 mm on B.Cu (refill the zone, or widen its clearance)",
        "2 copper item(s) of net (no net) (pad) closer to the board edge than 0.01 mm (the board's own "
        "minimum); closest: pad 1 of P6 at 0 mm on F.Cu",
    ]
    # Pads across the edge break the board's own rule (KiCad's copper_edge_clearance, an error there);
    # the fill only the generic number (medium, beyond KiCad).
    assert [f.severity for f in found] == ["medium", "error"]
    assert [f.kicad_type for f in found] == ["", "copper_edge_clearance"]
    assert all(f.to_json()["x"] > 172 for f in found)


def test_edge_connector_castellated_and_edge_mount_copper_is_not_reported(copy_project):
    folder = copy_project("v6/ecc83")
    board = folder / "ecc83-pp.kicad_pcb"
    _edit(board, "173.355", "172.3", count=3)
    text = board.read_text()
    start, end = _footprint_block(text, "P6")
    board.write_text(text[:start] + text[start:end].replace('(footprint "', '(footprint "EdgeMount:', 1) + text[end:])
    messages = [f.message for f in _findings(folder, "board.edge-clearance", "ecc83-pp.kicad_pcb")]
    assert any(m.startswith("1 copper item(s) of net (no net) (pad)") and "P7" in m for m in messages)


def test_a_cutout_inside_a_stale_zone_fill_is_reported(copy_project):
    folder = copy_project("v6/ecc83")
    board = "ecc83-pp.kicad_pcb"
    # A 1 mm round cutout at (152, 99), more than 2.5 mm inside the saved GND
    # fill: no fill edge is near it, only the fill's inside can see it.
    _edit(folder / board, '  (gr_line (start 173.355 90.17)',
          '  (gr_circle (center 152 99) (end 152.5 99) (layer "Edge.Cuts") (width 0.1) '
          '(fill none) (tstamp 11111111-2222-3333-4444-555555555555))\n  (gr_line (start 173.355 90.17)')
    zone = [f for f in _findings(folder, "board.edge-clearance", board) if "zone fill at 0 mm" in f.message]
    assert len(zone) == 1 and "net GND" in zone[0].message


def test_a_track_over_a_pad_of_another_net_is_a_short(copy_project):
    folder = copy_project("v6/ecc83")
    board = "ecc83-pp.kicad_pcb"
    assert _findings(folder, "board.short", board) == []
    # The track that ends on R4 pad 1 (its own net) is stretched down to R4 pad 2, a GND pad.
    _edit(folder / board, "(segment (start 159.385 117.475) (end 164.465 117.475)",
          "(segment (start 159.385 117.475) (end 164.465 125.095)")
    shorts = [f.message for f in _findings(folder, "board.short", board)]
    # One finding for the track (KiCad reports one error per track); it lists its other places.
    assert any(m.startswith("track of net Net-(P1-Pad2) touches pad 2 of R4 of net GND on B.Cu (a short)")
               for m in shorts)
    assert not any("pad 1 of R4" in message for message in shorts)  # its own net


def test_a_via_moved_onto_a_track_of_another_net_takes_its_net_as_kicad_does(copy_project):
    folder = copy_project("v6/pic_programmer")
    assert _findings(folder, "board.short") == []
    # A /CLOCK-RB6 via moved off its tracks onto the vertical /pic_sockets/VCC_PIC track at
    # x=196.85 (B.Cu). Its cluster has only VCC_PIC pads, so KiCad 9 gives it that net on load:
    # kicad-cli 9.0.8 names it "Via [/pic_sockets/VCC_PIC]", reports no short with the track,
    # a clearance error (actual 0) with the GND fill it was moved into, and via_dangling.
    _edit(folder / "pic_programmer.kicad_pcb", "(via (at 189.865 110.49)", "(via (at 196.85 110)")
    shorts = [f for f in _findings(folder, "board.short") if "via" in f.message]
    assert [f.message for f in shorts] == [
        "via of net /pic_sockets/VCC_PIC touches zone fill of net GND on B.Cu (a short)"]
    assert shorts[0].kicad_type == "clearance"
    [dangling] = _findings(folder, "board.dangling-via")
    assert "/pic_sockets/VCC_PIC" in dangling.message


def _footprint_block(text: str, reference: str) -> tuple[int, int]:
    at = text.index(f'(fp_text reference "{reference}" ')
    return text.rindex("(footprint ", 0, at), at


def test_a_reference_renamed_on_the_board_is_one_mismatch(copy_project):
    folder = copy_project("v6/pic_programmer")
    assert _findings(folder, "parity.missing-footprint") == _findings(folder, "parity.extra-footprint") == []
    _edit(folder / "pic_programmer.kicad_pcb", '(fp_text reference "R1" ', '(fp_text reference "R99" ')
    mismatches = _findings(folder, "parity.reference-mismatch")
    assert [f.message for f in mismatches] == ["R1 in the schematic is R99 on the board"]
    assert _findings(folder, "parity.missing-footprint") == _findings(folder, "parity.extra-footprint") == []


def test_without_a_symbol_path_footprints_pair_by_reference(copy_project):
    folder = copy_project("v6/pic_programmer")
    board = folder / "pic_programmer.kicad_pcb"
    text = board.read_text()
    start, end = _footprint_block(text, "R1")
    # R1's footprint loses its link to the symbol (as on a board placed by hand):
    # it still pairs with symbol R1 by reference, so nothing is reported...
    block = re.sub(r'\(path "[^"]*"\)', '(path "/not-a-symbol")', text[start:end])
    board.write_text(text[:start] + block + text[end:])
    assert _findings(folder, "parity.reference-mismatch") == []
    assert _findings(folder, "parity.missing-footprint") == _findings(folder, "parity.extra-footprint") == []
    # ...and renamed as well, it can only be a missing R1 plus an extra R99.
    _edit(board, '(fp_text reference "R1" ', '(fp_text reference "R99" ')
    assert [f.message.split(" ")[0] for f in _findings(folder, "parity.missing-footprint")] == ["R1"]
    assert [f.message.split(" ")[0] for f in _findings(folder, "parity.extra-footprint")] == ["R99"]
    assert _findings(folder, "parity.reference-mismatch") == []


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 40).flatmap(lambda n: st.tuples(
    st.just(n), st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=60))))
def test_islands_are_those_of_a_plain_union_find(case):
    count, pairs = case
    parent = list(range(count))

    def find(i):
        while parent[i] != i:
            i = parent[i]
        return i

    for a, b in pairs:
        ra, rb = find(a), find(b)
        parent[max(ra, rb)] = min(ra, rb)
    a = np.array([p[0] for p in pairs], dtype=np.int64)
    b = np.array([p[1] for p in pairs], dtype=np.int64)
    assert components(count, a, b).tolist() == [find(i) for i in range(count)]


@pytest.mark.parametrize("board", [
    FIXTURES / "kicad-multilayer/kit-dev-coldfire-xilinx_5213/kit-dev-coldfire-xilinx_5213.kicad_pcb",
    KICAD / "v6/flat_hierarchy/flat_hierarchy.kicad_pcb",
])
def test_track_ends_joined_by_their_exact_place_also_touch_by_geometry(board):
    # The shortcut for ends at another track's end or a via must never join an end
    # that the measured distance would leave dangling.
    copper = check(RunOptions(path=board.parent, run_kicad_cli=False)).models[0].copper
    tracks = np.flatnonzero((copper.kind == TRACK) | (copper.kind == ARC))
    ends = np.concatenate([copper.anchor[tracks], shapely.get_coordinates(shapely.get_point(copper.core[tracks], -1))])
    end_item = np.concatenate([tracks, tracks])
    shortcut = copper_rules._on_a_track_end_or_via(copper, ends, end_item)
    measured = np.zeros(len(ends), dtype=bool)
    copper_rules._touching_copper(copper, ends, end_item, np.arange(len(ends)), measured)
    assert shortcut.sum() > len(ends) / 2
    assert not (shortcut & ~measured).any()

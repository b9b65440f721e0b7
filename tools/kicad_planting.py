"""Plant one copper defect in each copy of a real fixture board, with KiCad's own pcbnew.

Run with the Python that has KiCad 6's ``pcbnew`` module (Debian: ``apt-get
install kicad``, then ``/usr/bin/python3 -m tools.kicad_planting OUT``); it is
never imported by the checker or the tests. For every plant it loads
``tests/fixtures/kicad/v6/ecc83/ecc83-pp.kicad_pcb`` (KiCad 6 demo, GPL-2+),
makes the one edit below through pcbnew's API, saves the board with its
project file into ``OUT/<plant>/`` and writes KiCad's DRC report beside it
(``drc.rpt``, ``pcbnew.WriteDRCReport``, all track errors). The committed
copies live in ``tests/fixtures/kicad-planted/`` and ``bin/test`` checks the
checker against those reports without KiCad.

Coordinates are millimetres on the board (ecc83-pp routes on B.Cu with 0.8 mm
tracks; net class Default clearance 0.4 mm, GND zone clearance 0.635 mm,
board minimum track width 0.2 mm, hole-to-hole minimum 0.25 mm).
"""
from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / "tests" / "fixtures" / "kicad" / "v6" / "ecc83"
BOARD = "ecc83-pp.kicad_pcb"
PROJECT = "ecc83-pp.kicad_pro"

# name -> (what is planted, what KiCad and the checker should say)
PLANTS = {
    "clean": ("nothing: the board as pcbnew loads and saves it", "no copper finding"),
    "track-clearance": ("a 0.8 mm stub of Net-(C2-Pad2) from (137.16, 118) to (136.404, 118): its end is "
                        "0.095 mm from the Net-(R1-Pad1) track at x = 135.509 (rule 0.4 mm)",
                        "clearance 0.095 mm, and the stub's end dangles"),
    "tracks-crossing": ("a 0.8 mm stub of Net-(C2-Pad2) from (137.16, 118) to (134.9, 118), across the "
                        "Net-(R1-Pad1) track", "a short between the two nets' tracks, and a dangling end"),
    "via-on-pad": ("a 1.9/1.0 mm via of Net-(R1-Pad1) at (135.509, 120.095) on that net's track, overlapping "
                   "pad 2 of C2 (Net-(C2-Pad2))", "a short between the via and the pad"),
    "pads-overlap": ("pad 8 of U1 (Net-(C2-Pad2)) made a 2.03 x 3.8 mm oval with its copper offset 0.85 mm "
                     "toward pad 7 (Net-(R1-Pad1)), which it now overlaps", "a short between the two pads"),
    "track-through-zone": ("a 0.8 mm Net-(C1-Pad1) track from pad 6 of U1 (145.765, 108.955) to pad 1 of C1 "
                           "(141.605, 99.695) across the GND fill, not refilled", "a short with the GND zone fill"),
    "unrouted": ("the Net-(C2-Pad2) segment (137.16, 115.57)-(143.49984, 115.57) deleted",
                 "Net-(C2-Pad2) unconnected, two dangling ends"),
    "narrow-track": ("the Net-(R2-Pad1) segment (156.21, 95.885)-(156.21, 110.5) made 0.18 mm wide "
                     "(board minimum 0.2 mm)", "track width 0.18 mm below 0.2 mm"),
    "hole-near-hole": ("a 0.8/0.4 mm via of Net-(C2-Pad2) at (142.85, 115.57) on that net's track, its hole "
                       "0.059 mm from the 1.02 mm hole of pad 8 of U1", "holes too close (minimum 0.25 mm)"),
    "pad-clearance": ("a 0.8 mm stub of Net-(R1-Pad1) from (135.509, 120.095) to (135.76, 120.095), 0.2 mm "
                      "from pad 2 of C2 (Net-(C2-Pad2))", "clearance 0.2 mm (rule 0.4 mm)"),
}


def _mm(pcbnew, value: float) -> int:
    return pcbnew.FromMM(value)


def _point(pcbnew, x: float, y: float):
    return pcbnew.wxPoint(_mm(pcbnew, x), _mm(pcbnew, y))


def _net(board, name: str):
    net = board.FindNet(name)
    assert net is not None, f"no net {name} on the board"
    return net


def _add_track(pcbnew, board, net: str, start, end, width: float = 0.8, layer: str = "B.Cu"):
    track = pcbnew.PCB_TRACK(board)
    track.SetStart(_point(pcbnew, *start))
    track.SetEnd(_point(pcbnew, *end))
    track.SetWidth(_mm(pcbnew, width))
    track.SetLayer(board.GetLayerID(layer))
    track.SetNet(_net(board, net))
    board.Add(track)


def _add_via(pcbnew, board, net: str, at, diameter: float, drill: float):
    via = pcbnew.PCB_VIA(board)
    via.SetPosition(_point(pcbnew, *at))
    via.SetWidth(_mm(pcbnew, diameter))
    via.SetDrill(_mm(pcbnew, drill))
    via.SetNet(_net(board, net))
    board.Add(via)


def _segment(pcbnew, board, start, end):
    """The track segment with these ends (either way round)."""
    wanted = {(_mm(pcbnew, start[0]), _mm(pcbnew, start[1])), (_mm(pcbnew, end[0]), _mm(pcbnew, end[1]))}
    for track in board.GetTracks():
        if track.GetClass() != "PCB_TRACK":
            continue
        ends = {(track.GetStart().x, track.GetStart().y), (track.GetEnd().x, track.GetEnd().y)}
        if all(min(abs(a[0] - b[0]) + abs(a[1] - b[1]) for b in ends) <= 2 for a in wanted):
            return track
    raise AssertionError(f"no segment {start}-{end}")


def _pad(board, reference: str, number: str):
    footprint = board.FindFootprintByReference(reference)
    assert footprint is not None, reference
    for pad in footprint.Pads():
        if pad.GetNumber() == number:
            return pad
    raise AssertionError(f"no pad {number} on {reference}")


def plant(pcbnew, board, name: str) -> None:
    if name == "clean":
        return
    if name == "track-clearance":
        _add_track(pcbnew, board, "Net-(C2-Pad2)", (137.16, 118.0), (136.404, 118.0))
    elif name == "tracks-crossing":
        _add_track(pcbnew, board, "Net-(C2-Pad2)", (137.16, 118.0), (134.9, 118.0))
    elif name == "via-on-pad":
        _add_via(pcbnew, board, "Net-(R1-Pad1)", (135.509, 120.095), 1.9, 1.0)
    elif name == "pads-overlap":
        pad = _pad(board, "U1", "8")
        assert pad.GetOrientation() == 0, "the offset below assumes an unrotated pad"
        pad.SetShape(pcbnew.PAD_SHAPE_OVAL)
        pad.SetSize(pcbnew.wxSize(_mm(pcbnew, 2.03), _mm(pcbnew, 3.8)))
        pad.SetOffset(_point(pcbnew, 0.0, -0.85))
    elif name == "track-through-zone":
        _add_track(pcbnew, board, "Net-(C1-Pad1)", (145.765, 108.955), (141.605, 99.695))
    elif name == "unrouted":
        board.Remove(_segment(pcbnew, board, (137.16, 115.57), (143.49984, 115.57)))
    elif name == "narrow-track":
        _segment(pcbnew, board, (156.21, 95.885), (156.21, 110.5)).SetWidth(_mm(pcbnew, 0.18))
    elif name == "hole-near-hole":
        _add_via(pcbnew, board, "Net-(C2-Pad2)", (142.85, 115.57), 0.8, 0.4)
    elif name == "pad-clearance":
        _add_track(pcbnew, board, "Net-(R1-Pad1)", (135.509, 120.095), (135.76, 120.095))
    else:
        raise KeyError(name)


def main(argv: list[str]) -> int:
    import pcbnew  # KiCad 6's scripting module: only here, never in the checker

    out = Path(argv[0]) if argv else ROOT / "tests" / "fixtures" / "kicad-planted"
    names = argv[1:] or list(PLANTS)
    manifest = {}
    for name in names:
        folder = out / name
        folder.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(SOURCE / PROJECT, folder / PROJECT)
        board = pcbnew.LoadBoard(str(SOURCE / BOARD))
        plant(pcbnew, board, name)
        target = folder / BOARD
        pcbnew.SaveBoard(str(target), board)
        # Reload what was saved, as anyone reading the committed file would.
        saved = pcbnew.LoadBoard(str(target))
        report = folder / "drc.rpt"
        pcbnew.WriteDRCReport(saved, str(report), pcbnew.EDA_UNITS_MILLIMETRES, True)
        # KiCad names the board by its absolute path: keep only the file name.
        lines = report.read_text(encoding="utf-8").splitlines(keepends=True)
        lines[0] = f"** Drc report for {BOARD} **\n"
        report.write_text("".join(lines), encoding="utf-8")
        for local in folder.glob("*.kicad_prl"):   # pcbnew's per-user view settings
            local.unlink()
        manifest[name] = {"planted": PLANTS[name][0], "expected": PLANTS[name][1]}
        print(f"{name}: {PLANTS[name][0]}")
    (out / "plants.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

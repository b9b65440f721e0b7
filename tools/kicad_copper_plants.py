"""Planted-defect boards for the copper checks, made with KiCad 9's own pcbnew.

Run with the Python that has KiCad 9's ``pcbnew`` module (Debian bookworm-backports
``kicad`` 9: ``/usr/bin/python3 -m tools.kicad_copper_plants OUT [NAME ...]``); it is never
imported by the checker or the tests. Each plant loads a real board, makes its edits
through pcbnew's API (and refills the zones with KiCad's own filler where it says so),
and saves the board with its project into ``OUT/<plant>/``. ``kicad-cli pcb drc`` then
writes ``kicad-drc.json`` beside it (bin/kicad-oracle, or the command in
tests/fixtures/kicad-planted/README.md). The committed copies live in
tests/fixtures/kicad-planted/ and the tests compare the checker with those reports
without KiCad.

Coordinates are millimetres on the board.
"""
from __future__ import annotations

import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COLDFIRE = ROOT / "tests" / "fixtures" / "kicad-multilayer" / "kit-dev-coldfire-xilinx_5213"
COLDFIRE_BOARD = "kit-dev-coldfire-xilinx_5213"
# The window of the ColdFire board the cropped plants keep: the MCU's south-west corner,
# where /AN*, /DDAT* and /IRQ* vias cross the GND (In1.Cu) and +3.3V (In2.Cu) planes.
WINDOW = (118.0, 96.0, 146.0, 124.0)


def _mm(pcbnew, value: float) -> int:
    return pcbnew.FromMM(value)


def _vec(pcbnew, x: float, y: float):
    return pcbnew.VECTOR2I(_mm(pcbnew, x), _mm(pcbnew, y))


def _inside(pcbnew, point, window) -> bool:
    x0, y0, x1, y1 = window
    return _mm(pcbnew, x0) <= point.x <= _mm(pcbnew, x1) and _mm(pcbnew, y0) <= point.y <= _mm(pcbnew, y1)


def crop(pcbnew, board, window) -> None:
    """Keep what lies in the window: footprints by position, tracks with both ends in it,
    vias in it; zones cut to the window, the outline made the window's rectangle."""
    for footprint in list(board.GetFootprints()):
        if not _inside(pcbnew, footprint.GetPosition(), window):
            board.Delete(footprint)
    for track in list(board.GetTracks()):
        if not (_inside(pcbnew, track.GetStart(), window) and _inside(pcbnew, track.GetEnd(), window)):
            board.Delete(track)
    for drawing in list(board.GetDrawings()):
        if drawing.GetLayer() == pcbnew.Edge_Cuts or not _inside(pcbnew, drawing.GetPosition(), window):
            board.Delete(drawing)
    x0, y0, x1, y1 = window
    corners = [(x0, y0), (x1, y0), (x1, y1), (x0, y1)]
    for zone in list(board.Zones()):
        outline = zone.Outline()
        outline.RemoveAllContours()
        outline.NewOutline()
        for x, y in corners:
            outline.Append(_mm(pcbnew, x), _mm(pcbnew, y))
    for (xa, ya), (xb, yb) in zip(corners, corners[1:] + corners[:1]):
        edge = pcbnew.PCB_SHAPE(board)
        edge.SetShape(pcbnew.SHAPE_T_SEGMENT)
        edge.SetLayer(pcbnew.Edge_Cuts)
        edge.SetStart(_vec(pcbnew, xa, ya))
        edge.SetEnd(_vec(pcbnew, xb, yb))
        edge.SetWidth(_mm(pcbnew, 0.15))
        board.Add(edge)


def refill(pcbnew, board) -> None:
    pcbnew.ZONE_FILLER(board).Fill(board.Zones())


def add_track(pcbnew, board, net: str, start, end, width: float, layer: str):
    track = pcbnew.PCB_TRACK(board)
    track.SetStart(_vec(pcbnew, *start))
    track.SetEnd(_vec(pcbnew, *end))
    track.SetWidth(_mm(pcbnew, width))
    track.SetLayer(board.GetLayerID(layer))
    track.SetNet(board.FindNet(net))
    board.Add(track)
    _PLANTED_NETS[track.m_Uuid.AsString()] = board.FindNet(net).GetNetCode()
    return track


# The net each planted track was given (uuid -> net code). pcbnew gives every cluster of
# touching copper one net before it saves (as it does on load), so a plant about nets that
# disagree writes them back into the saved file as planted.
_PLANTED_NETS: dict[str, int] = {}


def restore_planted_nets(path: Path) -> None:
    text = path.read_text()
    for uuid, code in _PLANTED_NETS.items():
        at = text.find(f'(uuid "{uuid}")')
        start = text.rfind("\t(segment", 0, at)
        if at < 0 or start < 0:
            continue
        block = text[start:at]
        net = block.rfind("(net ")
        end = block.index(")", net)
        text = text[:start] + block[:net] + f"(net {code})" + block[end + 1:] + text[at:]
    path.write_text(text)


def coldfire_inner_planes(pcbnew, board) -> None:
    crop(pcbnew, board, WINDOW)
    refill(pcbnew, board)


def coldfire_flashed_via(pcbnew, board) -> None:
    coldfire_inner_planes(pcbnew, board)
    # A 0.2 mm stub of /AN2 on In1.Cu from its via's centre: the via now connects on In1.Cu,
    # so KiCad flashes it there, 0.383 mm from the GND fill that was cut for its hole (0.5 mm
    # zone clearance). Not refilled.
    add_track(pcbnew, board, "/AN2", (129.54, 105.41), (129.54, 105.61), 0.2, "In1.Cu")


ECC83 = ROOT / "tests" / "fixtures" / "kicad" / "v6" / "ecc83"
ECC83_BOARD = "ecc83-pp"


def ecc83_lone_track(pcbnew, board) -> None:
    # 5 mm of Net-(C2-Pad2) on F.Cu near the top edge, touching nothing.
    add_track(pcbnew, board, "Net-(C2-Pad2)", (150.0, 92.5), (155.0, 92.5), 0.8, "F.Cu")
    refill(pcbnew, board)


def ecc83_t_junctions(pcbnew, board) -> None:
    # A Net-(R1-Pad1) track whose two ends lie on the middle of two other Net-(R1-Pad1) tracks
    # (x = 139.065 and y = 134.055312): both ends are T-junctions, nothing dangles.
    add_track(pcbnew, board, "Net-(R1-Pad1)", (139.065, 130.0), (141.5, 134.055312), 0.8, "B.Cu")
    refill(pcbnew, board)


def ecc83_track_over_edge(pcbnew, board) -> None:
    # Net-(P1-Pad2) from pad 1 of R4 (164.465, 117.475) to x = 175 on B.Cu, across the right
    # edge at x = 173.355.
    add_track(pcbnew, board, "Net-(P1-Pad2)", (164.465, 117.475), (175.0, 117.475), 0.8, "B.Cu")
    refill(pcbnew, board)


def ecc83_padless_crossings(pcbnew, board) -> None:
    # On F.Cu (no zone there, so nothing to refill), 0.25 mm wide:
    # two pad-less tracks of two nets crossing at (135, 98): KiCad 9 gives both one net;
    add_track(pcbnew, board, "Net-(R1-Pad1)", (135.0, 96.0), (135.0, 100.0), 0.25, "F.Cu")
    add_track(pcbnew, board, "Net-(C2-Pad2)", (133.0, 98.0), (137.0, 98.0), 0.25, "F.Cu")
    # and a pad-less Net-(C2-Pad2) track across a Net-(P1-Pad2) track out of pad 1 of R4:
    # it takes the pad's net.
    add_track(pcbnew, board, "Net-(P1-Pad2)", (164.465, 117.475), (170.0, 117.475), 0.25, "F.Cu")
    add_track(pcbnew, board, "Net-(C2-Pad2)", (168.0, 115.5), (168.0, 119.5), 0.25, "F.Cu")


def ecc83_footprint_checks(pcbnew, board) -> None:
    # R3's courtyard grown 1 mm to the right, over C2's (they were 0.625 mm apart); U1 (a
    # through-hole DIP) typed SMD, a check the project sets to ignore. No copper moves.
    for footprint in board.GetFootprints():
        if footprint.GetReference() == "R3":
            edge = max(max(item.GetStart().x, item.GetEnd().x) for item in footprint.GraphicalItems()
                       if item.GetLayer() == pcbnew.F_CrtYd)
            for item in footprint.GraphicalItems():
                if item.GetLayer() != pcbnew.F_CrtYd:
                    continue
                for get, put in ((item.GetStart, item.SetStart), (item.GetEnd, item.SetEnd)):
                    point = get()
                    if abs(point.x - edge) < _mm(pcbnew, 0.01):
                        put(pcbnew.VECTOR2I(point.x + _mm(pcbnew, 1.0), point.y))
        if footprint.GetReference() == "U1":
            footprint.SetAttributes(pcbnew.FP_SMD)


def ecc83_track_in_keepout(pcbnew, board) -> None:
    # A B.Cu rule area from (149, 116) to (151, 118) that allows no tracks, over the Net-(P4-Pad2)
    # track at x = 149.86; zones refilled (the rule area is one the filler respects only for pours).
    area = pcbnew.ZONE(board)
    area.SetIsRuleArea(True)
    area.SetDoNotAllowTracks(True)
    area.SetDoNotAllowVias(False)
    area.SetDoNotAllowPads(False)
    area.SetDoNotAllowCopperPour(False)
    area.SetDoNotAllowFootprints(False)
    area.SetLayer(board.GetLayerID("B.Cu"))
    outline = area.Outline()
    outline.NewOutline()
    for x, y in ((149.0, 116.0), (151.0, 116.0), (151.0, 118.0), (149.0, 118.0)):
        outline.Append(_mm(pcbnew, x), _mm(pcbnew, y))
    board.Add(area)
    refill(pcbnew, board)


PIC = ROOT / "tests" / "fixtures" / "kicad" / "v6" / "pic_programmer"
PIC_BOARD = "pic_programmer"


def pic_track_near_hole(pcbnew, board) -> None:
    # The board setup's hole clearance from 0 to 0.25 mm (saved in the project below), and a
    # 0.25 mm GND track on F.Cu whose edge passes 0.1 mm from the 4.3 mm non-plated hole of
    # P102 at (158.75, 135.89).
    board.GetDesignSettings().m_HoleClearance = _mm(pcbnew, 0.25)
    add_track(pcbnew, board, "GND", (156.0, 133.515), (161.5, 133.515), 0.25, "F.Cu")
    refill(pcbnew, board)


def ecc83_track_in_other_fill(pcbnew, board) -> None:
    # 1 mm of Net-(C2-Pad2) on B.Cu inside the GND fill, 6 mm from any other copper; not refilled.
    add_track(pcbnew, board, "Net-(C2-Pad2)", (134.0, 93.5), (135.0, 93.5), 0.25, "B.Cu")


# name -> (board folder, board name, edit, what is planted, what KiCad 9 and the checker say)
PLANTS = {
    "coldfire-inner-planes": (
        COLDFIRE, COLDFIRE_BOARD, coldfire_inner_planes,
        f"the ColdFire board cropped to the window {WINDOW} (footprints, tracks and vias in it kept, zones and "
        "outline cut to it) and its zones refilled by KiCad 9's filler: vias set to remove unused layers are "
        "not flashed on the inner planes, which keep their clearance to the via holes",
        "no clearance finding (KiCad 9: none); the cut nets are unconnected and their tracks dangle"),
    "coldfire-flashed-via": (
        COLDFIRE, COLDFIRE_BOARD, coldfire_flashed_via,
        "coldfire-inner-planes plus a 0.2 mm wide /AN2 stub on In1.Cu from (129.54, 105.41) to (129.54, 105.61), "
        "out of the /AN2 via's centre, not refilled: the via is now flashed on In1.Cu",
        "clearance between the /AN2 via (and stub) and the GND fill on In1.Cu (0.383 mm, zone clearance 0.5 mm)"),
    "ecc83-lone-track": (
        ECC83, ECC83_BOARD, ecc83_lone_track,
        "a 5 mm Net-(C2-Pad2) track on F.Cu from (150, 92.5) to (155, 92.5) touching nothing; zones refilled",
        "unconnected_items (an island of the net with no pad) and its two ends dangling"),
    "ecc83-t-junctions": (
        ECC83, ECC83_BOARD, ecc83_t_junctions,
        "a Net-(R1-Pad1) track on B.Cu from (139.065, 130) to (141.5, 134.055312), both ends on the middle of "
        "other Net-(R1-Pad1) tracks; zones refilled",
        "nothing: KiCad 9 takes an end on the middle of a track of its net as connected"),
    "ecc83-track-over-edge": (
        ECC83, ECC83_BOARD, ecc83_track_over_edge,
        "a Net-(P1-Pad2) track on B.Cu from pad 1 of R4 (164.465, 117.475) to (175, 117.475), across the "
        "right edge (x = 173.355); zones refilled",
        "copper_edge_clearance (an error), and the end beyond the edge dangles"),
    "ecc83-padless-crossings": (
        ECC83, ECC83_BOARD, ecc83_padless_crossings,
        "on F.Cu, 0.25 mm wide: a pad-less Net-(R1-Pad1) track (135, 96)-(135, 100) crossed by a pad-less "
        "Net-(C2-Pad2) track (133, 98)-(137, 98); a Net-(P1-Pad2) track from pad 1 of R4 (164.465, 117.475) to "
        "(170, 117.475) crossed by a pad-less Net-(C2-Pad2) track (168, 115.5)-(168, 119.5); not refilled",
        "no short: KiCad 9 gives each cluster of touching copper one net on load (a pad's, else its first "
        "track's), so the crossing tracks share a net; the pad-less pair is an island of that net "
        "(unconnected_items) and the loose ends dangle"),
    "ecc83-footprint-checks": (
        ECC83, ECC83_BOARD, ecc83_footprint_checks,
        "R3's front courtyard grown 1 mm to the right over C2's, and U1 (a through-hole DIP-8) typed SMD; no "
        "copper moved",
        "courtyards_overlap (R3, C2); footprint_type_mismatch (U1) is not reported: the project ignores it"),
    "ecc83-track-in-keepout": (
        ECC83, ECC83_BOARD, ecc83_track_in_keepout,
        "a B.Cu rule area (149, 116)-(151, 118) allowing no tracks, over the Net-(P4-Pad2) track at x = 149.86; "
        "zones refilled",
        "items_not_allowed for that track"),
    "ecc83-track-in-other-fill": (
        ECC83, ECC83_BOARD, ecc83_track_in_other_fill,
        "a 1 mm, 0.25 mm wide Net-(C2-Pad2) track on B.Cu from (134, 93.5) to (135, 93.5), inside the GND fill; "
        "not refilled",
        "clearance (the track on the GND fill) and unconnected_items (a pad-less island); no dangling track: "
        "KiCad 9 joins a track to the fill under it whatever its net"),
    "pic-track-near-hole": (
        PIC, PIC_BOARD, pic_track_near_hole,
        "board setup hole clearance 0.25 mm (was 0), and a 0.25 mm GND track on F.Cu from (156, 133.515) to "
        "(161.5, 133.515), 0.1 mm from the 4.3 mm non-plated hole of P102 at (158.75, 135.89); zones refilled",
        "hole_clearance (0.1 mm, rule 0.25 mm); the track's two ends dangle, and it is a GND island"),
}


def main(argv: list[str]) -> int:
    import pcbnew  # KiCad 9's module; only this tool needs it

    out = Path(argv[0])
    names = argv[1:] or list(PLANTS)
    for name in names:
        folder, board_name, edit, _, _ = PLANTS[name]
        target = out / name
        target.mkdir(parents=True, exist_ok=True)
        board = pcbnew.LoadBoard(str(folder / f"{board_name}.kicad_pcb"))
        edit(pcbnew, board)
        shutil.copy(folder / f"{board_name}.kicad_pro", target / f"{board_name}.kicad_pro")
        # SaveBoard writes the board setup back into the project file beside it.
        pcbnew.SaveBoard(str(target / f"{board_name}.kicad_pcb"), board)
        restore_planted_nets(target / f"{board_name}.kicad_pcb")
        _PLANTED_NETS.clear()
        print(f"{name}: {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

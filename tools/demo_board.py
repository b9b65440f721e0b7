"""The demo repository's content: a small KiCad 10 project (an LED blinker
board, in the format kicad-cli 10.0.7 writes) written by the project itself, so
bin/demo needs nothing from outside.
It is nearly ready: the checker finds parts without a manufacturer part number,
so the demo shows an at-risk result with line-level annotations.

The schematic and the board agree, so KiCad 10's own ERC and DRC (run by
bin/check when kicad-cli is installed) find nothing more: three nets of two
pins each, every pin labelled in the schematic and routed on the board (VIN
goes round on B.Cu through two vias). The project ignores KiCad's checks that
a footprint or symbol library is configured, because the demo repository
carries its footprints and symbols in its own files and no library tables:
on a machine without KiCad's standard libraries those checks would find
every part."""
from __future__ import annotations

import subprocess
from pathlib import Path

PROJECT = "blinky"

# KiCad rule types the project ignores (see the module's docstring).
IGNORED_DRC = ("lib_footprint_issues", "lib_footprint_mismatch")
IGNORED_ERC = ("footprint_link_issues", "lib_symbol_issues", "lib_symbol_mismatch")


def _severities(types: tuple[str, ...]) -> str:
    return ", ".join(f'"{t}": "ignore"' for t in types)


PRO = f"""{{
  "board": {{"design_settings": {{"rules": {{"min_clearance": 0.2, "min_track_width": 0.2,
    "min_via_diameter": 0.6, "min_through_hole_diameter": 0.3, "min_via_annular_width": 0.15}},
    "rule_severities": {{{_severities(IGNORED_DRC)}}}}}}},
  "erc": {{"rule_severities": {{{_severities(IGNORED_ERC)}}}}},
  "meta": {{"filename": "blinky.kicad_pro", "version": 3}},
  "net_settings": {{"classes": [{{"name": "Default", "clearance": 0.2, "track_width": 0.25,
    "via_diameter": 0.6, "via_drill": 0.3}}]}},
  "sheets": [["00000000-0000-0000-0000-00000000b11e", "Root"]]
}}
"""

# (reference, value, lib_id, footprint, uuid, schematic x, MPN, nets of pin 1 and pin 2)
# J1 brings VIN and GND; VIN -> R1 -> LED_A -> D1 (pin 2 anode, pin 1 cathode) -> GND.
PARTS = [
    ("R1", "330", "Device:R", "Resistor_SMD:R_0603_1608Metric", "00000000-0000-0000-0000-0000000000a1", 101.6,
     "RC0603FR-07330RL", ("VIN", "LED_A")),
    ("D1", "LED_Red", "Device:LED", "LED_SMD:LED_0603_1608Metric", "00000000-0000-0000-0000-0000000000a2", 121.92, None,
     ("GND", "LED_A")),
    ("J1", "Conn_01x02", "Connector_Generic:Conn_01x02",
     "Connector_PinHeader_2.54mm:PinHeader_1x02_P2.54mm_Vertical", "00000000-0000-0000-0000-0000000000a3", 81.28, None,
     ("GND", "VIN")),
]
NETS = ("GND", "VIN", "LED_A")   # the board calls them by the schematic's names: "/GND"
SYMBOL_Y = 50.8   # symbols and pins on the 1.27 mm connection grid
PIN_OFFSET = 3.81   # pin 1 above the symbol's origin, pin 2 below


def _lib_symbol(lib_id: str, reference: str) -> str:
    """A two-pin symbol (pin 1 on top, pin 2 below): enough for ERC and parity to see the pins."""
    name = lib_id.split(":")[1]
    pins = "".join(f"""
      (pin passive line (at 0 {y} {angle}) (length 1.27)
        (name "~" (effects (font (size 1.27 1.27))))
        (number "{number}" (effects (font (size 1.27 1.27)))))"""
                   for number, y, angle in (("1", PIN_OFFSET, 270), ("2", -PIN_OFFSET, 90)))
    return f"""    (symbol "{lib_id}" (pin_names (offset 0)) (exclude_from_sim no) (in_bom yes) (on_board yes)
      (property "Reference" "{reference}" (at 2.032 0 90) (effects (font (size 1.27 1.27))))
      (property "Value" "{name}" (at 0 0 90) (effects (font (size 1.27 1.27))))
      (property "Footprint" "" (at 0 0 0) (effects (font (size 1.27 1.27)) (hide yes)))
      (property "Datasheet" "~" (at 0 0 0) (effects (font (size 1.27 1.27)) (hide yes)))
      (symbol "{name}_0_1"
        (rectangle (start -1.016 -2.54) (end 1.016 2.54) (stroke (width 0.254) (type default)) (fill (type none))))
      (symbol "{name}_1_1"{pins}))
"""


def _symbol(ref: str, value: str, lib_id: str, footprint: str, uuid: str, x: float, mpn: str | None,
            nets: tuple[str, str]) -> str:
    mpn_field = f'\n    (property "MPN" "{mpn}" (at {x} 60 0) (effects (font (size 1.27 1.27)) (hide yes)))' if mpn else ""
    return f"""  (symbol (lib_id "{lib_id}") (at {x} {SYMBOL_Y} 0) (unit 1) (in_bom yes) (on_board yes) (dnp no)
    (uuid "{uuid}")
    (property "Reference" "{ref}" (at {x + 3} {SYMBOL_Y - 1.27} 0) (effects (font (size 1.27 1.27))))
    (property "Value" "{value}" (at {x + 3} {SYMBOL_Y + 1.27} 0) (effects (font (size 1.27 1.27))))
    (property "Footprint" "{footprint}" (at {x} 57 0) (effects (font (size 1.27 1.27)) (hide yes))){mpn_field}
    (pin "1" (uuid "{uuid[:-4]}{uuid[-2:]}b1"))
    (pin "2" (uuid "{uuid[:-4]}{uuid[-2:]}b2"))
    (instances (project "{PROJECT}" (path "/00000000-0000-0000-0000-00000000b11e" (reference "{ref}") (unit 1))))
  )
"""


def _labels() -> str:
    """A label on the end of every pin: the pins of a net share its name."""
    labels = []
    for _ref, _value, _lib, _fp, uuid, x, _mpn, nets in PARTS:
        for pin, (net, y) in enumerate(((nets[0], SYMBOL_Y - PIN_OFFSET), (nets[1], SYMBOL_Y + PIN_OFFSET)), 1):
            labels.append(f'  (label "{net}" (at {x} {y:.2f} 0) (effects (font (size 1.27 1.27)) (justify left bottom))'
                          f' (uuid "{uuid[:-4]}{uuid[-2:]}c{pin}"))\n')
    return "".join(labels)


def schematic() -> str:
    library = "".join(_lib_symbol(lib_id, ref[0]) for ref, _v, lib_id, *_ in PARTS)
    symbols = "".join(_symbol(*part) for part in PARTS)
    return f"""(kicad_sch
  (version 20260306)
  (generator "eeschema")
  (generator_version "10.0")
  (uuid "00000000-0000-0000-0000-00000000b11e")
  (paper "A4")
  (title_block (title "Blinky") (date "2026-11-01") (rev "B") (company "Acme Hardware"))
  (lib_symbols
{library}  )
{_labels()}{symbols}  (sheet_instances (path "/" (page "1")))
)
"""


def _net(name: str) -> str:
    """Every item names its net: KiCad 10 writes no net numbers (board format 20251028)."""
    assert name in NETS
    return f'(net "/{name}")'


def _footprint(ref: str, value: str, footprint: str, uuid: str, x: float, nets: tuple[str, str],
               angle: int, mpn: str | None = None) -> str:
    # The symbol's MPN travels to the footprint, as KiCad 10's update from the schematic puts it there:
    # its parity check reports a symbol field the footprint lacks (footprint_symbol_field_mismatch).
    mpn_field = (f'\n    (property "MPN" "{mpn}" (at 0 0 {angle}) (layer "F.Fab") (hide yes) '
                 f'(uuid "{uuid[:-4]}{uuid[-2:]}f3"))' if mpn else "")
    return f"""  (footprint "{footprint}" (layer "F.Cu") (uuid "{uuid[:-4]}{uuid[-2:]}f0") (at {x} 15 {angle})
    (property "Reference" "{ref}" (at 0 -1.5 {angle}) (layer "F.SilkS") (uuid "{uuid[:-4]}{uuid[-2:]}f1"))
    (property "Value" "{value}" (at 0 1.5 {angle}) (layer "F.Fab") (uuid "{uuid[:-4]}{uuid[-2:]}f2")){mpn_field}
    (path "/{uuid}")
    (sheetname "/")
    (sheetfile "{PROJECT}.kicad_sch")
    (pad "1" smd roundrect (at -0.8 0 {angle}) (size 0.8 0.95) (layers "F.Cu" "F.Paste" "F.Mask") {_net(nets[0])})
    (pad "2" smd roundrect (at 0.8 0 {angle}) (size 0.8 0.95) (layers "F.Cu" "F.Paste" "F.Mask") {_net(nets[1])})
  )
"""


# Footprints left to right: R1 at x 10, D1 at x 20 turned round (its pad 2, the anode, faces R1),
# J1 at x 30. LED_A and GND run on F.Cu; VIN goes from J1 pad 2 round underneath to R1 pad 1.
PLACEMENT = {"R1": (10, 0), "D1": (20, 180), "J1": (30, 0)}
# How far below the parts VIN runs on B.Cu: the pull request (head) brings it up from
# the base commit's route near the board's edge, so the board diff has something to show.
VIN_DETOUR_Y = {"head": 20, "base": 26}


def tracks(revision: str = "head") -> list:
    """(start, end, layer, net) of each track."""
    y = VIN_DETOUR_Y[revision]
    return [
        ((10.8, 15), (19.2, 15), "F.Cu", "LED_A"),
        ((20.8, 15), (29.2, 15), "F.Cu", "GND"),
        ((30.8, 15), (32.5, 15), "F.Cu", "VIN"),
        ((32.5, 15), (32.5, y), "B.Cu", "VIN"),
        ((32.5, y), (7.5, y), "B.Cu", "VIN"),
        ((7.5, y), (7.5, 15), "B.Cu", "VIN"),
        ((7.5, 15), (9.2, 15), "F.Cu", "VIN"),
    ]


TRACKS = tracks()
VIAS = [((32.5, 15), "VIN"), ((7.5, 15), "VIN")]


def board(revision: str = "head") -> str:
    footprints = "".join(_footprint(ref, value, fp, uuid, PLACEMENT[ref][0], nets, PLACEMENT[ref][1], mpn)
                         for ref, value, _lib, fp, uuid, _x, mpn, nets in PARTS)
    tracks_text = "".join(f'  (segment (start {a[0]} {a[1]}) (end {b[0]} {b[1]}) (width 0.25) (layer "{layer}") {_net(net)}'
                     f' (uuid "00000000-0000-0000-0000-0000000000c{i}"))\n'
                     for i, (a, b, layer, net) in enumerate(tracks(revision), 1))
    vias = "".join(f'  (via (at {at[0]} {at[1]}) (size 0.6) (drill 0.3) (layers "F.Cu" "B.Cu") {_net(net)}'
                   f' (uuid "00000000-0000-0000-0000-0000000000d{i}"))\n' for i, (at, net) in enumerate(VIAS, 1))
    return f"""(kicad_pcb
  (version 20260206)
  (generator "pcbnew")
  (generator_version "10.0")
  (general (thickness 1.6) (legacy_teardrops no))
  (paper "A4")
  (title_block (title "Blinky") (date "2026-11-01") (rev "B") (company "Acme Hardware"))
  (layers
    (0 "F.Cu" signal)
    (2 "B.Cu" signal)
    (25 "Edge.Cuts" user)
  )
  (setup (pad_to_mask_clearance 0))
{footprints}{tracks_text}{vias}  (gr_rect (start 0 0) (end 40 30) (stroke (width 0.1) (type default)) (fill no) (layer "Edge.Cuts")
    (uuid "00000000-0000-0000-0000-0000000000e1"))
)
"""


def write(folder: Path, revision: str = "head") -> Path:
    """Write the project (the pull request's head, or its base) into folder/hardware/ and return folder."""
    hardware = folder / "hardware"
    hardware.mkdir(parents=True, exist_ok=True)
    (hardware / f"{PROJECT}.kicad_pro").write_text(PRO)
    (hardware / f"{PROJECT}.kicad_sch").write_text(schematic())
    (hardware / f"{PROJECT}.kicad_pcb").write_text(board(revision))
    return folder


def commit_history(folder: Path) -> tuple[str, str] | None:
    """Make `folder` (the project and whatever else it holds, written as the head) a git
    repository of two commits: the base on `main`, then the pull request's head on top.
    Returns (base sha, head sha); None when git cannot (the demo then runs without a diff)."""
    git = ["git", "-C", str(folder), "-c", "user.name=Acme Hardware", "-c", "user.email=hw@acme.example",
           "-c", "commit.gpgsign=false", "-c", "init.defaultBranch=main"]
    try:
        subprocess.run([*git, "init", "--quiet"], check=True, capture_output=True)
        shas = []
        for revision, message in (("base", "Rev A"), ("head", "Rev B: VIN routed closer under the parts")):
            if revision == "head":   # the pull request's branch, from main
                subprocess.run([*git, "checkout", "--quiet", "-b", "rev-b"], check=True, capture_output=True)
            write(folder, revision)
            subprocess.run([*git, "add", "--all"], check=True, capture_output=True)
            subprocess.run([*git, "commit", "--quiet", "--no-verify", "-m", message], check=True, capture_output=True)
            shas.append(subprocess.run([*git, "rev-parse", "HEAD"], check=True, capture_output=True,
                                       text=True).stdout.strip())
    except (OSError, subprocess.CalledProcessError):
        write(folder, "head")
        return None
    return shas[0], shas[1]

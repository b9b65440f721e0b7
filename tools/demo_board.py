"""The demo repository's content: a small KiCad 9 project (an LED blinker
board) written by the project itself, so bin/demo needs nothing from outside.
It is nearly ready: the checker finds parts without a manufacturer part number,
so the demo shows an at-risk result with line-level annotations."""
from __future__ import annotations

from pathlib import Path

PROJECT = "blinky"

PRO = """{
  "board": {"design_settings": {"rules": {"min_clearance": 0.2, "min_track_width": 0.2,
    "min_via_diameter": 0.6, "min_through_hole_diameter": 0.3, "min_via_annular_width": 0.15}}},
  "meta": {"filename": "blinky.kicad_pro", "version": 3},
  "net_settings": {"classes": [{"name": "Default", "clearance": 0.2, "track_width": 0.25,
    "via_diameter": 0.6, "via_drill": 0.3}]},
  "sheets": [["00000000-0000-0000-0000-00000000b11e", "Root"]]
}
"""


def _symbol(ref: str, value: str, lib_id: str, footprint: str, uuid: str, x: float, mpn: str | None) -> str:
    mpn_field = f'\n    (property "MPN" "{mpn}" (at {x} 60 0) (effects (font (size 1.27 1.27)) (hide yes)))' if mpn else ""
    return f"""  (symbol (lib_id "{lib_id}") (at {x} 50 0) (unit 1) (in_bom yes) (on_board yes) (dnp no)
    (uuid "{uuid}")
    (property "Reference" "{ref}" (at {x} 45 0) (effects (font (size 1.27 1.27))))
    (property "Value" "{value}" (at {x} 55 0) (effects (font (size 1.27 1.27))))
    (property "Footprint" "{footprint}" (at {x} 57 0) (effects (font (size 1.27 1.27)) (hide yes))){mpn_field}
    (instances (project "{PROJECT}" (path "/00000000-0000-0000-0000-00000000b11e" (reference "{ref}") (unit 1))))
  )
"""


PARTS = [
    ("R1", "330", "Device:R", "Resistor_SMD:R_0603_1608Metric", "00000000-0000-0000-0000-0000000000a1", 100,
     "RC0603FR-07330RL"),
    ("D1", "LED_Red", "Device:LED", "LED_SMD:LED_0603_1608Metric", "00000000-0000-0000-0000-0000000000a2", 120, None),
    ("J1", "Conn_01x02", "Connector_Generic:Conn_01x02",
     "Connector_PinHeader_2.54mm:PinHeader_1x02_P2.54mm_Vertical", "00000000-0000-0000-0000-0000000000a3", 80, None),
]


def schematic() -> str:
    symbols = "".join(_symbol(*part) for part in PARTS)
    return f"""(kicad_sch
  (version 20250114)
  (generator "eeschema")
  (generator_version "9.0")
  (uuid "00000000-0000-0000-0000-00000000b11e")
  (paper "A4")
  (title_block (title "Blinky") (date "2026-11-01") (rev "B") (company "Acme Hardware"))
  (lib_symbols)
{symbols})
"""


def _footprint(ref: str, value: str, footprint: str, uuid: str, x: float, y: float, nets: tuple[int, int]) -> str:
    return f"""  (footprint "{footprint}" (layer "F.Cu") (uuid "{uuid}") (at {x} {y})
    (property "Reference" "{ref}" (at 0 -1.5 0) (layer "F.SilkS") (uuid "{uuid[:-2]}f1"))
    (property "Value" "{value}" (at 0 1.5 0) (layer "F.Fab") (uuid "{uuid[:-2]}f2"))
    (path "/{uuid}")
    (pad "1" smd roundrect (at -0.8 0) (size 0.8 0.95) (layers "F.Cu" "F.Paste" "F.Mask") (net {nets[0]} "N{nets[0]}"))
    (pad "2" smd roundrect (at 0.8 0) (size 0.8 0.95) (layers "F.Cu" "F.Paste" "F.Mask") (net {nets[1]} "N{nets[1]}"))
  )
"""


def board() -> str:
    footprints = "".join(_footprint(ref, value, fp, uuid, 10 + i * 10, 15, (i + 1, i + 2))
                         for i, (ref, value, _lib, fp, uuid, _x, _mpn) in enumerate(PARTS))
    return f"""(kicad_pcb
  (version 20241229)
  (generator "pcbnew")
  (generator_version "9.0")
  (general (thickness 1.6) (legacy_teardrops no))
  (paper "A4")
  (title_block (title "Blinky") (date "2026-11-01") (rev "B") (company "Acme Hardware"))
  (layers
    (0 "F.Cu" signal)
    (2 "B.Cu" signal)
    (25 "Edge.Cuts" user)
  )
  (setup (pad_to_mask_clearance 0))
  (net 0 "")
  (net 1 "N1")
  (net 2 "N2")
  (net 3 "N3")
  (net 4 "N4")
{footprints}  (segment (start 10.8 15) (end 19.2 15) (width 0.25) (layer "F.Cu") (net 2) (uuid "00000000-0000-0000-0000-0000000000c1"))
  (segment (start 20.8 15) (end 29.2 15) (width 0.25) (layer "F.Cu") (net 3) (uuid "00000000-0000-0000-0000-0000000000c2"))
  (via (at 15 20) (size 0.6) (drill 0.3) (layers "F.Cu" "B.Cu") (net 2) (uuid "00000000-0000-0000-0000-0000000000d1"))
  (gr_rect (start 0 0) (end 40 30) (stroke (width 0.1) (type default)) (fill no) (layer "Edge.Cuts")
    (uuid "00000000-0000-0000-0000-0000000000e1"))
)
"""


def write(folder: Path) -> Path:
    """Write the project into folder/hardware/ and return folder."""
    hardware = folder / "hardware"
    hardware.mkdir(parents=True, exist_ok=True)
    (hardware / f"{PROJECT}.kicad_pro").write_text(PRO)
    (hardware / f"{PROJECT}.kicad_sch").write_text(schematic())
    (hardware / f"{PROJECT}.kicad_pcb").write_text(board())
    return folder

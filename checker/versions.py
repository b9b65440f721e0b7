"""KiCad file-format versions: which KiCad wrote a file, and whether we know it.

KiCad stamps each file with a date-like integer. We accept ranges, not exact
numbers: any version inside a release's range is that release; anything
newer than the newest range we know is flagged "too new" but still read.
"""
from __future__ import annotations

# (first version of the release, KiCad major). Sources: the format version
# constants in KiCad's sources (SEXPR_BOARD_FILE_VERSION in
# pcbnew/pcb_io/kicad_sexpr/pcb_io_kicad_sexpr.h and SEXPR_SCHEMATIC_FILE_VERSION
# in eeschema/sch_file_versions.h), whose history marks "Start of N.0
# development": 10.0's first board version is 20250210 (knockout text boxes), its
# first schematic version 20250222 (hatched fills). Boards after KiCad 5's
# 20171130 and before 6.0's 20211014 are 5.99 development files: read as 6.
# Every .kicad_sch is KiCad 6 or later: KiCad 5 schematics were .sch, another format.
BOARD_RELEASES = [(20171201, 6), (20221018, 7), (20240108, 8), (20241229, 9), (20250210, 10)]
SCHEMATIC_RELEASES = [(0, 6), (20230121, 7), (20231120, 8), (20250114, 9), (20250222, 10)]
# The newest versions KiCad 10 writes: kicad-cli 10.0.7 saves boards as 20260206 and
# schematics as 20260306; a 10.0.x point release may stamp a later date of 2026 (the 9.0
# branch did the same), so the whole year is KiCad 10's. Anything larger is a later KiCad,
# reported as too new and read best-effort.
NEWEST_KNOWN = {"board": 20261231, "schematic": 20261231}
NEWEST_MAJOR = 10


def major_for(kind: str, version: int | None) -> int | None:
    """KiCad major version for a file version; 5 for anything before KiCad 6."""
    if version is None:
        return None
    releases = BOARD_RELEASES if kind == "board" else SCHEMATIC_RELEASES
    major = 5
    for first, release in releases:
        if version >= first:
            major = release
    return major


def is_too_new(kind: str, version: int | None) -> bool:
    return version is not None and version > NEWEST_KNOWN[kind]


def parse_version(text: str | None) -> int | None:
    if text is None or not (text.isascii() and text.isdigit()) or len(text) > 12:
        return None
    return int(text)

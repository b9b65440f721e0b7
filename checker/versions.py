"""KiCad file-format versions: which KiCad wrote a file, and whether we know it.

KiCad stamps each file with a date-like integer. We accept ranges, not exact
numbers: any version inside a release's range is that release; anything
newer than the newest range we know is flagged "too new" but still read.
"""
from __future__ import annotations

# (first version of the release, KiCad major). Sources: the format version
# constants in KiCad's sources (SEXPR_BOARD_FILE_VERSION and
# SEXPR_SCHEMATIC_FILE_VERSION) at each release tag. Boards after KiCad 5's
# 20171130 and before 6.0's 20211014 are 5.99 development files: read as 6.
# Every .kicad_sch is KiCad 6 or later: KiCad 5 schematics were .sch, another format.
BOARD_RELEASES = [(20171201, 6), (20221018, 7), (20240108, 8), (20241229, 9)]
SCHEMATIC_RELEASES = [(0, 6), (20230121, 7), (20231120, 8), (20250114, 9)]
# The last version written by KiCad 9.x that we have seen; KiCad 10 will write
# larger numbers and is reported as too new.
NEWEST_KNOWN = {"board": 20250999, "schematic": 20250999}


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

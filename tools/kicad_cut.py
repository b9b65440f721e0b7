"""Cut the smallest piece of a real KiCad board that still shows a case, in KiCad's own format.

    python -m tools.kicad_cut BOARD OUT.kicad_pcb --box X0 Y0 X1 Y1 [--zone UUID ...] [--no-fills]

Keeps the board's header, setup, layers and net table whole; the board outline (every
Edge.Cuts graphic); the footprints whose position lies in the box; the tracks, arcs and vias
with an end in the box; the zones named by --zone (their fills as saved, unless --no-fills) and
the zones whose outline has a corner in the box. Everything else (other footprints, tracks,
zones, drawings, texts, dimensions, groups) is dropped. The piece is text cut from the board,
so KiCad reads it as it read the board; load it with kicad-cli 9 and commit its report beside it
(tests/fixtures/kicad-corpus-cuts/README.md).
"""
from __future__ import annotations

import argparse
import re
from pathlib import Path

# Lists kept whole, whatever the box.
_KEEP = {"version", "generator", "generator_version", "general", "paper", "title_block", "layers", "setup",
         "net", "property", "embedded_fonts"}
_POINT = re.compile(r"\((?:at|start|end|xy|center|mid)\s+(-?[\d.]+)\s+(-?[\d.]+)")


def top_level(text: str) -> tuple[str, list[str], str]:
    """The board's opening line, its top-level lists (each with its leading whitespace) and the rest."""
    start = text.index("(", text.index("(kicad_pcb") + 1)
    items, depth, quoted, escaped, begin = [], 0, False, False, start
    i = start
    while i < len(text):
        ch = text[i]
        if quoted:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                quoted = False
        elif ch == '"':
            quoted = True
        elif ch == "(":
            if depth == 0:
                begin = i
            depth += 1
        elif ch == ")":
            if depth == 0:
                break   # the board's own closing parenthesis
            depth -= 1
            if depth == 0:
                items.append(text[begin:i + 1])
        i += 1
    return text[:start], items, text[i:]


def _name(item: str) -> str:
    return re.match(r"\(\s*([^\s()]+)", item).group(1)


def _inside(x: float, y: float, box) -> bool:
    return box[0] <= x <= box[2] and box[1] <= y <= box[3]


def keep(item: str, box, zones: set[str], fills: bool) -> str | None:
    name = _name(item)
    if name in _KEEP:
        return item
    if name in ("gr_line", "gr_arc", "gr_circle", "gr_rect", "gr_poly", "gr_curve"):
        return item if re.search(r'\(layer\s+"?Edge\.Cuts"?\)', item) else None
    if name == "footprint":
        at = re.search(r"\n\t\t\(at\s+(-?[\d.]+)\s+(-?[\d.]+)", item)
        return item if at and _inside(float(at.group(1)), float(at.group(2)), box) else None
    if name in ("segment", "arc", "via"):
        points = [(float(x), float(y)) for x, y in _POINT.findall(item)]
        return item if any(_inside(x, y, box) for x, y in points) else None
    if name == "zone":
        uuid = re.search(r'\(uuid\s+"?([^")\s]+)', item)
        outline = item.split("(filled_polygon")[0]
        corners = [(float(x), float(y)) for x, y in _POINT.findall(outline)]
        if (uuid and uuid.group(1) in zones) or any(_inside(x, y, box) for x, y in corners):
            if not fills:
                item = re.sub(r"\n\t\t\(filled_polygon.*?\n\t\t\)", "", item, flags=re.S)
            return item
        return None
    return None


def cut(board: Path, out: Path, box, zones: set[str], fills: bool = True) -> int:
    head, items, tail = top_level(board.read_text())
    kept = [k for k in (keep(item, box, zones, fills) for item in items) if k is not None]
    out.write_text(head + "\n\t".join(kept) + "\n" + tail)
    return len(kept)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("board", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--box", type=float, nargs=4, required=True, metavar=("X0", "Y0", "X1", "Y1"))
    parser.add_argument("--zone", action="append", default=[], help="a zone's uuid to keep wherever it lies")
    parser.add_argument("--no-fills", action="store_true", help="drop the kept zones' saved fills")
    args = parser.parse_args()
    count = cut(args.board, args.out, args.box, set(args.zone), not args.no_fills)
    print(f"{args.out}: {count} top-level lists kept")


if __name__ == "__main__":
    main()

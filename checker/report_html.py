"""The self-contained HTML report: board as SVG with finding markers, a
clickable findings list, a searchable BOM and the verdict. No network
fetches: styles, script and data are inline (and a CSP forbids the rest)."""
from __future__ import annotations

import html
import json
import math
from importlib import resources
from pathlib import Path
from string import Template

from .board import Board
from .runner import RunOutcome

_LAYER_COLOURS = {"F.Cu": "#c83434", "B.Cu": "#3b6fd1"}
_INNER_COLOUR = "#b58b2a"


def _fmt(value: float) -> str:
    return f"{value:.4f}".rstrip("0").rstrip(".")


def _board_svg(board: Board | None, markers: list[tuple[str, float, float]]) -> str:
    if board is None:
        return '<p id="no-board">This project has no board file.</p>'
    points = [p for e in board.edges for p in e.points] or \
             [p for t in board.tracks for p in t.points] + [(f.x, f.y) for f in board.footprints]
    if not points:
        points = [(0.0, 0.0), (10.0, 10.0)]
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    margin = max(2.0, 0.03 * max(max(xs) - min(xs), max(ys) - min(ys)))
    x0, y0 = min(xs) - margin, min(ys) - margin
    width, height = max(xs) - min(xs) + 2 * margin, max(ys) - min(ys) + 2 * margin
    marker_radius = max(0.8, 0.02 * max(width, height))
    parts = [f'<svg class="board" id="board" xmlns="http://www.w3.org/2000/svg" '
             f'viewBox="{_fmt(x0)} {_fmt(y0)} {_fmt(width)} {_fmt(height)}" preserveAspectRatio="xMidYMid meet">']
    for zone in board.zones:
        if len(zone.polygon) > 2:
            pts = " ".join(f"{_fmt(x)},{_fmt(y)}" for x, y in zone.polygon)
            parts.append(f'<polygon points="{pts}" fill="#2a5a3a" opacity="0.35"/>')
    for footprint in board.footprints:
        for pad in footprint.pads:
            # Pad angles in the file already include the footprint's rotation.
            angle = -pad.rotation
            parts.append(f'<rect x="{_fmt(pad.x - pad.width / 2)}" y="{_fmt(pad.y - pad.height / 2)}" '
                         f'width="{_fmt(pad.width)}" height="{_fmt(pad.height)}" fill="#c9a23a" opacity="0.8" '
                         f'transform="rotate({_fmt(angle)} {_fmt(pad.x)} {_fmt(pad.y)})"/>')
        parts.append(f'<text x="{_fmt(footprint.x)}" y="{_fmt(footprint.y)}" font-size="1" fill="#e8e8e8" '
                     f'text-anchor="middle">{html.escape(footprint.reference)}</text>')
    for track in board.tracks:
        colour = _LAYER_COLOURS.get(track.layer, _INNER_COLOUR)
        pts = " ".join(f"{_fmt(x)},{_fmt(y)}" for x, y in track.points)
        parts.append(f'<polyline points="{pts}" fill="none" stroke="{colour}" stroke-width="{_fmt(track.width)}" '
                     f'stroke-linecap="round" opacity="0.85"/>')
    for via in board.vias:
        parts.append(f'<circle cx="{_fmt(via.x)}" cy="{_fmt(via.y)}" r="{_fmt((via.diameter or 0.6) / 2)}" fill="#bbb"/>')
    for edge in board.edges:
        pts = " ".join(f"{_fmt(x)},{_fmt(y)}" for x, y in edge.points)
        parts.append(f'<polyline points="{pts}" fill="none" stroke="#f2e68c" stroke-width="0.15"/>')
    for fingerprint, x, y in markers:
        if math.isfinite(x) and math.isfinite(y):
            parts.append(f'<circle class="marker" id="marker-{fingerprint}" cx="{_fmt(x)}" cy="{_fmt(y)}" '
                         f'r="{_fmt(marker_radius)}"/>')
    parts.append("</svg>")
    return "".join(parts)


def render_html(outcome: RunOutcome) -> str:
    result = outcome.result
    model = next((m for m in outcome.models if m.board is not None), outcome.models[0] if outcome.models else None)
    board = model.board if model else None
    markers = [(f.fingerprint, f.extra["x"], f.extra["y"]) for f in outcome.findings
               if "x" in f.extra and board is not None and f.path == board.file]
    bom = []
    for m in outcome.models:
        if m.schematic is None:
            continue
        seen: set[str] = set()
        for symbol in m.schematic.symbols:
            if symbol.is_virtual or not symbol.in_bom or symbol.reference in seen:
                continue
            seen.add(symbol.reference)
            mpn = next((symbol.fields[f] for f in m.config.mpn_fields if symbol.fields.get(f, "").strip()), "")
            bom.append({"reference": symbol.reference, "value": symbol.value, "footprint": symbol.footprint,
                        "mpn": mpn, "dnp": symbol.dnp, "sheet": symbol.sheet_path})
    data = json.dumps({"findings": result["findings"], "bom": bom}, sort_keys=True)
    # Inside <script>, "</" could close the element early: escape it.
    data = data.replace("</", "<\\/").replace("<!--", "<\\!--")
    template = Template(resources.files(__package__).joinpath("templates/report.html").read_text(encoding="utf-8"))
    return template.substitute(
        title=html.escape(result.get("project", ".")),
        readiness=result["readiness"],
        readiness_upper=result["readiness"].upper(),
        score=result["score"],
        profile=html.escape(result.get("profile", "")),
        project=html.escape(result.get("project", ".")),
        board_svg=_board_svg(board, markers),
        data=data,
    )


def write_html(outcome: RunOutcome, path: Path) -> None:
    Path(path).write_text(render_html(outcome), encoding="utf-8")

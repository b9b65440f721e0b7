"""Silkscreen text too small to print (KiCad 9's text_height and text_thickness warnings).

KiCad 9's board setup constrains the visible texts on F.SilkS / B.SilkS: a font height below
``min_text_height`` (0.8 mm unless the project says otherwise) or a pen width below
``min_text_thickness`` (0.08 mm). The pen width is the one KiCad draws: the written thickness,
clamped to a quarter of the font's smaller size (so an 0.0762 mm text with a 0.2 mm pen has
0.019 mm). One finding per check, listing every text.
"""
from __future__ import annotations

from ..board import Board, SilkText
from ..findings import Finding

DEFAULT_MIN_HEIGHT = 0.8
DEFAULT_MIN_THICKNESS = 0.08
# KiCad's Clamp_Text_PenSize: a pen at most this share of the font's smaller size.
MAX_PEN_SHARE = 0.25
EPSILON = 1e-6


def text_dims_findings(board: Board, pro: dict) -> list[Finding]:
    if not board.silk_texts:
        return []
    min_height = _rule(pro, "min_text_height", DEFAULT_MIN_HEIGHT)
    min_thickness = _rule(pro, "min_text_thickness", DEFAULT_MIN_THICKNESS)
    low = [t for t in board.silk_texts if t.height < min_height - EPSILON]
    thin = [t for t in board.silk_texts if (pen := _pen(t)) is not None and pen < min_thickness - EPSILON]
    findings = []
    if low:
        findings.append(_finding(board, "board.text-height", "text_height", low, "height", min_height,
                                 lambda t: t.height))
    if thin:
        findings.append(_finding(board, "board.text-thickness", "text_thickness", thin, "pen width", min_thickness,
                                 _pen))
    return findings


def _pen(text: SilkText) -> float | None:
    if text.thickness is None:
        return None
    return min(text.thickness, MAX_PEN_SHARE * min(text.height, text.width))


def _rule(pro: dict, key: str, default: float) -> float:
    board = pro.get("board") if isinstance(pro, dict) else None
    settings = board.get("design_settings") if isinstance(board, dict) else None
    rules = settings.get("rules") if isinstance(settings, dict) else None
    value = rules.get(key) if isinstance(rules, dict) else None
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0 else default


def _label(text: SilkText) -> str:
    owner = f" of {text.footprint.reference}" if text.footprint is not None and text.footprint.reference else ""
    return f"{text.kind}{owner} ({text.text})" if text.kind in ("Footprint text", "Text") else f"{text.kind}{owner}"


def _finding(board: Board, rule_id: str, kicad_type: str, texts: list[SilkText], what: str, minimum: float,
             measure) -> Finding:
    worst = min(texts, key=measure)
    places = [{"x": round(t.x, 4), "y": round(t.y, 4), "layer": t.layer, "uuids": [t.uuid] if t.uuid else []}
              for t in texts]
    return Finding(rule_id,
                   f"{len(texts)} silkscreen text(s) with a {what} below the board's {minimum:g} mm; smallest: "
                   f"{_label(worst)} on {worst.layer}, {measure(worst):.4g} mm",
                   identity=(board.file, kicad_type), path=board.file, line=worst.location.line,
                   column=worst.location.column, kicad_type=kicad_type,
                   locations=places if len(places) > 1 else [],
                   extra={"x": places[0]["x"], "y": places[0]["y"], "layer": worst.layer, "count": len(texts),
                          "minimum_mm": minimum, "uuids": places[0]["uuids"]})

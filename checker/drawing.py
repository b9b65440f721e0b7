"""What the drawing script (checker/templates/board_view.js) reads: the
board's geometry, the diff against the base, the schematic sheets the change
touched and the findings with their places. The report embeds it; the run page
fetches it out of the report (app/web/pages/board_view.py).
"""
from __future__ import annotations

import math
from pathlib import Path

from .base_check import first_schematic
from .board_view import board_geometry
from .findings import Finding
from .schematic_view import changed_sheets

MAX_NAMED = 16   # items a selected finding outlines


def _place_of(finding: Finding) -> tuple[float, float, str | None] | None:
    """Where the finding's pin goes: its own place, else the first of its places."""
    places = finding.all_locations() if hasattr(finding, "all_locations") else []
    candidates = [(finding.extra.get("x"), finding.extra.get("y"), finding.extra.get("layer"))]
    candidates += [(p.get("x"), p.get("y"), p.get("layer")) for p in places]
    for x, y, layer in candidates:
        if isinstance(x, (int, float)) and isinstance(y, (int, float)) and math.isfinite(x) and math.isfinite(y):
            return x, y, layer
    return None


def _named(finding: Finding) -> list[str]:
    return list(getattr(finding, "uuids", None) or finding.extra.get("uuids") or [])


def _sheet_root(models) -> Path | None:
    """The folder the schematic's sheet files are named from (the check's root)."""
    model = next((m for m in models if m.schematic is not None and m.files.schematic is not None), None)
    if model is None:
        return None
    return Path(model.files.schematic).parents[len(Path(model.schematic.root_file).parts) - 1]


def geometry_document(models, findings: list[Finding], comparison: dict | None) -> dict:
    """What the drawing script reads: the first board's geometry, its diff against
    the base (when a base was checked), the schematic sheets the change touched,
    and the findings, with their places on the board or a drawn sheet."""
    model = next((m for m in models if m.board is not None), None)
    document: dict = {"version": 1, "board": board_geometry(model.board) if model else None}
    drawn = {model.board.file} if model is not None else set()
    if comparison is not None:
        document["summary"] = comparison["summary"]
        document["bom"] = comparison["bom"]
        document["schematic"] = comparison["schematic"]
        if model is not None:
            document["diff"] = next((b["diff"] for b in comparison["boards"] if b["file"] == model.board.file), None)
        document["sheets"] = changed_sheets(first_schematic(models), comparison, _sheet_root(models))
        drawn |= {sheet["view"]["file"] for sheet in document["sheets"]}
    pins = []
    for finding in findings:
        place = _place_of(finding)
        pin = {"fingerprint": finding.fingerprint, "ruleId": finding.rule_id, "severity": finding.severity,
               "title": finding.title or finding.rule_id, "message": finding.message[:500],
               "baseline": finding.baseline, "waived": finding.waived}
        if place is not None and finding.path in drawn:
            pin.update(path=finding.path, x=round(float(place[0]), 4), y=round(float(place[1]), 4),
                       layer=place[2], uuids=_named(finding)[:MAX_NAMED])
        pins.append(pin)
    document["findings"] = pins
    return document

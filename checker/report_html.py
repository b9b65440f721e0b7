"""The self-contained HTML report: the board drawn by board_view.js from its
geometry (zoom, pan, layers, the severity filter, findings pinned where they
are, and the diff when a base was checked), a searchable BOM and the verdict.
No network fetches: styles, script and data are inline (and a CSP forbids the rest)."""
from __future__ import annotations

import html
import json
from importlib import resources
from pathlib import Path
from string import Template

from .board_view import too_large
from .drawing import geometry_document
from .runner import RunOutcome

_TEMPLATES = resources.files(__package__).joinpath("templates")


def _json_in_script(value, sort_keys: bool = False) -> str:
    """JSON for a <script type="application/json"> element: "</" could close it early."""
    text = json.dumps(value, sort_keys=sort_keys, separators=(",", ":"))
    return text.replace("</", "<\\/").replace("<!--", "<\\!--")


# The drawing's data in the report: at most half the artifact upload cap (8 MiB), so the
# report's own findings and BOM keep room. Beyond it the board is "too large to draw".
MAX_DRAWING_BYTES = 4 * 1024 * 1024


def board_data(outcome: RunOutcome) -> dict:
    """The board's geometry, its diff against the base when one was checked, and the pinned findings."""
    return geometry_document(outcome.models, outcome.findings, outcome.comparison)


def _drawing(outcome: RunOutcome) -> str:
    """board_data as script text, within MAX_DRAWING_BYTES: first without the drawing
    (bounds and counts, the summary stays), then without the findings' messages."""
    document = board_data(outcome)
    text = _json_in_script(document)
    if len(text) > MAX_DRAWING_BYTES and document.get("board"):
        document["board"] = too_large(document["board"])
        document.pop("diff", None)
        text = _json_in_script(document)
    if len(text) > MAX_DRAWING_BYTES:
        for pin in document["findings"]:
            pin.pop("message", None)
        text = _json_in_script(document)
    return text


def render_html(outcome: RunOutcome) -> str:
    result = outcome.result
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
    data = _json_in_script({"findings": result["findings"], "bom": bom}, sort_keys=True)
    template = Template(_TEMPLATES.joinpath("report.html").read_text(encoding="utf-8"))
    return template.substitute(
        title=html.escape(result.get("project", ".")),
        readiness=result["readiness"],
        readiness_upper=result["readiness"].upper(),
        score=result["score"],
        profile=html.escape(result.get("profile", "")),
        project=html.escape(result.get("project", ".")),
        data=data,
        board_data=_drawing(outcome),
        board_view_js=_TEMPLATES.joinpath("board_view.js").read_text(encoding="utf-8"),
        board_view_css=_TEMPLATES.joinpath("board_view.css").read_text(encoding="utf-8"),
    )


def write_html(outcome: RunOutcome, path: Path) -> None:
    Path(path).write_text(render_html(outcome), encoding="utf-8")

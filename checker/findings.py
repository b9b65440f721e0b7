"""Findings and their stable fingerprints."""
from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass, field

SEVERITIES = ("error", "high", "medium", "low", "info")


@dataclass
class Finding:
    rule_id: str
    message: str
    identity: tuple[str, ...]          # what the finding is about, never where it is drawn
    severity: str = ""                 # filled from the catalogue unless set
    path: str | None = None
    line: int | None = None
    column: int | None = None
    end_line: int | None = None
    end_column: int | None = None
    title: str | None = None
    source: str = "boardready"
    baseline: str | None = None
    waived: bool = False
    # Board position (x, y in mm, layer) and measurements (actual_mm, required_mm, count):
    # x, y and layer go into the JSON and SARIF, all of it into the HTML report.
    extra: dict = field(default_factory=dict)

    @property
    def fingerprint(self) -> str:
        """sha-256 over the rule and the identities of the items involved.

        Coordinates are deliberately excluded so that moving a part does not
        turn an accepted finding into a "new" one under --baseline.
        """
        text = "\x1f".join((self.rule_id, *self.identity))
        return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]

    def to_json(self) -> dict:
        out: dict = {
            "ruleId": self.rule_id,
            "severity": self.severity,
            "message": self.message[:4000] or self.rule_id,
            "fingerprint": self.fingerprint,
            "source": self.source,
        }
        if self.title:
            out["title"] = self.title[:255]
        if self.path:
            out["path"] = self.path
        if self.line:
            out["startLine"] = self.line
            out["endLine"] = self.end_line or self.line
            if self.column:
                out["startColumn"] = self.column
                out["endColumn"] = self.end_column or self.column
        x, y = self.extra.get("x"), self.extra.get("y")
        if _on_a_board(x) and _on_a_board(y):
            out["x"] = round(float(x), 4)
            out["y"] = round(float(y), 4)
            if self.extra.get("layer"):
                out["layer"] = str(self.extra["layer"])[:255]
        if self.baseline:
            out["baseline"] = self.baseline
        if self.waived:
            out["waived"] = True
        return out


def where_in(path: str | None, item) -> dict:
    """A finding's path, line and column for ``item`` of the file at ``path``, as
    keyword arguments of Finding. Only for a finding: an item's line costs the
    position index of its file."""
    return dict(path=path, line=item.line, column=item.column)


# KiCad's coordinates are 32-bit nanometres: a place outside this range (a hostile
# file's) is no place on a board, and the contract refuses it.
BOARD_LIMIT_MM = 2147.483647


def _on_a_board(value) -> bool:
    return (isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
            and abs(value) <= BOARD_LIMIT_MM)

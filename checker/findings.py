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
    # The KiCad violation type this finding mirrors (its settings key: "clearance",
    # "pin_not_connected"), so the project's rule_severities and exclusions apply to it.
    kicad_type: str | None = None
    # Every place of a grouped finding: {"x", "y" (mm), "layer", "uuids" (the KiCad items)}.
    locations: list[dict] = field(default_factory=list)
    # The project's .kicad_pro excludes it (KiCad's exclusions): reported, never counted.
    excluded: bool = False
    # Blocks under the base's policy and not under the head's (checker/policy.py): what the
    # head's policy made of it ("to") and the head's settings that did ("settings").
    relaxed: dict | None = None

    @property
    def uuids(self) -> list[str]:
        """The KiCad items this finding names, over all its places, first seen first."""
        seen: dict[str, None] = {}
        for location in self.all_locations():
            for uuid in location.get("uuids") or ():
                seen.setdefault(uuid, None)
        return list(seen)

    def all_locations(self) -> list[dict]:
        """``locations``, or the single place of ``extra`` (x, y, layer, uuids) when none is listed."""
        if self.locations:
            return self.locations
        x, y = self.extra.get("x"), self.extra.get("y")
        uuids = self.extra.get("uuids") or []
        if (x is None or y is None) and not uuids:
            return []
        return [{"x": x, "y": y, "layer": self.extra.get("layer"), "uuids": list(uuids)}]

    @property
    def counts(self) -> bool:
        """Whether the finding counts toward the verdict and the score."""
        return not (self.waived or self.excluded)

    @property
    def fingerprint(self) -> str:
        """sha-256 over the rule and the identities of the items involved.

        Coordinates are deliberately excluded so that moving a part does not
        turn an accepted finding into a "new" one under --baseline.
        """
        # An imported KiCad finding (kicad.drc.<type>) keeps the fingerprint it had
        # as kicad.drc: its type is in its identity already, and baselines stay valid.
        rule = self.rule_id
        if rule.startswith(("kicad.drc.", "kicad.erc.")):
            rule = rule[:9]
        text = "\x1f".join((rule, *self.identity))
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
        x, y, layer = self.extra.get("x"), self.extra.get("y"), self.extra.get("layer")
        if not (_on_a_board(x) and _on_a_board(y)) and self.locations:
            first = self.locations[0]
            x, y, layer = first.get("x"), first.get("y"), first.get("layer")
        if _on_a_board(x) and _on_a_board(y):
            out["x"] = round(float(x), 4)
            out["y"] = round(float(y), 4)
            if layer:
                out["layer"] = str(layer)[:255]
        if self.baseline:
            out["baseline"] = self.baseline
        if self.waived:
            out["waived"] = True
        if self.kicad_type:
            out["kicadType"] = self.kicad_type[:128]
        if self.excluded:
            out["excluded"] = True
        if self.relaxed:
            out["relaxed"] = self.relaxed
        places = [_place_json(location) for location in self.all_locations()[:MAX_LOCATIONS]]
        places = [place for place in places if place]
        if len(places) > 1 or (places and places[0].get("uuids")):
            out["locations"] = places
        return out


MAX_LOCATIONS = 1000         # places listed per finding; the message says how many there are
MAX_UUIDS_PER_PLACE = 8


def _place_json(location: dict) -> dict:
    place: dict = {}
    x, y = location.get("x"), location.get("y")
    if _on_a_board(x) and _on_a_board(y):
        place["x"] = round(float(x), 4)
        place["y"] = round(float(y), 4)
        if location.get("layer"):
            place["layer"] = str(location["layer"])[:255]
    uuids = [str(u)[:64] for u in (location.get("uuids") or ()) if u][:MAX_UUIDS_PER_PLACE]
    if uuids:
        place["uuids"] = uuids
    return place


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

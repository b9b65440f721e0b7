"""Fab profiles: what a fab house can make, as data (one TOML file each).

A profile is per fab *and* layer count (``layer_counts``): a 2-layer
profile's numbers say nothing about a 4-layer board, so a profile that does
not fit the board is refused (``ProfileRefused``) rather than applied. A fab
profile holds only the numbers its fab publishes, with the source named in
the file; a minimum it does not publish is not checked against it. The
default ``generic`` profile fits any board and carries boardready's own
numbers, one set for 1-2 layers and one for multilayer boards.
"""
from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, replace

from ..errors import ProfileRefused

MINIMUM_KEYS = ("track_width_mm", "clearance_mm", "via_drill_mm", "via_diameter_mm",
                "annular_ring_mm", "copper_edge_clearance_mm")
DEFAULT_PROFILE = "generic"
# The profiles are files beside this module (package data of every distribution). Read
# with os, not importlib.resources: that import (zipfile, tempfile, ...) was a tenth of
# a small project's whole check, start-up included.
_FOLDER = os.path.dirname(os.path.abspath(__file__))


@dataclass(frozen=True)
class FabProfile:
    name: str
    title: str
    fab: str
    layer_counts: tuple[int, ...]      # empty: any
    source_name: str
    source_url: str
    minimums: dict[str, float]         # the numbers that apply to the board being checked
    multilayer: dict[str, float]       # generic only: the numbers for four or more layers

    def minimum(self, key: str) -> float | None:
        """The profile's minimum, or None when the fab does not publish one."""
        return self.minimums.get(key)

    def fits(self, copper_layers: int) -> bool:
        return not self.layer_counts or copper_layers in self.layer_counts

    def for_board(self, copper_layers: int) -> FabProfile:
        """The profile as it applies to a board with that many copper layers, or ProfileRefused."""
        if not self.fits(copper_layers):
            fitting = [name for name in available() if load_profile(name).fab == self.fab
                       and load_profile(name).fits(copper_layers)]
            hint = f"; use {', '.join(fitting)}" if fitting else "; use generic"
            counts = "-".join(str(n) for n in (self.layer_counts[0], self.layer_counts[-1])) \
                if len(self.layer_counts) > 1 else str(self.layer_counts[0])
            raise ProfileRefused(f"fab profile {self.name} is for {counts}-layer boards and this board has "
                                 f"{copper_layers} copper layers{hint}")
        if copper_layers > 2 and self.multilayer:
            return replace(self, minimums=dict(self.multilayer))
        return self


def _raw(name: str) -> dict:
    path = os.path.join(_FOLDER, f"{name}.toml")
    if name not in available():
        raise KeyError(name)
    with open(path, encoding="utf-8") as handle:
        return tomllib.loads(handle.read())


def available() -> list[str]:
    return sorted(entry[:-5] for entry in os.listdir(_FOLDER) if entry.endswith(".toml"))


def load_profile(name: str = DEFAULT_PROFILE) -> FabProfile:
    data = _raw(name)
    own = {k: float(v) for k, v in data.get("minimums", {}).items() if k in MINIMUM_KEYS}
    multilayer = {k: float(v) for k, v in data.get("minimums_multilayer", {}).items() if k in MINIMUM_KEYS}
    return FabProfile(name=data["name"], title=data["title"], fab=data.get("fab", ""),
                      layer_counts=tuple(int(n) for n in data.get("layer_counts", [])),
                      source_name=data["source_name"], source_url=data["source_url"],
                      minimums=own, multilayer=multilayer)

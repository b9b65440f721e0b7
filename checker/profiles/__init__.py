"""Fab profiles: minimums a fab house can make, as data (one TOML file each)."""
from __future__ import annotations

import tomllib
from dataclasses import dataclass
from importlib import resources

MINIMUM_KEYS = ("track_width_mm", "clearance_mm", "via_drill_mm", "via_diameter_mm",
                "annular_ring_mm", "copper_edge_clearance_mm")
DEFAULT_PROFILE = "generic"


@dataclass(frozen=True)
class FabProfile:
    name: str
    title: str
    source_name: str
    source_url: str
    minimums: dict[str, float]        # effective: the fab's own numbers over the generic ones
    published: frozenset[str]         # keys the fab itself publishes (the rest are generic)

    def minimum(self, key: str) -> float:
        return self.minimums[key]


def _raw(name: str) -> dict:
    resource = resources.files(__package__).joinpath(f"{name}.toml")
    if not resource.is_file():
        raise KeyError(name)
    return tomllib.loads(resource.read_text(encoding="utf-8"))


def available() -> list[str]:
    return sorted(entry.name[:-5] for entry in resources.files(__package__).iterdir()
                  if entry.name.endswith(".toml"))


def load_profile(name: str = DEFAULT_PROFILE) -> FabProfile:
    generic = _raw(DEFAULT_PROFILE)
    data = _raw(name)
    own = {k: float(v) for k, v in data.get("minimums", {}).items() if k in MINIMUM_KEYS}
    merged = {k: float(generic["minimums"][k]) for k in MINIMUM_KEYS}
    merged.update(own)
    return FabProfile(name=data["name"], title=data["title"], source_name=data["source_name"],
                      source_url=data["source_url"], minimums=merged, published=frozenset(own))

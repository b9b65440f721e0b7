"""``.boardready.toml`` in the checked repository: profile, MPN field names,
severity overrides and waived fingerprints.

Example::

    profile = "jlcpcb-2layer"
    mpn_fields = ["MPN", "Manufacturer Part Number"]

    [severity]
    "bom.mpn-missing" = "low"

    [waivers]
    fingerprints = ["0123456789abcdef0123456789abcdef"]
"""
from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from .errors import MalformedConfig
from .findings import SEVERITIES
from .profiles import available
from .project import InputReader
from .rules.catalogue import RULES

CONFIG_NAME = ".boardready.toml"
DEFAULT_MPN_FIELDS = ("MPN", "Manufacturer Part Number", "Manufacturer_Part_Number", "MFR PN",
                      "Mfr. No", "MFN", "PartNumber", "Part Number", "LCSC", "LCSC Part", "Digikey",
                      "DigiKey Part", "Mouser")
_FINGERPRINT = re.compile(r"^[0-9a-f]{16,64}$")
_KNOWN_KEYS = {"profile", "mpn_fields", "severity", "waivers", "project"}


@dataclass
class CheckerConfig:
    profile: str = "generic"
    mpn_fields: tuple[str, ...] = DEFAULT_MPN_FIELDS
    severity: dict[str, str] = field(default_factory=dict)
    waived: frozenset[str] = frozenset()
    project: str | None = None
    path: str | None = None
    profile_set: bool = False      # the file names a profile: the project chose that fab


def load_config(repository_root: Path, reader: InputReader) -> CheckerConfig:
    path = repository_root / CONFIG_NAME
    if not path.exists() and not path.is_symlink():
        return CheckerConfig()
    shown = reader.relative(path)
    try:
        data = tomllib.loads(reader.read_text(path))
    except tomllib.TOMLDecodeError as exc:
        raise MalformedConfig(str(exc), path=shown) from None
    except RecursionError:
        # tomllib recurses once per nested table or array: a file nested thousands deep.
        raise MalformedConfig("tables or arrays nested too deep", path=shown) from None
    unknown = set(data) - _KNOWN_KEYS
    if unknown:
        raise MalformedConfig(f"unknown settings: {', '.join(sorted(unknown))}", path=shown)
    config = CheckerConfig(path=shown)
    if "profile" in data:
        if not isinstance(data["profile"], str) or data["profile"] not in available():
            raise MalformedConfig(f"unknown fab profile {_shown(data['profile'])}; known: {', '.join(available())}",
                                  path=shown)
        config.profile = data["profile"]
        config.profile_set = True
    if "mpn_fields" in data:
        fields = data["mpn_fields"]
        if not isinstance(fields, list) or not all(isinstance(f, str) and f for f in fields):
            raise MalformedConfig("mpn_fields must be a list of field names", path=shown)
        config.mpn_fields = tuple(fields)
    overrides = data.get("severity", {})
    if not isinstance(overrides, dict):
        raise MalformedConfig("severity must be a table of rule id = severity", path=shown)
    for rule_id, severity in overrides.items():
        if rule_id not in RULES:
            raise MalformedConfig(f"severity override for unknown rule {_shown(rule_id)}", path=shown)
        if rule_id == "checker.rule-failed":
            raise MalformedConfig("checker.rule-failed marks an incomplete check: it cannot be overridden",
                                  path=shown)
        if not isinstance(severity, str) or severity not in SEVERITIES:
            raise MalformedConfig(f"severity {_shown(severity)} is not one of {', '.join(SEVERITIES)}", path=shown)
        config.severity[rule_id] = severity
    waivers = data.get("waivers", {})
    prints = waivers.get("fingerprints", []) if isinstance(waivers, dict) else None
    if not isinstance(prints, list) or not all(isinstance(p, str) and _FINGERPRINT.match(p) for p in prints):
        raise MalformedConfig("waivers.fingerprints must be a list of lowercase hex fingerprints", path=shown)
    config.waived = frozenset(prints)
    if "project" in data:
        if not isinstance(data["project"], str):
            raise MalformedConfig("project must be a path", path=shown)
        config.project = data["project"]
    return config


def _shown(value) -> str:
    """A setting's value in a message: a string as written, anything else by its type alone
    (a table nested hundreds deep is neither short nor safe to print)."""
    return repr(value[:80]) if isinstance(value, str) else f"of type {type(value).__name__}"

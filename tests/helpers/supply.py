"""The supply tests' board: its project, and the BOM of the default branch and
of a pull request that swaps the 555 for an EOL boost converter (the
emulator's provider knows all three parts); the settings that point the
supply worker at the emulator's provider."""
from __future__ import annotations

from emulator import provider

PROJECT = "hardware/blinky.kicad_pro"
SCHEMATIC = "hardware/blinky.kicad_sch"


def bom_line(ref: str, mpn: str, manufacturer: str, line: int) -> dict:
    return {"project": PROJECT, "references": [ref], "quantity": 1, "value": ref, "footprint": "fp",
            "manufacturer": manufacturer, "mpn": mpn, "dnp": False, "path": SCHEMATIC, "line": line}


DEFAULT_BRANCH_BOM = [bom_line("R1", "RC0603FR-07330RL", "YAGEO", 40),
                      bom_line("U1", "NE555P", "Texas Instruments", 80)]
# The pull request swaps the 555 for an EOL boost converter: supply.obsolete, high, at line 82.
PULL_REQUEST_BOM = [bom_line("R1", "RC0603FR-07330RL", "YAGEO", 40),
                    bom_line("U1", "LM2611BMF/NOPB", "Texas Instruments", 82)]


def provider_settings(host) -> dict:
    """The supply worker asks the emulator's component provider, and soon."""
    return {"SERVICE_COMPONENT_PROVIDER_URL": host.provider_url,
            "SERVICE_COMPONENT_PROVIDER_TOKEN_URL": host.provider_token_url,
            "SERVICE_COMPONENT_PROVIDER_CLIENT_ID": provider.CLIENT_ID,
            "SERVICE_COMPONENT_PROVIDER_CLIENT_SECRET": provider.CLIENT_SECRET,
            "SERVICE_SUPPLY_POLL_MS": "200"}

"""Everything the rules look at for one project, loaded once."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .config import CheckerConfig
from .profiles import FabProfile
from .project import ProjectFiles
from .rulebook import BoardRules
from .sexpr import Node

if TYPE_CHECKING:       # the board (and numpy) is loaded only for a project that has one
    from .board import Board
    from .bom import BomRow
    from .schematic import Schematic


@dataclass
class ProjectModel:
    files: ProjectFiles
    config: CheckerConfig
    profile: FabProfile
    pro_path: str | None = None
    pro: dict = field(default_factory=dict)
    schematic: Schematic | None = None
    board: Board | None = None
    dru: Node | None = None
    dru_path: str | None = None
    footprint_libraries: set[str] = field(default_factory=set)   # names in the project's fp-lib-table
    bom: list[BomRow] | None = None
    bom_path: str | None = None
    rules: BoardRules = field(default_factory=BoardRules)      # the board's own design rules
    profile_chosen: bool = False       # the project (or --profile) chose this fab
    copper: object | None = None       # checker.copper.Copper, built once for the board rules
    run_erc: bool = True               # False: the schematic and its ERC findings are another check's
    # The rules whose findings are asked for; None: every rule. A rule module skips a part of
    # its work that can only make findings of other rules (a base's check needs only the
    # rules the head has findings of: checker/base_check.py).
    wanted_rules: frozenset[str] | None = None

    def wants(self, *rule_ids: str) -> bool:
        """Whether findings of any of ``rule_ids`` are asked for."""
        return self.wanted_rules is None or not self.wanted_rules.isdisjoint(rule_ids)

    @property
    def fab_severity(self) -> str:
        """Fab capability findings block nothing: high when the project chose the fab, else medium."""
        return "high" if self.profile_chosen else "medium"

"""Typed errors for invalid or hostile input.

Every refusal of input is a subclass of HostileInputError with a stable
``code`` so that the CLI (exit 3), the JSON output and tests can tell them
apart without parsing messages. Anything else escaping the checker is a bug.
"""
from __future__ import annotations


class HostileInputError(Exception):
    """Input the checker refuses to judge. ``code`` is stable; ``message`` is for people."""

    code = "invalid_input"

    def __init__(self, message: str, *, path: str | None = None, line: int | None = None,
                 column: int | None = None):
        super().__init__(message)
        self.message = message
        self.path = path
        self.line = line
        self.column = column

    def __str__(self) -> str:
        where = self.path or ""
        if self.line is not None:
            where += f":{self.line}" + (f":{self.column}" if self.column is not None else "")
        return f"{self.code}: {self.message}" + (f" ({where})" if where else "")


class InputTooLarge(HostileInputError):
    code = "input_too_large"


class TooManySheetInstances(HostileInputError):
    code = "too_many_sheet_instances"


class BomTooLarge(HostileInputError):
    code = "bom_too_many_rows"


class NestingTooDeep(HostileInputError):
    code = "nesting_too_deep"


class AtomTooLong(HostileInputError):
    code = "atom_too_long"


class TooManyTokens(HostileInputError):
    code = "too_many_tokens"


class SymlinkEscape(HostileInputError):
    code = "symlink_escapes_project"


class NotRegularFile(HostileInputError):
    code = "not_regular_file"


class SheetCycle(HostileInputError):
    code = "sheet_cycle"


class PathEscape(HostileInputError):
    code = "path_escapes_project"


class NulByte(HostileInputError):
    code = "nul_byte"


class InvalidUtf8(HostileInputError):
    code = "invalid_utf8"


class MalformedSexpr(HostileInputError):
    code = "malformed_sexpr"


class MalformedJson(HostileInputError):
    code = "malformed_json"


class MalformedBom(HostileInputError):
    code = "malformed_bom"


class NotKicadFile(HostileInputError):
    """A file whose top-level form is not the KiCad file type its name promises."""

    code = "not_kicad_file"


class NoProjectFound(HostileInputError):
    code = "no_kicad_project"


class MalformedReport(HostileInputError):
    """An ERC/DRC report that is not the JSON KiCad writes. Callers turn this
    into an 'unverified' finding rather than refusing the whole run."""

    code = "malformed_report"


class MalformedConfig(HostileInputError):
    """A .boardready.toml that is not valid TOML or names unknown settings."""

    code = "malformed_config"


class ProfileRefused(HostileInputError):
    """The chosen fab profile does not fit the board (its layer count): refused, not applied."""

    code = "profile_does_not_fit"


class NonFiniteCoordinate(HostileInputError):
    """A NaN or infinite coordinate: kicad-cli 9 fails to load such a board ("Failed to load board")."""

    code = "non_finite_coordinate"


class CopperTooDense(HostileInputError):
    """So much copper overlapping in one place that measuring its pairs would exceed the
    check's memory and time bounds (checker/geometry.py: PAIR_BUDGET)."""

    code = "copper_too_dense"

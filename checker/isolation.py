"""Each rule runs on its own: an unexpected failure in one costs that rule, never the verdict.

A rule module that raises anything but a typed refusal of the input (HostileInputError,
which refuses the whole check) is run again one rule at a time, each asking only for its
own findings (``ProjectModel.wants``), so the rules that work still report. A rule that
fails alone, or a module that cannot run a rule alone, becomes one ``checker.rule-failed``
finding naming it: an error, so the verdict is blocked ("check incomplete"), and the CLI
exits 3. It is never waived or overridden (checker/config.py refuses to).

Rules the project switches off are not run at all (``skipped_rules``): a rule whose every
KiCad type the project's ``rule_severities`` set to ignore, unless the fab profile the project
chose (.boardready.toml or --profile; not the default generic one) still asks for it with a
minimum of its own (beyond KiCad, no KiCad type).
"""
from __future__ import annotations

import dataclasses
import time
import traceback
from collections.abc import Callable
from pathlib import Path

from .errors import HostileInputError
from .findings import Finding
from .model import ProjectModel
from .rules.catalogue import RULES

RULE_FAILED = "checker.rule-failed"
# Re-running a failed module rule by rule is skipped (the module reported as one failure) when
# it would take longer than this, judged by how long the failed run took.
RERUN_BUDGET_S = 5.0

# The rules of each module, by id prefix: what a module is re-run for, one at a time.
_MODULE_PREFIXES = {
    "rules.format_rules": ("format.",), "rules.schematic_rules": ("sch.", "erc."), "rules.parity": ("parity.",),
    "rules.board_rules": ("board.",), "rules.copper_rules": ("board.",), "rules.design_rules": ("rules.",),
    "rules.bom_rules": ("bom.",),
}

# The KiCad types a rule's findings carry where the catalogue names none (the rule names it
# finding by finding), and the fab profile minimum that makes it report beyond KiCad.
_RULE_TYPES: dict[str, tuple[tuple[str, ...], str | None]] = {
    "board.edge-clearance": (("copper_edge_clearance",), "copper_edge_clearance_mm"),
    "board.track-width": (("track_width",), "track_width_mm"),
    "board.via-drill": (("drill_out_of_range",), "via_drill_mm"),
    "board.via-diameter": (("via_diameter",), "via_diameter_mm"),
    "board.annular-ring": (("annular_width",), "annular_ring_mm"),
}


def kicad_types(rule_id: str) -> tuple[tuple[str, ...], str | None]:
    """The KiCad types ``rule_id``'s findings may carry, and its fab minimum's key (or None);
    ((), None) when it is not known: such a rule always runs."""
    if rule_id in _RULE_TYPES:
        return _RULE_TYPES[rule_id]
    rule = RULES.get(rule_id)
    if rule is not None and rule.kicad_type and rule_id.startswith("board."):
        return (rule.kicad_type,), None
    return (), None


def skipped_rules(model: ProjectModel, settings) -> frozenset[str]:
    """The board rules the project ignores (every KiCad type they report set to ignore in its
    rule_severities) and no fab minimum asks for: they are not run."""
    skipped = set()
    for rule_id in RULES:
        types, fab_key = kicad_types(rule_id)
        if not types or any(settings.severity("drc", kicad_type) != "ignore" for kicad_type in types):
            continue
        if fab_key and model.profile_chosen and model.profile.minimum(fab_key):
            continue
        skipped.add(rule_id)
    return frozenset(skipped)


def without(model: ProjectModel, skipped: frozenset[str]) -> None:
    """Ask ``model`` for every rule it asked for but ``skipped``."""
    if skipped:
        wanted = frozenset(RULES) if model.wanted_rules is None else model.wanted_rules
        model.wanted_rules = wanted - skipped


def run_module(name: str, check: Callable[[ProjectModel], list[Finding]], model: ProjectModel) -> list[Finding]:
    """``check(model)``; when it fails, each of its rules alone, the failing ones reported."""
    started = time.perf_counter()
    try:
        return check(model)
    except HostileInputError:
        raise
    except MemoryError as exc:        # running it again rule by rule would run out again
        return [_failed(name, None, exc, model)]
    except Exception as exc:          # noqa: BLE001 - any bug in a rule: reported, never a traceback
        first = exc
    rules = [r for r in RULES if r.startswith(_MODULE_PREFIXES.get(name, ("",))) and model.wants(r)]
    if (time.perf_counter() - started) * len(rules) > RERUN_BUDGET_S:
        return [_failed(name, None, first, model)]     # one rule at a time would take too long
    findings: list[Finding] = []
    failed: list[tuple[str, BaseException]] = []
    for rule_id in rules:
        alone = dataclasses.replace(model, wanted_rules=frozenset({rule_id}))
        try:
            made = check(alone)
        except HostileInputError:
            raise
        except Exception as exc:      # noqa: BLE001
            failed.append((rule_id, exc))
            continue
        finally:
            model.copper = alone.copper if model.copper is None else model.copper
        findings += made
    # A module that makes every rule's findings whatever is asked makes them on each run.
    findings = list({f.fingerprint: f for f in findings}.values())
    if not rules or len(failed) == len(rules):
        # Every rule failing alone: the module cannot run a rule on its own, or fails before
        # any: the module as a whole is what failed.
        return [_failed(name, None, first, model)]
    return findings + [_failed(name, rule_id, exc, model) for rule_id, exc in failed]


def _failed(module: str, rule_id: str | None, exc: BaseException, model: ProjectModel) -> Finding:
    what = rule_id or f"the rules of {module.removeprefix('rules.')}"
    detail = _detail(exc) + (f", at {_where(exc)}" if _where(exc) else "")
    source = model.board.file if model.board is not None and (rule_id or "board.").startswith("board.") else None
    if source is None and model.schematic is not None:
        source = model.schematic.root_file
    return Finding(RULE_FAILED,
                   f"{what} could not finish ({type(exc).__name__}{': ' + detail if detail else ''}); "
                   f"the check is incomplete, so the verdict is blocked",
                   identity=(module, rule_id or "", type(exc).__name__), severity="error", path=source,
                   extra={"rule": rule_id or module, "error": type(exc).__name__, "at": _where(exc)})


def stopped(exc: BaseException) -> Finding:
    """The check stopped outside the rules (reading the project, building the result): the
    result is this one finding, blocked, where a traceback would have been."""
    return Finding(RULE_FAILED,
                   f"the check stopped before its rules finished ({type(exc).__name__}: {_detail(exc)}"
                   f"{', at ' + _where(exc) if _where(exc) else ''}); the check is incomplete, so the verdict "
                   f"is blocked", identity=("check", type(exc).__name__), severity="error",
                   extra={"rule": "check", "error": type(exc).__name__, "at": _where(exc)})


def _detail(exc: BaseException) -> str:
    return str(exc).splitlines()[0][:200] if str(exc) else ""


def _where(exc: BaseException) -> str:
    """The innermost frame of the checker's own code: where to look."""
    package = Path(__file__).resolve().parent
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if Path(f.filename).resolve().is_relative_to(package)]
    return f"{Path(frames[-1].filename).resolve().relative_to(package)}:{frames[-1].lineno}" if frames else ""

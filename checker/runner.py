"""One checker run: discover, guard, load, apply rules, baseline, score, build the run result."""
from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import import_module
from pathlib import Path

from contracts import RUN_RESULT_SCHEMA_VERSION

from . import TOOL_NAME, TOOL_VERSION, kicad_reports
from .bom import read_bom
from .bom_export import bom_lines
from .config import CheckerConfig, load_config
from .dru_expr import read_dru
from .errors import HostileInputError, NoProjectFound
from .findings import SEVERITIES, Finding
from .isolation import RULE_FAILED, run_module, skipped_rules, stopped, without
from .limits import DEFAULT_LIMITS, Limits
from .model import ProjectModel
from .profiles import DEFAULT_PROFILE, load_profile
from .project import KICAD_SUFFIXES, InputReader, ProjectFiles, discover
from .project_settings import apply_project_settings, read_project_settings
from .rulebook import read_rules
from .rules.catalogue import RULES
from .schematic import load_schematic
from .sexpr import paused_collection
from .verdict import cap_environment_dependent, judge
from .versions import major_for

# The rule modules, by name under checker/, imported when a project needs them: a
# schematic-only check never loads the board's modules (and numpy).
RULE_MODULES = ("rules.format_rules", "rules.schematic_rules", "rules.parity", "rules.board_rules",
                "rules.copper_rules", "rules.design_rules", "rules.bom_rules")
BOARD_RULE_MODULES = frozenset({"rules.parity", "rules.board_rules", "rules.copper_rules"})
MAX_FINDINGS = 10_000
LARGE_PROJECT_BYTES = 2 * 1024 * 1024   # above this, progress goes to stderr


@dataclass
class RunOptions:
    path: Path
    root: Path | None = None                 # repository root (default: PATH's folder)
    bom: Path | None = None
    profile: str | None = None               # overrides .boardready.toml
    baseline: Path | None = None
    gate: str = "all"
    erc_report: Path | None = None
    drc_report: Path | None = None
    run_kicad_cli: bool = True               # when kicad-cli 8+ is on the PATH
    trigger_kind: str = "manual"
    repository: str | None = None
    repository_id: str | None = None
    head_sha: str | None = None
    ref: str | None = None
    limits: Limits = DEFAULT_LIMITS
    base: Path | None = None                 # the base commit's checkout: the diff, new findings (board_diff.py)
    base_error: str | None = None            # a base was asked for and could not be read (checker/policy.py)
    progress: Callable[[str], None] | None = None


@dataclass(frozen=True)
class ModelReaders:
    """Where a check's models come from: its files, unless another check has read
    them already (the base of a --base check takes the head's where their files
    agree: checker/base_check.py); and which rules it runs."""
    schematic: Callable = load_schematic
    board: Callable | None = None            # None: board.load_board, imported when a board is read
    run_erc: bool = True                     # False: the schematic's ERC findings are the other check's
    # The rules whose findings are asked for (None: all): the base of a --base check needs
    # only the rules the head has findings of (a finding is new by fingerprint, which holds
    # its rule), so the rule modules skip what can only find other rules'.
    rules: frozenset[str] | None = None


@dataclass
class RunOutcome:
    result: dict
    findings: list[Finding]
    models: list[ProjectModel] = field(default_factory=list)
    comparison: dict | None = None           # against options.base (checker/board_diff.py)


def _root_for(options: RunOptions) -> Path:
    if options.root is not None:
        return Path(os.path.abspath(options.root))
    path = Path(os.path.abspath(options.path))
    return path if path.is_dir() else path.parent


def check(options: RunOptions) -> RunOutcome:
    # The parse trees, the models built from them and the rules' arrays are acyclic and
    # built in one go; the models live to the end of the check. A cyclic collection during
    # the check only walks them (the trees once or twice each, the models three times on
    # a large board), so none runs: what the caller keeps is walked once by the next one.
    with paused_collection():
        try:
            return _check(options)
        except HostileInputError:
            raise
        except Exception as exc:  # noqa: BLE001 - a checker bug outside the rules: blocked, never a traceback
            return _incomplete(options, exc)


def _incomplete(options: RunOptions, exc: Exception) -> RunOutcome:
    """The result of a check that stopped outside its rules: one checker.rule-failed finding."""
    findings = [stopped(exc)]
    _default_severities(findings)
    readiness, score = judge(findings, options.gate)
    result = {"schemaVersion": RUN_RESULT_SCHEMA_VERSION, "triggerKind": options.trigger_kind,
              "readiness": readiness, "score": score, "tool": {"name": TOOL_NAME, "version": TOOL_VERSION},
              "project": ".", "profile": options.profile or DEFAULT_PROFILE, "gate": options.gate,
              "findings": [f.to_json() for f in findings]}
    for key, value in (("repository", options.repository), ("repositoryId", options.repository_id),
                       ("headSha", options.head_sha), ("ref", options.ref)):
        if value:
            result[key] = value
    return RunOutcome(result=result, findings=findings)


def _check(options: RunOptions, readers: ModelReaders = ModelReaders()) -> RunOutcome:
    root = _root_for(options)
    reader = InputReader(root, options.limits)
    config = load_config(root, reader)
    target = Path(os.path.abspath(options.path))
    if config.project and target == root:
        target = reader.resolve_inside(root, config.project, what="configured project")
    if options.base:
        from .base_check import BaseCheck  # a board, and numpy, only when a base is compared
    base, base_problem = None, options.base_error
    if options.base:
        try:
            base = BaseCheck(_check, options, root, target)
        except Exception as exc:   # the base's problem never costs the head its verdict
            base_problem = f"{type(exc).__name__}: {exc}"
    projects = discover(target, reader)
    inputs = _all_inputs(projects, options)
    reader.reserve(inputs)
    big = reader.bytes_read + sum(os.stat(p).st_size for p in inputs) > LARGE_PROJECT_BYTES
    say = options.progress if (options.progress and big) else (lambda _message: None)
    profile = load_profile(options.profile or config.profile)
    chosen = bool(options.profile) or config.profile_set
    models: list[ProjectModel] = []
    for files in projects:
        say(f"reading {reader.relative(files.pro or files.board or files.schematic or files.folder)}")
        model = _load(files, config, profile, reader, options, readers)
        model.profile_chosen = chosen and profile.name != DEFAULT_PROFILE
        if model.board is not None:
            # Refused, not applied, when the profile is for another layer count.
            model.profile = profile.for_board(len(model.board.copper_layers()))
        models.append(model)
    models = _drop_subsheet_projects(models)
    findings: list[Finding] = []
    for model in models:
        say(f"checking {model.files.name}")
        made: list[Finding] = []
        settings = read_project_settings(model.pro)
        without(model, skipped_rules(model, settings))     # rules the project ignores do not run
        for name in RULE_MODULES:
            if model.board is None and name in BOARD_RULE_MODULES:
                continue
            # Imported inside the isolation too: a module that cannot load is a rule failure.
            made += run_module(name, lambda m, name=name: import_module(f".{name}", __package__).check(m), model)
        imported = _kicad_findings(model, options, reader)
        _default_severities(made + imported)
        made = apply_project_settings(made, settings)
        findings += kicad_reports.merge_with_native(made, imported)
    _settle(findings, config)
    if options.base or base_problem:   # policy comes from the base (checker/policy.py)
        from .policy import relax

        try:
            findings, policy_problem = relax(findings, models, options, root, config,
                                             base_readable=base is not None and not base_problem)
        except Exception as exc:   # compared with no policy instead: a broken base cannot relax
            findings, policy_problem = relax(findings, models, options, root, config, base_readable=False)
            policy_problem = f"the base's policy: {type(exc).__name__}: {exc}"
        base_problem = base_problem or policy_problem
    bom = _bom(models, options.limits)
    comparison = base.compare(bom, models, findings) if base else None
    if base_problem or (base and base.problem):
        from .policy import base_unreadable

        findings.append(base_unreadable(base_problem or base.problem, policy_compared=not base_problem))
    if options.baseline is not None:
        _apply_baseline(findings, options.baseline)
    findings = _dedupe_and_sort(findings)
    if len(findings) > MAX_FINDINGS:
        dropped = len(findings) - (MAX_FINDINGS - 1)
        findings = findings[: MAX_FINDINGS - 1]
        findings.append(Finding("report.truncated", f"{dropped} less severe findings were left out",
                                identity=("truncated",), severity="info"))
    readiness, score = judge(findings, options.gate)
    result = {
        "schemaVersion": RUN_RESULT_SCHEMA_VERSION,
        "triggerKind": options.trigger_kind,
        "readiness": readiness,
        "score": score,
        "tool": {"name": TOOL_NAME, "version": TOOL_VERSION},
        "project": reader.relative(target) if target != root else ".",
        "profile": profile.name,
        "gate": options.gate,
        "findings": [f.to_json() for f in findings],
    }
    if bom:
        result["bom"] = bom
    newest = _newest_kicad(models)
    if newest:
        result["kicadVersion"] = newest
    for key, value in (("repository", options.repository), ("repositoryId", options.repository_id),
                       ("headSha", options.head_sha), ("ref", options.ref)):
        if value:
            result[key] = value
    return RunOutcome(result=result, findings=findings, models=models, comparison=comparison)


def _bom(models: list[ProjectModel], limits: Limits) -> list[dict]:
    """Every project's BOM lines, each naming its project (the service watches one board by path)."""
    lines: list[dict] = []
    for model in models:
        project = model.pro_path or (model.schematic.root_file if model.schematic else None)
        for line in bom_lines(model, limits.max_bom_rows - len(lines)):
            lines.append({"project": project, **line} if project else line)
    return lines


def _all_inputs(projects: list[ProjectFiles], options: RunOptions) -> list[Path]:
    paths: list[Path] = []
    folders = []
    for files in projects:
        paths += files.known_inputs()
        if files.folder not in folders:
            folders.append(files.folder)
    # Every KiCad file in the project folders counts, so a 65 MiB sheet is
    # refused before the hierarchy walk would reach (and read) it.
    for folder in folders:
        for entry in sorted(os.scandir(folder), key=lambda e: e.name):
            if entry.name.endswith(KICAD_SUFFIXES) and Path(entry.path) not in paths:
                paths.append(Path(entry.path))
    if options.bom:
        paths.append(Path(os.path.abspath(options.bom)))
    return paths


def _load(files: ProjectFiles, config: CheckerConfig, profile, reader: InputReader,
          options: RunOptions, readers: ModelReaders) -> ProjectModel:
    # The models keep Locations, not nodes: the parse trees are freed on the way out.
    model = ProjectModel(files=files, config=config, profile=profile, run_erc=readers.run_erc,
                         wanted_rules=readers.rules)
    if files.pro:
        model.pro_path = reader.relative(files.pro)
        data = reader.read_json(files.pro)
        model.pro = data if isinstance(data, dict) else {}
    if files.fp_lib_table:
        table = reader.read_sexpr(files.fp_lib_table)
        model.footprint_libraries = {lib.value("name") or "" for lib in table.nodes("lib")}
    if files.dru:
        model.dru_path = reader.relative(files.dru)
        model.dru = read_dru(reader, files.dru)
    if files.schematic:
        model.schematic = readers.schematic(files.schematic, reader, files.name)
    if files.board:
        if readers.board is not None:
            model.board = readers.board(files.board, reader)
        else:
            from .board import load_board

            model.board = load_board(files.board, reader)
    model.rules = read_rules(model.pro, model.dru, model.board.setup if model.board else None,
                             major_for("board", model.board.version) if model.board else None)
    if model.schematic is None and model.board is None and files.pro is None:
        raise NoProjectFound("the project has no schematic and no board", path=files.name)
    if options.bom:
        model.bom_path = reader.relative(Path(os.path.abspath(options.bom)))
        model.bom = read_bom(Path(os.path.abspath(options.bom)), reader)
    return model


def _drop_subsheet_projects(models: list[ProjectModel]) -> list[ProjectModel]:
    """Without a .kicad_pro, a sub-sheet file looks like a project of its own;
    drop it when another project's hierarchy already includes it."""
    used: set[str] = set()
    for model in models:
        if model.schematic:
            used.update(model.schematic.files[1:])
    kept = [m for m in models if m.files.pro or m.board or not m.schematic or m.schematic.root_file not in used]
    return kept or models


def _kicad_findings(model: ProjectModel, options: RunOptions, reader: InputReader) -> list[Finding]:
    findings: list[Finding] = []
    cli, unusable = kicad_reports.find_kicad_cli() if options.run_kicad_cli else (None, None)
    if cli is not None and kicad_reports.too_old_for(cli, model):
        cli, unusable = None, kicad_reports.too_old_for(cli, model)
    for kind, given, source in (("erc", options.erc_report, model.files.schematic),
                                ("drc", options.drc_report, model.files.board)):
        if source is None:
            continue
        if given is not None:
            path = Path(given)
            findings += kicad_reports.import_report(kind, path if path.exists() else None, model, reader,
                                                    None if path.exists() else f"{given} does not exist")
        elif cli:
            # The report lives only as long as it takes to read it.
            with tempfile.TemporaryDirectory(prefix="boardready-kicad-") as scratch:
                report, error = kicad_reports.run_kicad_cli(kind, source, cli, Path(scratch))
                findings += kicad_reports.import_report(kind, report, model, reader, error)
    would_have_run = ((model.files.schematic and options.erc_report is None)
                      or (model.files.board and options.drc_report is None))
    if unusable and would_have_run:
        findings.append(kicad_reports.cli_unusable(unusable, model))
    return findings


def _default_severities(findings: list[Finding]) -> None:
    """Severity, title and KiCad type from the catalogue where the rule left them unset."""
    for finding in findings:
        rule = RULES.get(finding.rule_id)
        if rule is None:      # an imported kicad.drc.<type> finding carries its own
            continue
        if not finding.severity:
            finding.severity = rule.severity
        if finding.title is None:
            finding.title = rule.title
        if finding.kicad_type is None and finding.source == "boardready":
            finding.kicad_type = rule.kicad_type


def _settle(findings: list[Finding], config: CheckerConfig) -> None:
    """.boardready.toml overrides and waivers, after the project's own KiCad settings."""
    for finding in findings:
        if finding.rule_id in config.severity:
            finding.severity = config.severity[finding.rule_id]
        if finding.fingerprint in config.waived and finding.rule_id != RULE_FAILED:
            finding.waived = True
        finding.severity = cap_environment_dependent(finding.rule_id, finding.severity)


def _apply_baseline(findings: list[Finding], baseline: Path) -> None:
    from .errors import MalformedJson

    try:
        with open(baseline, "rb") as handle:
            data = json.loads(handle.read(DEFAULT_LIMITS.max_total_bytes).decode("utf-8"))
        known = {f["fingerprint"] for f in data["findings"] if isinstance(f, dict) and "fingerprint" in f}
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise MalformedJson(f"baseline is not a run result: {exc}", path=str(baseline)) from None
    for finding in findings:
        finding.baseline = "existing" if finding.fingerprint in known else "new"


def _dedupe_and_sort(findings: list[Finding]) -> list[Finding]:
    seen: set[str] = set()
    unique = []
    for finding in findings:
        if finding.fingerprint in seen:
            continue
        seen.add(finding.fingerprint)
        unique.append(finding)
    order = {s: i for i, s in enumerate(SEVERITIES)}
    unique.sort(key=lambda f: (order[f.severity], f.rule_id, f.path or "", f.line or 0, f.fingerprint))
    return unique


def _newest_kicad(models: list[ProjectModel]) -> str | None:
    majors = []
    for model in models:
        if model.board:
            majors.append(major_for("board", model.board.version))
        if model.schematic:
            majors += [major_for("schematic", v) for v in model.schematic.versions.values()]
    majors = [m for m in majors if m]
    return str(max(majors)) if majors else None

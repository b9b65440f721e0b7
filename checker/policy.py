"""Policy comes from the base: a pull request cannot relax its own gate.

What decides how a finding counts — ``.boardready.toml`` (profile, severity
overrides, waived fingerprints, MPN field names), the ``.kicad_pro``'s
``rule_severities``, ``drc_exclusions``, ``erc_exclusions``, ``erc.pin_map`` and
the board's minimums (``board.design_settings.rules``), and the ``.kicad_dru`` custom rules — is the project's policy. The head's
design is judged under its own policy (the result as always) and, when the
base's policy differs, under the base's too: the rules run again on the head's
models (no file is read twice) with the base's settings. A finding that blocks
(``error`` or ``high``, counting) under the base's policy and not under the
head's is kept at the base's severity, marked ``relaxed`` with the settings of
the head that relaxed it (which setting, in which file), and counts: the gate
fails until a person other than the author approves (docs/reviews.md). A policy
already on the base is the project's own and is honoured.

Without a readable base (``base_readable`` False: the base commit could not be
read or checked) the reference is no policy at all — KiCad 9's defaults, the
catalogue's severities, no exclusions, no waivers, the generic profile — so
every setting of the head that lowers a finding counts as relaxed: a broken
base cannot be used to relax.
"""
from __future__ import annotations

import copy
import json
import os
from dataclasses import dataclass, replace
from importlib import import_module
from pathlib import Path

from .config import CONFIG_NAME, CheckerConfig, load_config
from .errors import HostileInputError
from .findings import Finding
from .profiles import DEFAULT_PROFILE, load_profile
from .project import InputReader
from .project_settings import apply_project_settings, domain_of, read_project_settings
from .rulebook import read_rules
from .verdict import is_blocking

MAX_SETTINGS_PER_FINDING = 8
# The .kicad_pro's policy: (path of keys, how the setting is named in a finding's "relaxed").
_PRO_POLICY = (
    (("board", "design_settings", "rule_severities"), "board.design_settings.rule_severities"),
    (("board", "design_settings", "drc_exclusions"), "board.design_settings.drc_exclusions"),
    (("erc", "rule_severities"), "erc.rule_severities"),
    (("erc", "erc_exclusions"), "erc.erc_exclusions"),
    (("erc", "pin_map"), "erc.pin_map"),
    # The board's minimums (track width, clearance, edge clearance ...): lowering one relaxes
    # what the board rules hold the board to, as a looser .kicad_dru rule does.
    (("board", "design_settings", "rules"), "board.design_settings.rules"),
)
BASE_UNREADABLE_RULE = "base.unreadable"


@dataclass
class _Side:
    """One side's policy for one project: its .kicad_pro's policy keys, its .kicad_dru."""
    pro_policy: dict
    dru_text: str | None
    dru: object | None
    dru_file: str = ""     # where the project's .kicad_dru is (or would be), repository-relative


def relax(findings: list[Finding], models, options, root: Path, config: CheckerConfig,
          base_readable: bool) -> tuple[list[Finding], str | None]:
    """The head's findings with those the head's policy relaxed against the base's put
    back, marked; and why the base's policy could not be read (None when it could)."""
    problem = None
    base_root = Path(os.path.abspath(options.base)) if base_readable and options.base else None
    base_config, base_reader = CheckerConfig(), None
    if base_root is not None:
        base_reader = InputReader(base_root, options.limits)
        try:
            base_config = load_config(base_root, base_reader)
        except HostileInputError as exc:
            problem, base_root = f"{CONFIG_NAME}: {exc}", None
    base_config = replace(base_config, project=config.project)
    toml = config.path or CONFIG_NAME
    config_differs = _config_view(config) != _config_view(base_config)
    relaxed: dict[str, Finding] = {}
    for model in models:
        dru_file = os.path.relpath(model.files.folder / f"{model.files.name}.kicad_dru", root).replace(os.sep, "/")
        head = _Side(_pro_policy(model.pro), _dru_text(model), model.dru, dru_file)
        base, side_problem = _base_side(model, root, base_root, base_reader)
        problem = problem or side_problem
        if not config_differs and head.pro_policy == base.pro_policy and head.dru_text == base.dru_text:
            continue   # the same policy on both sides: nothing can be relaxed
        base_model = _under(model, base, base_config, options)
        head_findings = {f.fingerprint: f for f in _rule_findings(model)}
        for finding in _rule_findings(base_model):
            if not (finding.counts and is_blocking(finding.severity)):
                continue
            twin = head_findings.get(finding.fingerprint)
            if twin is not None and twin.counts and is_blocking(twin.severity):
                continue
            finding.relaxed = {
                "to": _state(twin),
                "settings": _why(finding, twin, model, base_model, config, base_config, toml, head, base),
            }
            relaxed.setdefault(finding.fingerprint, finding)
    if not relaxed:
        return findings, problem
    kept = [f for f in findings if f.fingerprint not in relaxed]
    return kept + list(relaxed.values()), problem


def base_unreadable(reason: str, policy_compared: bool = False) -> Finding:
    """The finding a check with an unreadable base carries: the head's verdict stands,
    the diff (and, unless ``policy_compared``, the policy comparison) with the base is missing."""
    policy = ("" if policy_compared else ", and the policy comparison with the base is missing too: every setting "
              "of this commit that lowers a finding counts as relaxed")
    return Finding(BASE_UNREADABLE_RULE,
                   f"The base commit could not be read or checked ({reason[:1000]}): the board diff and which "
                   f"findings are new are missing{policy}.",
                   identity=("base-unreadable",), severity="info", title="Base commit unreadable")


# -- each side's policy ---------------------------------------------------------------

def _config_view(config: CheckerConfig) -> tuple:
    return (config.profile, config.profile_set, tuple(config.mpn_fields), tuple(sorted(config.severity.items())),
            tuple(sorted(config.waived)))


def _dig(data, keys):
    for key in keys:
        if not isinstance(data, dict):
            return None
        data = data.get(key)
    return data


def _pro_policy(pro: dict) -> dict:
    return {name: _dig(pro, keys) for keys, name in _PRO_POLICY}


def _dru_text(model) -> str | None:
    """The head's .kicad_dru as read (the reader's budget counts it once)."""
    if model.files.dru is None or model.dru is None:
        return None
    try:
        return model.files.dru.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None


def _base_side(model, root: Path, base_root: Path | None, reader: InputReader | None) -> tuple[_Side, str | None]:
    """The base's policy for the head's project: its .kicad_pro's policy keys and its
    .kicad_dru, at the same places; none where the base has no such file or no base
    could be read."""
    if base_root is None:
        return _Side(_pro_policy({}), None, None), None
    pro, dru_text, dru, problem = {}, None, None, None
    try:
        if model.pro_path:
            path = base_root / model.pro_path
            if os.path.lexists(path):
                data = reader.read_json(path)
                pro = data if isinstance(data, dict) else {}
        dru_path = base_root / os.path.relpath(model.files.folder / f"{model.files.name}.kicad_dru", root)
        if os.path.lexists(dru_path):
            dru_text = reader.read_text(dru_path)
            from . import sexpr

            dru = sexpr.parse(dru_text, path=reader.relative(dru_path), limits=reader.limits, multiple=True)
    except HostileInputError as exc:
        return _Side(_pro_policy({}), None, None), f"the base's project settings: {exc}"
    return _Side(_pro_policy(pro), dru_text, dru), problem


def _under(model, base: _Side, base_config: CheckerConfig, options):
    """The head's model as the base's policy sees it: the head's design (its files as
    read, its board's copper), the base's settings."""
    pro = copy.deepcopy(model.pro) if isinstance(model.pro, dict) else {}
    for keys, name in _PRO_POLICY:
        parent = pro
        for key in keys[:-1]:
            if not isinstance(parent.get(key), dict):
                parent[key] = {}
            parent = parent[key]
        value = base.pro_policy[name]
        if value is None:
            parent.pop(keys[-1], None)
        else:
            parent[keys[-1]] = copy.deepcopy(value)
    name = options.profile or base_config.profile
    profile = model.profile
    try:
        profile = load_profile(name)
        if model.board is not None:
            profile = profile.for_board(len(model.board.copper_layers()))
    except HostileInputError:
        profile = model.profile   # the base's fab is for another layer count: the head's stands
    chosen = (bool(options.profile) or base_config.profile_set) and profile.name != DEFAULT_PROFILE
    return replace(model, config=base_config, pro=pro, dru=base.dru, profile=profile, profile_chosen=chosen,
                   rules=read_rules(pro, base.dru, model.board.setup if model.board else None), wanted_rules=None)


def _rule_findings(model) -> list[Finding]:
    """The checker's own findings of one model, at its policy (the runner's steps, without
    KiCad's reports: both sides are judged alike)."""
    from .isolation import run_module
    from .runner import BOARD_RULE_MODULES, RULE_MODULES, _default_severities, _settle

    made: list[Finding] = []
    for name in RULE_MODULES:
        if model.board is None and name in BOARD_RULE_MODULES:
            continue
        # Isolated as in the runner: a failing rule is a checker.rule-failed finding on both sides.
        made += run_module(name, lambda m, name=name: import_module(f".{name}", __package__).check(m), model)
    _default_severities(made)
    made = apply_project_settings(made, read_project_settings(model.pro))
    _settle(made, model.config)
    return made


# -- what relaxed it ------------------------------------------------------------------

def _state(twin: Finding | None) -> str:
    """What the head's policy made of the finding."""
    if twin is None:
        return "ignored"
    if twin.excluded:
        return "excluded"
    if twin.waived:
        return "waived"
    return twin.severity


def _setting(file: str, setting: str) -> dict:
    return {"file": file[:1024], "setting": setting[:255]}


def _why(finding: Finding, twin, model, base_model, config, base_config, toml: str, head: _Side,
         base: _Side) -> list[dict]:
    """The head's settings that relaxed ``finding``: those that name it, else every
    setting of the head's policy that differs from the base's."""
    named = []
    rule = finding.rule_id
    if rule in config.severity and config.severity.get(rule) != base_config.severity.get(rule):
        named.append(_setting(toml, f'severity."{rule}"'))
    if finding.fingerprint in config.waived and finding.fingerprint not in base_config.waived:
        named.append(_setting(toml, "waivers.fingerprints"))
    domain, kicad_type = domain_of(finding), finding.kicad_type
    pro_file = model.pro_path or f"{model.files.name}.kicad_pro"
    if domain and kicad_type:
        mine, theirs = read_project_settings(model.pro), read_project_settings(base_model.pro)
        prefix = "board.design_settings" if domain == "drc" else "erc"
        if mine.severity(domain, kicad_type) != theirs.severity(domain, kicad_type):
            named.append(_setting(pro_file, f"{prefix}.rule_severities.{kicad_type}"))
        places = [(loc["x"], loc["y"]) for loc in finding.all_locations() if loc.get("x") is not None]
        exclusion = mine.exclusion_for(domain, kicad_type, finding.uuids, places)
        if exclusion is not None and theirs.exclusion_for(domain, kicad_type, finding.uuids, places) is None:
            kind = "drc_exclusions" if domain == "drc" else "erc_exclusions"
            named.append(_setting(pro_file, f"{prefix}.{kind}: {exclusion.text}"))
        if kicad_type == "pin_to_pin" and mine.pin_map != theirs.pin_map:
            named.append(_setting(pro_file, "erc.pin_map"))
    if named:
        return named[:MAX_SETTINGS_PER_FINDING]
    # Nothing names it: the profile, the MPN fields or the custom rules moved a limit.
    every = []
    if (config.profile, config.profile_set) != (base_config.profile, base_config.profile_set):
        every.append(_setting(toml, "profile"))
    if tuple(config.mpn_fields) != tuple(base_config.mpn_fields):
        every.append(_setting(toml, "mpn_fields"))
    if head.dru_text != base.dru_text:
        every.append(_setting(head.dru_file, "rules"))
    for name, value in head.pro_policy.items():
        if json.dumps(value, sort_keys=True) != json.dumps(base.pro_policy[name], sort_keys=True):
            every.append(_setting(pro_file, name))
    for rule_id in sorted(set(config.severity) | set(base_config.severity)):
        if config.severity.get(rule_id) != base_config.severity.get(rule_id):
            every.append(_setting(toml, f'severity."{rule_id}"'))
    if config.waived - base_config.waived:
        every.append(_setting(toml, "waivers.fingerprints"))
    return every[:MAX_SETTINGS_PER_FINDING] or [_setting(toml, "policy")]

"""The one decision table: readiness and score from findings, the release decision,
the words both the command line and the check run say, and when the gate fails.

The checker's CLI and the service (app/host/publication.py, decision_output.py,
and the SQL release_decision it mirrors, kept equal by a test) use this module,
so the two can never tell a board's author different things.

* A finding counts unless it is waived (``.boardready.toml``) or excluded (the
  project's KiCad exclusions).
* blocked: any counting ``error`` finding (with ``--gate new`` only errors new
  against the baseline; existing ones count as ``high``). Only errors block:
  what KiCad 9 reports as an error (at the project's own severities), plus the
  deliberate checks beyond KiCad listed in docs/rules.md.
* at-risk: otherwise, any counting ``high`` or ``medium`` finding.
* ready: otherwise (``low`` and ``info`` never change readiness).
* score: 100 minus 25 per error, 10 per high, 4 per medium, 1 per low, each
  severity's total capped (error 75, high 40, medium 24, low 8) so that one
  noisy rule cannot hide the rest; then capped at 49 when blocked and 89 when
  at-risk, so the number never contradicts the verdict. A release decision
  shows its score under the same caps (FAIL 49, CONDITIONAL 89).
* release decision (the gate). A blocking finding is an ``error`` or ``high``
  one (``BLOCKING_SEVERITIES``, as the service's SQL counts them). Changes
  requested -> FAIL; an unwaived blocking finding -> FAIL; blocked with every
  blocking finding waived -> CONDITIONAL (PASS when approved); at-risk and
  approved -> PASS; otherwise the readiness's decision. The CLI has no review
  and no service waivers, so its decision is the gate's for a fresh pull
  request: FAIL on any counting error or high finding (``gate_decision``), and
  ``bin/check``'s default ``--fail-on gate`` fails exactly then.
* A finding this change relaxed (``relaxed``: it blocks under the base commit's
  policy, not under the head's; checker/policy.py) keeps the base's severity and
  counts: the gate fails until a person other than the author approves.
* A finding that depends on what is installed where the checker runs (which
  KiCad libraries a machine has) is never blocking: at most ``medium``.
"""
from __future__ import annotations

SEVERITIES = ("error", "high", "medium", "low", "info")
READINESS_BLOCKING = ("error",)               # what makes readiness "blocked"
AT_RISK_SEVERITIES = ("high", "medium")
BLOCKING_SEVERITIES = ("error", "high")       # what the gate fails on unless waived (SQL release_decision_inputs)

WEIGHTS = {"error": 25, "high": 10, "medium": 4, "low": 1, "info": 0}
CAPS = {"error": 75, "high": 40, "medium": 24, "low": 8, "info": 0}
READINESS_CAP = {"blocked": 49, "at-risk": 89, "ready": 100}

DECISION_FOR_READINESS = {"ready": "PASS", "at-risk": "CONDITIONAL", "blocked": "FAIL"}
DECISION_SCORE_CAP = {"PASS": 100, "CONDITIONAL": 89, "FAIL": 49, "UNKNOWN": 100}
VERDICT_WORDS = {
    "PASS": "Ready to release",
    "CONDITIONAL": "At risk: releasable with accepted findings",
    "FAIL": "Blocked: not ready to release",
    "UNKNOWN": "Readiness unknown",
}
# bin/check --fail-on: "gate" (the default) fails exactly when the release gate's
# decision is FAIL; the others by readiness alone.
FAILS_ON = {"gate": (), "blocked": ("blocked",), "at-risk": ("blocked", "at-risk"), "never": ()}
DEFAULT_FAIL_ON = "gate"

# Rules whose outcome depends on the machine the checker runs on, not on the
# repository: never more than medium, whatever a configuration says.
# KiCad's own library checks answer the same question about the machine kicad-cli ran on.
ENVIRONMENT_DEPENDENT_KICAD_TYPES = ("footprint_link_issues", "lib_symbol_issues", "lib_symbol_mismatch",
                                     "lib_footprint_issues", "lib_footprint_mismatch")
ENVIRONMENT_DEPENDENT_RULES = frozenset(
    {"sch.footprint-library-unknown", "erc.lib-symbol-mismatch-installed"}
    | {f"kicad.{kind}.{kicad_type}" for kind in ("erc", "drc") for kicad_type in ENVIRONMENT_DEPENDENT_KICAD_TYPES})
ENVIRONMENT_DEPENDENT_CEILING = "medium"


def effective_severity(severity: str, baseline: str | None, gate: str) -> str:
    if gate == "new" and severity == "error" and baseline == "existing":
        return "high"
    return severity


def readiness_of(counting: list[str]) -> str:
    """Readiness from the severities of the findings that count."""
    if any(s in READINESS_BLOCKING for s in counting):
        return "blocked"
    if any(s in AT_RISK_SEVERITIES for s in counting):
        return "at-risk"
    return "ready"


def score_of(counting: list[str], readiness: str) -> int:
    penalty = sum(min(CAPS[s], WEIGHTS[s] * counting.count(s)) for s in WEIGHTS)
    return max(0, min(100 - penalty, READINESS_CAP[readiness]))


def judge(findings, gate: str = "all") -> tuple[str, int]:
    """(readiness, score) of checker findings (objects with severity, baseline, counts)."""
    counting = [effective_severity(f.severity, f.baseline, gate) for f in findings if f.counts]
    readiness = readiness_of(counting)
    return readiness, score_of(counting, readiness)


def cap_environment_dependent(rule_id: str, severity: str) -> str:
    if rule_id in ENVIRONMENT_DEPENDENT_RULES and SEVERITIES.index(severity) < SEVERITIES.index(
            ENVIRONMENT_DEPENDENT_CEILING):
        return ENVIRONMENT_DEPENDENT_CEILING
    return severity


def is_blocking(severity: str) -> bool:
    return severity in BLOCKING_SEVERITIES


def gate_decision(readiness: str, counting: list[str]) -> str:
    """The release decision of a result before any review or service waiver: what the
    check run says when it completes, and what the CLI says."""
    blocking = sum(1 for s in counting if is_blocking(s))
    return release_decision(DECISION_FOR_READINESS[readiness], "pending", blocking, blocking)


def result_decision(result: dict) -> str:
    """gate_decision of an emitted run result (its findings that count). Under
    ``--gate new`` a finding already in the baseline is accepted debt: it keeps
    the result at risk but blocks nothing."""
    new_only = result.get("gate") == "new"
    counting = []
    for finding in result.get("findings", []):
        if finding.get("waived") or finding.get("excluded"):
            continue
        severity = finding["severity"]
        if new_only and finding.get("baseline") == "existing" and is_blocking(severity):
            severity = "medium"
        counting.append(severity)
    return gate_decision(result["readiness"], counting)


def release_decision(readiness_decision: str | None, review_decision: str, blocking: int,
                     unwaived_blocking: int, relaxed: int = 0) -> str | None:
    """The service's release decision (SQL boardready.release_decision, kept equal by a test).
    ``relaxed``: how many of the unwaived blocking findings this change relaxed
    (checker/policy.py); an approval (never the author's own but by break glass)
    accepts them as a waiver would, so until then they block."""
    if review_decision == "approved":
        unwaived_blocking -= relaxed
    if readiness_decision is None:
        return None
    if review_decision == "changes_requested":
        return "FAIL"
    if unwaived_blocking > 0:
        return "FAIL"
    if readiness_decision == "FAIL" and blocking > 0:
        return "PASS" if review_decision == "approved" else "CONDITIONAL"
    if readiness_decision == "CONDITIONAL" and review_decision == "approved":
        return "PASS"
    return readiness_decision


def shown_score(decision: str, score: int) -> int:
    """The score a decision shows: never above the cap of its verdict."""
    return min(int(score), DECISION_SCORE_CAP.get(decision, 100))


def headline(decision: str, score: int, extra: str | None = None) -> str:
    """The one line both the CLI and the check run title say, e.g.
    ``Blocked: not ready to release (score 40)``."""
    inside = f"score {shown_score(decision, score)}" + (f"; {extra}" if extra else "")
    return f"{VERDICT_WORDS[decision]} ({inside})"


def gate_fails(result: dict, fail_on: str = DEFAULT_FAIL_ON) -> bool:
    """Whether bin/check exits 1 for this run result."""
    if fail_on == "gate":
        return result_decision(result) == "FAIL"
    return result["readiness"] in FAILS_ON[fail_on]


def relaxed_settings(findings) -> list[tuple[str, str, int]]:
    """(file, setting, how many findings it relaxed) of a result's relaxed findings
    (checker/policy.py), in the order first met: what the CLI, the check run and the
    run page say this change relaxed."""
    counted: dict[tuple[str, str], int] = {}
    for finding in findings:
        for setting in (finding.get("relaxed") or {}).get("settings") or ():
            key = (str(setting.get("file", "")), str(setting.get("setting", "")))
            counted[key] = counted.get(key, 0) + 1
    return [(file, setting, count) for (file, setting), count in counted.items()]


RELAXED_WORDS = ("This change relaxes the project's policy: {count} finding(s) that block under the base commit's "
                 "policy do not under this commit's. They count as the base says until a person other than the "
                 "author approves.")


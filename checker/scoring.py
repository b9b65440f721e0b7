"""Readiness and score, from the findings that count.

* A finding counts unless it is waived (.boardready.toml) or excluded (the
  project's KiCad exclusions).
* blocked: any counting ``error`` finding; with ``--gate new`` only errors
  that are new against the baseline block, and existing ones count as ``high``.
* at-risk: otherwise, any counting ``high`` or ``medium`` finding.
* ready: otherwise (``low`` and ``info`` never change readiness).
* score: 100 minus 25 per error, 10 per high, 4 per medium, 1 per low, each
  severity's total capped (error 75, high 40, medium 24, low 8) so that one
  noisy rule cannot hide the rest; then capped at 49 when blocked and 89
  when at-risk, so the number never contradicts the verdict.
"""
from __future__ import annotations

from .findings import Finding

WEIGHTS = {"error": 25, "high": 10, "medium": 4, "low": 1, "info": 0}
CAPS = {"error": 75, "high": 40, "medium": 24, "low": 8, "info": 0}
READINESS_CAP = {"blocked": 49, "at-risk": 89, "ready": 100}


def effective_severity(finding: Finding, gate: str) -> str:
    if gate == "new" and finding.severity == "error" and finding.baseline == "existing":
        return "high"
    return finding.severity


def judge(findings: list[Finding], gate: str = "all") -> tuple[str, int]:
    counting = [effective_severity(f, gate) for f in findings if f.counts]
    if "error" in counting:
        readiness = "blocked"
    elif "high" in counting or "medium" in counting:
        readiness = "at-risk"
    else:
        readiness = "ready"
    penalty = 0
    for severity, weight in WEIGHTS.items():
        penalty += min(CAPS[severity], weight * counting.count(severity))
    score = max(0, min(100 - penalty, READINESS_CAP[readiness]))
    return readiness, score

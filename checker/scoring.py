"""Readiness and score, from the findings that count: the decision table lives
in checker/verdict.py (shared with the service); this name stays for callers."""
from __future__ import annotations

from .verdict import CAPS, READINESS_CAP, WEIGHTS, judge  # noqa: F401  (re-exported)


def effective_severity(finding, gate: str) -> str:
    from .verdict import effective_severity as of

    return of(finding.severity, finding.baseline, gate)

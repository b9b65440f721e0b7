"""Human output: findings grouped by severity, coloured on a terminal."""
from __future__ import annotations

from .findings import SEVERITIES
from .verdict import RELAXED_WORDS, headline, relaxed_settings, result_decision

_COLOURS = {"error": "31;1", "high": "31", "medium": "33", "low": "36", "info": "37",
            "blocked": "31;1", "at-risk": "33;1", "ready": "32;1"}


def render(result: dict, colour: bool) -> str:
    def paint(text: str, key: str) -> str:
        return f"\x1b[{_COLOURS[key]}m{text}\x1b[0m" if colour else text

    lines = []
    findings = result["findings"]
    for severity in SEVERITIES:
        group = [f for f in findings if f["severity"] == severity]
        if not group:
            continue
        lines.append(paint(f"{severity.upper()} ({len(group)})", severity))
        width = max(len(f["ruleId"]) for f in group)
        for finding in group:
            where = finding.get("path", "")
            if finding.get("startLine"):
                where += f":{finding['startLine']}"
            marks = []
            if finding.get("waived"):
                marks.append("waived")
            if finding.get("excluded"):
                marks.append("excluded")
            if finding.get("baseline"):
                marks.append(finding["baseline"])
            if finding.get("relaxed"):
                marks.append(f"relaxed by this change to {finding['relaxed']['to']}")
            suffix = f" [{', '.join(marks)}]" if marks else ""
            lines.append(f"  {finding['ruleId']:<{width}}  {where:<32} {finding['message']}{suffix}")
        lines.append("")
    relaxed = relaxed_settings(findings)
    if relaxed:
        lines.append(paint(RELAXED_WORDS.format(count=sum(1 for f in findings if f.get("relaxed"))), "error"))
        lines += [f"  {file}: {setting} ({count} finding(s))" for file, setting, count in relaxed]
        lines.append("")
    verdict = result["readiness"]
    # The same words as the check run's title (checker/verdict.py).
    words = headline(result_decision(result), result["score"])
    lines.append(f"{paint(words, verdict)}  readiness {verdict}, score {result['score']}/100  "
                 f"profile {result.get('profile', '?')}  {len(findings)} finding(s)  project {result.get('project', '.')}")
    return "\n".join(lines) + "\n"

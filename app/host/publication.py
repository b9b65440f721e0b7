"""What a release run's result looks like on the code host: the check run's
output and annotations, and the pull request comment.

Pure functions over the stored result (run_result_publication); the outbox
worker sends what they build. Limits are the code host's: 50 annotations per
request, 255 characters of title, 65535 of summary and text.
"""
from __future__ import annotations

from checker.verdict import BLOCKING_SEVERITIES, RELAXED_WORDS, VERDICT_WORDS, headline, relaxed_settings, shown_score

ANNOTATIONS_PER_REQUEST = 50
TITLE_LIMIT = 255
TEXT_LIMIT = 65535
MESSAGE_LIMIT = 64 * 1024
COMMENT_MARKER = "<!-- boardready:release-readiness -->"

ANNOTATION_LEVEL = {"error": "failure", "high": "failure", "medium": "warning", "low": "notice", "info": "notice"}
SEVERITY_ORDER = ("error", "high", "medium", "low", "info")
VERDICT = VERDICT_WORDS   # the checker's words (checker/verdict.py): the CLI says the same


def annotations(findings: list[dict]) -> list[dict]:
    """Annotations for the findings that carry a path and a line, in the checker's order."""
    out = []
    for finding in findings:
        if not finding.get("path") or not finding.get("startLine"):
            continue
        start = finding["startLine"]
        end = finding.get("endLine") or start
        annotation = {
            "path": finding["path"], "start_line": start, "end_line": max(end, start),
            "annotation_level": ANNOTATION_LEVEL[finding["severity"]],
            "message": finding["message"][:MESSAGE_LIMIT],
            "title": (finding.get("title") or finding["ruleId"])[:TITLE_LIMIT],
            "raw_details": f"rule {finding['ruleId']}, severity {finding['severity']}{_relaxed_note(finding)}",
        }
        # Columns only make sense, and are only accepted, within one line.
        if end == start and finding.get("startColumn") and finding.get("endColumn"):
            annotation["start_column"] = finding["startColumn"]
            annotation["end_column"] = max(finding["endColumn"], finding["startColumn"])
        out.append(annotation)
    return out


def batches(items: list, size: int = ANNOTATIONS_PER_REQUEST) -> list[list]:
    return [items[i:i + size] for i in range(0, len(items), size)] or [[]]


def truncate_lines(text: str, limit: int, review_url: str) -> str:
    """At most `limit` characters, cut at a line boundary, with a note that
    points to the review page for the rest."""
    if len(text) <= limit:
        return text
    note = f"\n\n_Truncated: the full list is on the review page: {review_url}_"
    budget = limit - len(note)
    cut = text.rfind("\n", 0, budget)
    return text[:cut if cut > 0 else budget] + note


def _counts(findings: list[dict]) -> str:
    counts = {s: 0 for s in SEVERITY_ORDER}
    for finding in findings:
        counts[finding["severity"]] += 1
    return ", ".join(f"{n} {s}" for s, n in counts.items() if n) or "no findings"


def _escape_cell(value: str) -> str:
    return value.replace("|", "\\|").replace("\n", " ")


def relaxed_lines(findings: list[dict]) -> list[str]:
    """What the pull request relaxed of the project's policy (checker/policy.py): the
    settings, each with its file, and that a person other than the author must approve."""
    relaxed = relaxed_settings(findings)
    if not relaxed:
        return []
    count = sum(1 for f in findings if f.get("relaxed"))
    return ["", f"**Policy relaxed by this pull request.** {RELAXED_WORDS.format(count=count)}", ""] + [
        f"- `{_escape_cell(file)}`: `{_escape_cell(setting)}` ({n} finding(s))" for file, setting, n in relaxed[:50]]


def _relaxed_note(finding: dict) -> str:
    relaxed = finding.get("relaxed")
    return f" (relaxed by this pull request to {relaxed.get('to')}: counts until approved)" if relaxed else ""


def findings_table(findings: list[dict]) -> str:
    lines = ["| severity | rule | where | message |", "|---|---|---|---|"]
    for finding in sorted(findings, key=lambda f: SEVERITY_ORDER.index(f["severity"])):
        where = finding.get("path") or ""
        if where and finding.get("startLine"):
            where += f":{finding['startLine']}"
        lines.append(f"| {finding['severity']} | `{finding['ruleId']}` | {_escape_cell(where)} | "
                     f"{_escape_cell(finding['message'][:500] + _relaxed_note(finding))} |")
    return "\n".join(lines)


def token_published_note(result: dict) -> list[str]:
    """A result published with an API token (the repository opted in) says so:
    it was not attested by the signed readiness workflow."""
    if result.get("source") != "bearer_result":
        return []
    return ["", f"Published with API token `{result.get('api_token_id')}` (POST /api/v1/runs/result), not by the "
                "signed readiness workflow: this repository accepts token-published results."]


def check_run_output(result: dict, review_url: str) -> dict:
    """title, summary and text of the completed check run."""
    findings = result["findings"]
    title = headline(result["decision"], result["score"])[:TITLE_LIMIT]
    summary = "\n".join([
        f"**{VERDICT[result['decision']]}**: readiness `{result['readiness']}`, "
        f"score {shown_score(result['decision'], result['score'])}/100, "
        f"decision `{result['decision']}`.",
        "",
        f"Findings: {_counts(findings)}.",
        f"Checked by {result['tool_name']} {result['tool_version']}"
        + (f" on KiCad files of version {result['kicad_version']}." if result.get("kicad_version") else "."),
        f"Review page: {review_url}",
    ] + token_published_note(result) + relaxed_lines(findings))
    text = findings_table(findings) if findings else "No findings."
    return {"title": title, "summary": truncate_lines(summary, TEXT_LIMIT, review_url),
            "text": truncate_lines(text, TEXT_LIMIT, review_url)}


def comment_body(result: dict, review_url: str) -> str:
    findings = result["findings"]
    blocking = [f for f in findings if f["severity"] in BLOCKING_SEVERITIES]
    lines = [
        COMMENT_MARKER,
        f"### boardready: {VERDICT[result['decision']]}",
        "",
        f"Commit `{(result.get('head_sha') or '')[:12]}`: readiness `{result['readiness']}`, "
        f"decision `{result['decision']}`, score {shown_score(result['decision'], result['score'])}/100 "
        f"({_counts(findings)}).",
    ]
    lines += relaxed_lines(findings)
    if blocking:
        lines += ["", "Blocking findings:", ""]
        lines += [f"- `{f['ruleId']}` {f.get('path') or ''}{':' + str(f['startLine']) if f.get('startLine') else ''}: "
                  f"{f['message'][:300]}" for f in blocking[:20]]
        if len(blocking) > 20:
            lines.append(f"- and {len(blocking) - 20} more")
    lines += ["", f"Details: {review_url}"]
    return truncate_lines("\n".join(lines), TEXT_LIMIT, review_url)


# -- A check run closed without a result ---------------------------------------
# SQL stores why (a reason code in the completion's params); the words a person
# reads are here with the rest, and nowhere else.
WORKFLOW_MISSING = ("Readiness check could not start",
                    "boardready could not start the readiness check because this repository has no "
                    "`.github/workflows/readiness-runner.yml` on the branch it runs from. Add the workflow from the "
                    "boardready documentation (it checks out this commit and runs the KiCad checks), then push a new "
                    "commit or re-run this check. Until then this board cannot be marked ready.")
DID_NOT_FINISH_TITLE = "Readiness check did not finish"
DID_NOT_FINISH = ("boardready could not confirm a signed readiness result for this commit, so this board cannot be "
                  "marked ready (reason: `{reason}`). Push a new commit or re-run this check to try again.")


SUPERSEDED_TITLE = "Superseded by a newer commit"
SUPERSEDED = "A newer commit{head} was pushed to this pull request; its readiness check replaces this one."


def closed_words(reason_code: str, newer_head_sha: str | None = None) -> tuple[str, str]:
    """(title, summary) of a check run closed without a result, for its reason code."""
    if reason_code == "superseded":
        return SUPERSEDED_TITLE, SUPERSEDED.format(head=f" ({newer_head_sha[:12]})" if newer_head_sha else "")
    if reason_code == "workflow_missing":
        return WORKFLOW_MISSING
    return DID_NOT_FINISH_TITLE, DID_NOT_FINISH.format(reason=reason_code)


def closed_output(params: dict) -> dict:
    """The output of a check run closed without a result, rendered from its
    reason code (a completion queued before reason codes, by 0.6.0, has none:
    unknown)."""
    title, summary = closed_words(params.get("reasonCode") or "unknown", params.get("newerHeadSha"))
    return {"title": title[:TITLE_LIMIT], "summary": summary[:TEXT_LIMIT]}


RESTORED = ("boardready restored this check run's conclusion (`{conclusion}`) after its last update did not reach "
            "the code host. Details: {review_url}")


def restored_output(run_status: str, decision: str | None, failure_reason: str | None, expected_conclusion: str,
                    review_url: str) -> dict:
    """The output of a check run whose final state reconciliation restores
    (workers/reconcile_check_runs.py): the words it would have had, restating
    the stored decision; the findings stay on the review page."""
    if run_status == "superseded":
        title, why = closed_words("superseded")
    elif run_status == "completed":
        title = VERDICT.get(decision or "UNKNOWN", "Readiness decided")
        why = f"The release decision is `{decision or 'UNKNOWN'}`."
    else:
        title, why = closed_words(failure_reason or "unknown")
    summary = f"{why}\n\n" + RESTORED.format(conclusion=expected_conclusion, review_url=review_url)
    return {"title": title[:TITLE_LIMIT], "summary": summary[:TEXT_LIMIT]}

"""What a check run says when its run's release decision changes after the
first completion (an approval, changes requested, a waiver, a waiver's expiry):
the new conclusion with words that say why. The annotations stay as they were.
"""
from __future__ import annotations

from app.host.publication import TEXT_LIMIT, TITLE_LIMIT, VERDICT, relaxed_lines
from checker.verdict import BLOCKING_SEVERITIES, headline, shown_score

REVIEW_WORDS = {"approved": "approved", "changes_requested": "changes requested", "pending": "not reviewed yet"}


def decision_output(row: dict, review_url: str, relaxed: list[dict] | None = None) -> dict:
    """title and summary for release_decision_publication's row; ``relaxed``: the
    findings the pull request's own policy relaxed, each ``{"relaxed": ...}``."""
    decision = row["decision"]
    title = headline(decision, row["score"], f"review: {REVIEW_WORDS[row['review_decision']]}")
    lines = [
        f"**{VERDICT[decision]}**: release decision `{decision}` from readiness `{row['readiness']}` "
        f"(score {shown_score(decision, row['score'])}/100), the review "
        f"({REVIEW_WORDS[row['review_decision']]}) and the waivers.",
        "",
        f"Blocking findings ({', '.join(BLOCKING_SEVERITIES)}): {row['blocking']}, "
        f"of which {row['unwaived_blocking']} not waived; "
        f"waived findings in all: {row['waived']}.",
        f"Checked by {row['tool_name']} {row['tool_version']}.",
        f"Review page: {review_url}",
    ] + relaxed_lines(relaxed or [])
    if relaxed and row["review_decision"] == "approved":
        lines.append("The review approved the relaxation.")
    return {"title": title[:TITLE_LIMIT], "summary": "\n".join(lines)[:TEXT_LIMIT]}

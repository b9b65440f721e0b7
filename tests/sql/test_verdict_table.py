"""The service decides with the checker's table (checker/verdict.py): the SQL
release decision equals it on every input, and a check run's title carries
the CLI's words with the score under its verdict's cap."""
from __future__ import annotations

import itertools

from app.host.decision_output import decision_output
from app.host.publication import check_run_output
from checker.verdict import DECISION_SCORE_CAP, VERDICT_WORDS, headline, release_decision

READINESS_DECISIONS = ("PASS", "CONDITIONAL", "FAIL", "UNKNOWN", None)
REVIEWS = ("pending", "approved", "changes_requested")
COUNTS = ((0, 0), (1, 0), (1, 1), (3, 2))


def test_sql_release_decision_is_the_checker_table(owner):
    cases = list(itertools.product(READINESS_DECISIONS, REVIEWS, COUNTS))
    for readiness, review, (blocking, unwaived) in cases:
        row = owner.execute("SELECT boardready_private.release_decision(%s, %s, %s, %s) AS d",
                            (readiness, review, blocking, unwaived)).fetchone()
        assert row["d"] == release_decision(readiness, review, blocking, unwaived), (readiness, review, blocking)


def _result(decision: str, readiness: str, score: int) -> dict:
    return {"decision": decision, "readiness": readiness, "score": score, "findings": [],
            "tool_name": "boardready-checker", "tool_version": "0.1.0"}


def test_every_title_keeps_the_score_under_its_verdicts_cap():
    # An at-risk result (score up to 89) whose unwaived high finding fails the gate.
    output = check_run_output(_result("FAIL", "at-risk", 89), "https://review")
    assert output["title"] == "Blocked: not ready to release (score 49)" == headline("FAIL", 89)
    for decision, cap in DECISION_SCORE_CAP.items():
        title = check_run_output(_result(decision, "ready", 100), "https://review")["title"]
        assert title.startswith(VERDICT_WORDS[decision]) and f"(score {cap})" in title
    row = {"decision": "FAIL", "readiness": "ready", "score": 100, "review_decision": "changes_requested",
           "blocking": 0, "unwaived_blocking": 0, "waived": 0, "tool_name": "t", "tool_version": "1"}
    assert decision_output(row, "https://review")["title"] == (
        "Blocked: not ready to release (score 49; review: changes requested)")

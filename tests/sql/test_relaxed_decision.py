"""A relaxed finding (the pull request's own policy lowered it: checker/policy.py)
counts until a person other than the author approves: the SQL release decision
with relaxed findings equals the checker's table on every input."""
from __future__ import annotations

import itertools

from checker.verdict import release_decision

READINESS_DECISIONS = ("PASS", "CONDITIONAL", "FAIL", "UNKNOWN", None)
REVIEWS = ("pending", "approved", "changes_requested")
# (blocking, unwaived blocking, of which relaxed)
COUNTS = ((0, 0, 0), (1, 1, 1), (2, 2, 1), (3, 1, 1), (2, 0, 0))


def test_sql_release_decision_with_relaxed_findings_is_the_checker_table(owner):
    for readiness, review, (blocking, unwaived, relaxed) in itertools.product(READINESS_DECISIONS, REVIEWS, COUNTS):
        row = owner.execute("SELECT boardready_private.release_decision(%s, %s, %s, %s, %s) AS d",
                            (readiness, review, blocking, unwaived, relaxed)).fetchone()
        assert row["d"] == release_decision(readiness, review, blocking, unwaived, relaxed), (readiness, review)


def test_a_relaxed_finding_fails_the_gate_until_approved():
    # The checker kept the relaxed finding at the base's severity: readiness blocked.
    assert release_decision("FAIL", "pending", 1, 1, relaxed=1) == "FAIL"
    assert release_decision("FAIL", "approved", 1, 1, relaxed=1) == "PASS"
    assert release_decision("FAIL", "changes_requested", 1, 1, relaxed=1) == "FAIL"
    # Another blocking finding that is not relaxed still needs its waiver.
    assert release_decision("FAIL", "approved", 2, 2, relaxed=1) == "FAIL"

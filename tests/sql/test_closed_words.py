"""A check run closed without a result: SQL stores the reason code, and the
words are rendered in app/host/publication.py. For one release SQL still
stores its own words beside the code (the previous release's outbox worker
publishes those), so both must say the same."""
from __future__ import annotations

import pytest

from app.host import publication

CASES = [("workflow_missing", None), ("superseded", "0123456789abcdef0123"), ("superseded", None),
         ("host_workflow_not_found", None), ("deadline_exceeded", None)]


@pytest.mark.parametrize("reason, head", CASES)
def test_the_words_of_the_previous_release_match_the_rendered_ones(owner, reason, head):
    stored = owner.execute("SELECT boardready_private.release_run_closed_words(%s, %s) AS w", (reason, head)).fetchone()["w"]
    assert (stored["title"], stored["summary"]) == publication.closed_words(reason, head)


def test_the_output_comes_from_the_reason_code_or_from_words_queued_before():
    rendered = publication.closed_output({"conclusion": "failure", "reasonCode": "workflow_missing",
                                          "title": "old words", "summary": "old summary"})
    assert rendered == {"title": publication.WORKFLOW_MISSING[0], "summary": publication.WORKFLOW_MISSING[1]}
    queued_before = publication.closed_output({"conclusion": "cancelled", "title": "T" * 300, "summary": "s"})
    assert queued_before == {"title": "T" * publication.TITLE_LIMIT, "summary": "s"}

"""A check run closed without a result: SQL stores the reason code only, and
the words a person reads are rendered in app/host/publication.py, the one
place that has them (the reconciler's restored output included)."""
from __future__ import annotations

import re
from pathlib import Path

from app.host import publication
from app.migrations import function_sources

ROOT = Path(__file__).resolve().parents[2]


def test_the_output_comes_from_the_reason_code():
    rendered = publication.closed_output({"conclusion": "failure", "reasonCode": "workflow_missing"})
    assert rendered == {"title": publication.WORKFLOW_MISSING[0], "summary": publication.WORKFLOW_MISSING[1]}
    superseded = publication.closed_output({"conclusion": "cancelled", "reasonCode": "superseded",
                                            "newerHeadSha": "0123456789abcdef0123"})
    assert superseded["title"] == publication.SUPERSEDED_TITLE and "(0123456789ab)" in superseded["summary"]
    queued_before = publication.closed_output({"conclusion": "cancelled", "title": "old words", "summary": "s"})
    assert queued_before["title"] == publication.DID_NOT_FINISH_TITLE and "`unknown`" in queued_before["summary"]


def test_the_restored_output_says_what_the_closed_one_would():
    url = "https://boardready.example/release-runs/7"
    superseded = publication.restored_output("superseded", None, None, "cancelled", url)
    assert superseded["title"] == publication.closed_words("superseded")[0]
    assert superseded["summary"].startswith(publication.closed_words("superseded")[1])
    failed = publication.restored_output("failed", None, "deadline_exceeded", "failure", url)
    assert failed["summary"].startswith(publication.closed_words("deadline_exceeded")[1])
    assert "restored this check run's conclusion (`failure`)" in failed["summary"] and url in failed["summary"]
    decided = publication.restored_output("completed", "FAIL", None, "failure", url)
    assert decided["title"] == publication.VERDICT["FAIL"]


def test_no_check_run_words_in_sql_or_the_workers():
    """The titles live in publication.py only: neither a function body nor a worker spells one."""
    titles = [publication.SUPERSEDED_TITLE, publication.DID_NOT_FINISH_TITLE, publication.WORKFLOW_MISSING[0]]
    sources = {name: sql for name, sql in function_sources()}
    sources.update({str(p.relative_to(ROOT)): p.read_text(encoding="utf-8") for p in (ROOT / "workers").rglob("*.py")})
    found = sorted((name, title) for name, text in sources.items() for title in titles
                   if re.search(re.escape(title), text))
    assert found == []

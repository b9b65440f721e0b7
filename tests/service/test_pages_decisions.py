"""The run page's decisions through the real service on a real HTTP server and
the code host emulator (its OAuth pages, permissions and REST answers): a
request for changes keeps its comment (the run page's history shows it, the
pull request gets it), beside the previous release's function that knows
nothing of comments."""
from __future__ import annotations

import re

import pytest

from app import database
from tests.service.sessionkit import decided_run, finding
from tests.service.test_authority import ORG, Browser, _stack

FP_ERROR = "e1" * 16


@pytest.fixture
def stack(pool, owner):
    yield from _stack(pool, owner)


def post_form(person: Browser, path: str, fields: dict):
    """A form of the run page, as the browser sends it (the CSRF token a field), redirects followed."""
    return person.http.post(person.base + path, data={**fields, "csrf_token": person.csrf})


def history(page_html: str) -> str:
    return page_html.split('id="history"', 1)[1]


def test_a_request_for_changes_keeps_its_comment_shows_it_and_posts_it(stack, owner, pool):
    repo = stack.repos[0]
    stack.host.open_pull_request(repo["full_name"], number=1, title="Rev C")
    run = decided_run(owner, pool, repo["id"], readiness="blocked", findings=[finding(0, "error", FP_ERROR)])
    reviewer = stack.sign_in("rhea")
    path = f"/release-runs/{run['id']}"

    answer = post_form(reviewer, path + "/approvals",
                       {"status": "changes_requested", "comment": "Move C3 closer to U1\nand re-run the check."})
    assert answer.status_code == 200 and "done=changes_requested_commented" in str(answer.url)
    # Kept by the service, on the approval, in the same call as the request.
    stored = owner.execute("SELECT status, comment, comment_at = updated_at AS current FROM review_approvals "
                           "WHERE review_id = %s", (run["review_id"],)).fetchone()
    assert stored == {"status": "changes_requested", "comment": "Move C3 closer to U1\nand re-run the check.",
                      "current": True}
    # Shown in the history, by the reviewer's login; and on the pull request, as today.
    shown = history(answer.text)
    assert "rhea" in shown and "changes requested" in shown
    assert re.search(r'<blockquote class="review-comment">Move C3 closer to U1\nand re-run the check.</blockquote>',
                     shown)
    [posted] = [c["body"] for c in stack.host.comments(repo["full_name"]) if "Changes requested" in c["body"]]
    assert "by rhea" in posted and "> Move C3 closer to U1\n> and re-run the check." in posted

    # The same request again with another comment (one the code host missed, sent again): replaced, posted.
    again = post_form(reviewer, path + "/approvals", {"status": "changes_requested", "comment": "Also C4."})
    assert "done=changes_requested_commented" in str(again.url) and "Also C4." in history(again.text)
    assert "Move C3" not in history(again.text)
    assert len([c for c in stack.host.comments(repo["full_name"]) if "Changes requested" in c["body"]]) == 2

    # A comment is markup-escaped on the page, and one too long is refused with nothing changed.
    too_long = post_form(reviewer, path + "/approvals", {"status": "changes_requested", "comment": "x" * 4001})
    assert too_long.status_code == 400 and "invalid_comment" in too_long.text
    assert owner.execute("SELECT comment FROM review_approvals WHERE review_id = %s",
                         (run["review_id"],)).fetchone()["comment"] == "Also C4."


def test_the_previous_release_function_keeps_working_and_hides_a_comment_it_replaced(stack, owner, pool):
    repo = stack.repos[0]
    stack.host.open_pull_request(repo["full_name"], number=1)
    run = decided_run(owner, pool, repo["id"], readiness="blocked", findings=[finding(0, "error", FP_ERROR)])
    reviewer = stack.sign_in("rhea")
    path = f"/release-runs/{run['id']}"
    post_form(reviewer, path + "/approvals", {"status": "changes_requested", "comment": "<b>Not yet</b>"})
    assert "&lt;b&gt;Not yet&lt;/b&gt;" in history(reviewer.get(path).text)

    # A process of the previous release replaces the request with an approval, then requests changes
    # again, with review_record_approval as it calls it (it knows no comment).
    actor = f"host-user:{reviewer.user_id}"
    with pool.connection() as conn:
        for status in ("approved", "changes_requested"):
            row = database.call_one(conn, "review_record_approval", p_review_id=run["review_id"],
                                    p_repository_ids=[repo["id"]], p_actor=actor, p_status=status,
                                    p_break_glass=False, p_break_glass_reason=None)
            assert row["outcome"] == "recorded"
            if status == "approved":
                assert "Not yet" not in history(reviewer.get(path).text)
    # The old comment is not shown under the newer request it was not written with.
    shown = history(reviewer.get(path).text)
    assert "changes requested" in shown and "Not yet" not in shown and "review-comment" not in shown

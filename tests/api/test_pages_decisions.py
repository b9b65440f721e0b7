"""The run page's decisions through the real service on a real HTTP server and
the code host emulator (its OAuth pages, permissions and REST answers): a
request for changes keeps its comment (the run page's history shows it, the
pull request gets it), beside the previous release's function that knows
nothing of comments; the forms a viewer's permission allows; a person the
service never kept a login for, named through the code host."""
from __future__ import annotations

import re

import httpx

import pytest

from app import sql_api
from emulator import openapi_check
from tests.helpers.sessions import AUTHOR_ID, decided_run, finding
from tests.api.test_authority import ORG, Browser, _stack

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


def test_the_request_for_changes_comment_is_not_posted_verbatim(stack, owner, pool):
    """No @mention notifies anyone in the app's name, and no markup (the outbox's marker
    in an HTML comment) gets through (issue 36)."""
    repo = stack.repos[0]
    stack.host.open_pull_request(repo["full_name"], number=1)
    run = decided_run(owner, pool, repo["id"], readiness="blocked", findings=[finding(0, "error", FP_ERROR)])
    reviewer = stack.sign_in("rhea")
    words = "@acme-hw/everyone look <!-- boardready:release-readiness --> and @octocat too"
    answer = post_form(reviewer, f"/release-runs/{run['id']}/approvals", {"status": "changes_requested",
                                                                          "comment": words})
    assert "done=changes_requested_commented" in str(answer.url)
    [posted] = [c["body"] for c in stack.host.comments(repo["full_name"]) if "Changes requested" in c["body"]]
    assert not re.search(r"@[A-Za-z0-9]", posted) and "<!--" not in posted
    assert "@\u200bacme-hw/everyone" in posted and "@\u200boctocat" in posted
    # Kept as written on the approval (the page escapes it when it shows it).
    assert owner.execute("SELECT comment FROM review_approvals").fetchone()["comment"] == words


def test_an_approval_without_a_comment_hides_a_comment_it_replaced(stack, owner, pool):
    repo = stack.repos[0]
    stack.host.open_pull_request(repo["full_name"], number=1)
    run = decided_run(owner, pool, repo["id"], readiness="blocked", findings=[finding(0, "error", FP_ERROR)])
    reviewer = stack.sign_in("rhea")
    path = f"/release-runs/{run['id']}"
    post_form(reviewer, path + "/approvals", {"status": "changes_requested", "comment": "<b>Not yet</b>"})
    assert "&lt;b&gt;Not yet&lt;/b&gt;" in history(reviewer.get(path).text)

    # The request is replaced with an approval, then changes are requested again, without a comment (as
    # the previous release's review_record_approval, sql/compat, records them: through this helper).
    actor = f"host-user:{reviewer.user_id}"
    for status in ("approved", "changes_requested"):
        row = owner.execute("SELECT * FROM boardready_private.review_approval_record(%s, %s, %s, %s, false, NULL, now())",
                            (run["review_id"], [repo["id"]], actor, status)).fetchone()
        assert row["outcome"] == "recorded"
        if status == "approved":
            assert "Not yet" not in history(reviewer.get(path).text)
    # The old comment is not shown under the newer request it was not written with.
    shown = history(reviewer.get(path).text)
    assert "changes requested" in shown and "Not yet" not in shown and "review-comment" not in shown
    # A comment goes only with a request for changes: with an approval it is refused, nothing recorded.
    with pool.connection() as conn:
        refused = sql_api.review_record_approval_comment_v2(conn, review_id=run["review_id"],
                                                            repository_ids=[repo["id"]], actor=actor, status="approved",
                                                            break_glass=False, break_glass_reason=None, comment="fine",
                                                            limit=30)
    assert refused["outcome"] == "invalid_comment"
    assert owner.execute("SELECT status FROM review_approvals WHERE review_id = %s",
                         (run["review_id"],)).fetchone()["status"] == "changes_requested"


# ---- the forms a viewer's permission allows ----------------------------------------------------

def forms_of(page_html: str) -> dict:
    """What the run page offers: each form's action and its buttons' values."""
    return {"approve": 'name="status" value="approved"' in page_html,
            "request_changes": 'name="status" value="changes_requested"' in page_html,
            "waive": 'name="fingerprint"' in page_html,
            "revoke": 'name="revoke"' in page_html,
            "break_glass": 'name="break_glass"' in page_html,
            "read_only": 'id="read-only"' in page_html}


def test_forms_are_offered_only_to_viewers_whose_permission_allows_them(stack, owner, pool):
    repo = stack.repos[0]
    run = decided_run(owner, pool, repo["id"], readiness="blocked",
                      findings=[finding(0, "error", FP_ERROR), finding(1, "high", "f1" * 16)])
    path = f"/release-runs/{run['id']}"
    admin = stack.sign_in("lead")
    waived = post_form(admin, f"{path}/waivers", {"fingerprint": FP_ERROR, "reason": "A test point"})
    assert "done=waived" in str(waived.url)
    assert forms_of(waived.text) == {"approve": True, "request_changes": True, "waive": True, "revoke": True,
                                     "break_glass": False, "read_only": False}

    # Read-only people on the code host (pull, triage): the review and the findings, no form that answers 403.
    for login, role in (("puller", "pull"), ("triager", "triage")):
        reader = stack.sign_in(login, default_role=role)
        page = reader.get(path)
        assert page.status_code == 200 and "A test point" in page.text   # the waiver and its reason are read
        assert forms_of(page.text) == {"approve": False, "request_changes": False, "waive": False, "revoke": False,
                                       "break_glass": False, "read_only": True}
        assert "need write (push) access to " + repo["full_name"] in " ".join(page.text.split())
        # A form posted anyway (a page left open) is still refused by the right's check, nothing recorded.
        refused = post_form(reader, f"{path}/approvals", {"status": "approved"})
        assert refused.status_code == 403 and "insufficient_scope" in refused.text
        assert forms_of(refused.text)["read_only"]
    assert owner.execute("SELECT count(*) AS n FROM review_approvals").fetchone()["n"] == 0

    # Push: decides and waives, no break-glass; the pull request's author with push cannot approve at all.
    pusher = stack.sign_in("pusher", default_role="push")
    assert forms_of(pusher.get(path).text) == {"approve": True, "request_changes": True, "waive": True,
                                               "revoke": True, "break_glass": False, "read_only": False}
    author = stack.sign_in("author", user_id=AUTHOR_ID, default_role="push")
    offered = forms_of(author.get(path).text)
    assert offered["request_changes"] and not offered["approve"] and not offered["break_glass"]
    assert "cannot approve it" in author.get(path).text
    # The author with admin on the code host (the lead's own pull request) is offered break-glass.
    own = decided_run(owner, pool, repo["id"], pr_number=2, readiness="at-risk", author_id=admin.user_id)
    offered = forms_of(admin.get(f"/release-runs/{own['id']}").text)
    assert offered["break_glass"] and offered["approve"] and offered["request_changes"]


# ---- people by login, through the code host ---------------------------------------------------

def test_the_run_page_names_a_person_through_the_code_host(stack, owner, pool):
    repo = stack.repos[0]
    run = decided_run(owner, pool, repo["id"], readiness="at-risk")
    # A reviewer who never signed in to this service (a token of theirs approved, say): no session,
    # no account, no pull request of theirs; the service keeps nothing that names them.
    ghost = stack.host.create_user("quiet-reviewer", organizations=[ORG], sign_in=False)
    actor = f"host-user:{ghost['id']}"
    with pool.connection() as conn:
        assert [person["shown"] for person in sql_api.people_logins(conn, actors=[actor])] == [None]
        sql_api.review_record_approval_v2(conn, review_id=run["review_id"], repository_ids=[repo["id"]], actor=actor,
                                          status="approved", break_glass=False, break_glass_reason=None, limit=30)
    viewer = stack.sign_in("lead")
    shown = history(viewer.get(f"/release-runs/{run['id']}").text)
    assert "quiet-reviewer" in shown and f">{actor}<" not in shown
    # Asked of the code host with the installation's token, in its own shape (the REST description's).
    [asked] = stack.host.requests(operation_id="users/get-by-id")
    assert asked["path"] == f"/user/{ghost['id']}" and asked["status"] == 200
    openapi_check.validate_request("GET", asked["path"], None)
    assert "authorization" in asked["headers"]   # the installation token (the log redacts it)
    # Kept: the next view does not ask again.
    viewer.get(f"/release-runs/{run['id']}")
    assert len(stack.host.requests(operation_id="users/get-by-id")) == 1
    # The emulator's answer, as anyone may ask, is the code host's shape; an unknown id is 404.
    answer = httpx.get(f"{stack.host.url}/user/{ghost['id']}", timeout=10)
    openapi_check.validate_response("GET", f"/user/{ghost['id']}", answer.status_code, answer.json())
    assert answer.json()["login"] == "quiet-reviewer" and "two_factor_authentication" not in answer.json()
    missing = httpx.get(f"{stack.host.url}/user/999999999", timeout=10)
    assert missing.status_code == 404
    openapi_check.validate_response("GET", "/user/999999999", 404, missing.json())

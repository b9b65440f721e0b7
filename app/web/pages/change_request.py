"""A request for changes with a comment: the comment goes where the pull
request's author reads it, on the pull request, as the app's comment naming
the reviewer and linking the run page.

The request and its comment are recorded first, through the API's function
(one SQL call, review_record_approval_comment_v2 via app/web/reviews.py: the
comment is kept on the approval and shown in the run page's history); the
comment is then posted to the code host with the installation's token, its
@mentions and markup neutralized (the app does not mention a team for a
reviewer). A
comment the code host did not take is said on the page, which shows the form
again with the text to send again (the same request again replaces the kept
comment and posts it).
"""
from __future__ import annotations

import re

from app.host.errors import HostError
from app.jsonlog import log
from app.web.errors import ApiError

MAX_COMMENT = 4000


def comment_text(form_value: str | None) -> str | None:
    """The form's comment, stripped; None when empty; refused when too long."""
    text = (form_value or "").strip()
    if not text:
        return None
    if len(text) > MAX_COMMENT:
        raise ApiError(400, "invalid_comment", f"a comment has at most {MAX_COMMENT} characters")
    return text


MENTION = re.compile(r"@(?=[A-Za-z0-9_-])")


def neutralized(comment: str) -> str:
    """The reviewer's words as text the app may post: no @mention notifies anyone (a
    zero-width space after the @), and no markup (an HTML comment can hide text or carry
    the marker the outbox looks for) is taken as markup."""
    return MENTION.sub("@\u200b", comment).replace("<", "&lt;")


def comment_body(login: str, comment: str, run_page_url: str) -> str:
    quoted = "\n".join("> " + line if line else ">" for line in neutralized(comment).splitlines())
    return (f"**Changes requested** by {login} on boardready:\n\n{quoted}\n\n"
            f"The review and the findings: {run_page_url}")


def post(client, context: dict, run: dict, login: str, comment: str, run_page_url: str) -> None:
    """Post the comment on the run's pull request; an ApiError (502) says it was not."""
    if client is None:
        raise ApiError(502, "comment_not_posted", "Your request for changes is recorded, but this service cannot "
                       "post comments to the code host (the app is not configured); the comment is kept in the history "
                       "and below.")
    try:
        client.create_comment(context["installation_id"], run["repository"]["fullName"], run["pullRequestNumber"],
                              comment_body(login, comment, run_page_url))
    except HostError as exc:
        log("pages.change_request_comment_failed", level="warning", releaseRunId=run["id"],
            reasonCode=exc.reason_code)
        raise ApiError(502, "comment_not_posted", "Your request for changes is recorded, but the code host did not "
                       f"take the comment ({exc.reason_code}); it is below to send again.") from None

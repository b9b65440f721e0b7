"""GET /release-runs/{id}: the page every check run and pull request comment
links to. The decision and how it was reached, the check run, the findings by
severity (linked to the file at the head SHA on the code host), the review's
forms and its history.

POST /release-runs/{id}/approvals   approve or request changes (break-glass with a reason; a request
                                    for changes with a comment keeps it, shown in the history, and
                                    posts it on the pull request, app/web/pages/change_request.py)
POST /release-runs/{id}/waivers     waive a finding with a reason and an optional last day,
                                    or revoke a standing waiver (`revoke=<waiver id>`)

People are shown by login (app/web/pages/host_names.py). A waived finding
shows who waived it, why and until when, with a button that revokes it; the
waive form says what a waiver covers: this finding (its fingerprint) in
every pull request of the repository, until it is revoked or expires.
Approve is not offered to a viewer whose standing review is an approval; the
forms to approve, request changes, waive and revoke are offered only to a
viewer whose permission on the code host allows them (push or more; break-glass
needs admin or maintain), the others read that their permission does not.

The page reads through the JSON endpoints' responders (RunDetail,
RunFindings) and the forms record through the same functions as
POST /api/v1/reviews/{id}/approvals and POST /api/v1/repositories/{id}/waivers
(app/web/reviews.py: one validation, one SQL function per transition). A
refusal (the author approving without break-glass, a waiver that exists) is
the page again with the reason, so nothing typed is lost.
"""
from __future__ import annotations

import datetime as dt
import re
from urllib.parse import quote

import falcon

from app import queries
from app.web import db
from app.web.errors import ApiError
from app.web.pages import change_request
from app.web.pages.artifacts import capability_url
from app.web.pages.host_names import HostNames
from app.web.pages.rendering import api_media, render
from app.web.reviews import Waivers, create_waiver, record_approval
from app.web.run_listing import SEVERITIES, RunDetail, RunFindings, id_param
from app.web.session_auth import session_of
from checker.verdict import relaxed_settings

FINDINGS_PER_PAGE = "100"
DONE = {"approved": "Your approval is recorded.", "changes_requested": "Your request for changes is recorded.",
        "waived": "The finding is waived.", "unchanged": "Nothing changed: that was already your review.",
        "revoked": "The waiver is revoked: the finding counts again.",
        "changes_requested_commented": "Your request for changes is recorded and your comment is on the pull request."}
EXPIRY_DATE = re.compile(r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$")


class RunPage:
    auth = "none"
    session_methods = frozenset({"GET"})

    def __init__(self, config, pool):
        self.config, self.pool = config, pool
        self.detail, self.findings = RunDetail(config, pool), RunFindings(config, pool)
        self.names = HostNames(config, pool)

    def on_get(self, req, resp, run_id: str):
        self.show(req, resp, run_id, notice=DONE.get(req.get_param("done") or ""))

    def show(self, req, resp, run_id: str, *, notice=None, refusal=None, status=falcon.HTTP_200, form=None):
        viewer = session_of(req)
        detail = api_media(self.detail.on_get, req, run_id)
        # The findings API's own paging; a page shows up to 100 of them.
        req.params.setdefault("limit", FINDINGS_PER_PAGE)
        findings = api_media(self.findings.on_get, req, run_id)
        visible = sorted(viewer.repository_ids)
        release_run_id = id_param(run_id)
        with db.connection(self.pool, self.config) as conn:
            context = queries.fetch_one(conn, "run_page_context", release_run_id=release_run_id,
                                        repository_ids=visible)
            history = queries.fetch_all(conn, "review_history", release_run_id=release_run_id,
                                        repository_ids=visible)
            waivers = {w["fingerprint"]: w for w in queries.fetch_all(
                conn, "run_page_waivers", release_run_id=release_run_id, repository_ids=visible)}
            relaxed = {r["fingerprint"]: r["relaxed"] for r in queries.fetch_all(
                conn, "run_relaxed", release_run_id=release_run_id, repository_ids=visible)}
        run = detail["run"]
        groups = [(s, [f for f in findings["items"] if f["severity"] == s]) for s in SEVERITIES]
        review = detail["review"]
        actors = {e["actor"] for e in history} | {w["created_by"] for w in waivers.values()}
        names = self.names.logins(actors, context["installation_id"])
        mine = next((e["what"] for e in history if e["kind"] == "approval" and e["actor"] == viewer.actor), None)
        web = f"{self.config.sign_in.web_url}/{run['repository']['fullName']}"
        # The forms a viewer's permission on the code host allows (docs/security.md "Who may decide"):
        # a form that could only answer 403 is not shown. The forms still check afresh when posted.
        scopes = viewer.scopes_for(int(run["repository"]["id"]))
        render(req, resp, "run.html", status=status, title=f"{run['repository']['fullName']} #{run['pullRequestNumber']}",
               run=run, decision=detail["decision"], review=review, counts=detail["counts"],
               reasons=decision_reasons(detail, len(relaxed)), relaxed=relaxed,
               relaxed_settings=relaxed_settings([{"relaxed": r} for r in relaxed.values()]),
               groups=[(s, items) for s, items in groups if items], next_findings=findings["nextCursor"],
               context=context, history=history, notice=notice, refusal=refusal, form=form or {},
               is_author=bool(review and review["createdBy"] == viewer.actor),
               may_decide="reviews:write" in scopes, may_break_glass="admin" in scopes,
               waivers=waivers, name=lambda actor: names.get(actor, actor), my_review=mine,
               pull_request_url=f"{web}/pull/{run['pullRequestNumber']}",
               check_run_url=f"{web}/runs/{context['check_run_id']}" if context["check_run_id"] else None,
               code_url=lambda f: _code_url(self.config.sign_in.web_url, run, f),
               report_url=capability_url(self.config, context["artifact_id"]) if context["artifact_id"] else None,
               reports_enabled=self.config.artifact_signing_key is not None)


def decision_reasons(detail: dict, relaxed: int = 0) -> list[str]:
    """How the release decision was reached, in the order release_decision
    (sql/functions/reviews.sql) looks at its inputs: the first that matched is first.
    ``relaxed``: findings the pull request's own policy relaxed (reviews_relaxed.sql)."""
    run, counts, review = detail["run"], detail["counts"], detail["review"]
    review_decision = review["decision"] if review else "pending"
    reasons = []
    if review_decision == "changes_requested":
        reasons.append("Changes were requested in review: the release fails until that is withdrawn.")
    if relaxed:
        reasons.append(f"This pull request relaxes the project's policy for {relaxed} finding(s) that block under "
                       "the base commit's: " + ("the review approved the relaxation." if review_decision == "approved"
                                               else "they count until a person other than the author approves."))
    # An approval accepts the relaxed findings (they are blocking and unwaived until then).
    unaccepted = max(0, counts["unwaivedBlocking"] - (relaxed if review_decision == "approved" else 0))
    if unaccepted:
        reasons.append(f"{unaccepted} error or high finding(s) are not waived: they block the release.")
    elif counts["waived"] and run["readinessDecision"] == "FAIL":
        reasons.append("Every blocking finding is waived" + (
            ", and the review approved it." if review_decision == "approved" else "; an approval makes it pass."))
    if run["readinessDecision"] == "CONDITIONAL" and not counts["unwaivedBlocking"]:
        reasons.append("The checker found the board at risk" + (
            "; the review approved it." if review_decision == "approved" else ": an approval makes it pass."))
    if run["readinessDecision"] is None:
        reasons.append("No result has arrived from the readiness workflow yet." if not run["failureReason"]
                       else f"The run ended without a result ({run['failureReason']}).")
    elif not reasons:
        reasons.append(f"The checker's readiness decides: {run['readiness']} (score {run['score']}).")
    return reasons


def _code_url(web_url: str, run: dict, finding: dict) -> str | None:
    if not finding.get("path"):
        return None
    anchor = f"#L{finding['startLine']}" if finding.get("startLine") else ""
    return f"{web_url}/{run['repository']['fullName']}/blob/{run['headSha']}/{quote(finding['path'])}{anchor}"


def _field(form: dict, name: str) -> str | None:
    values = form.get(name) or []
    return values[0] if values else None


class _RunForm:
    auth = "none"
    session_methods = frozenset({"POST"})   # SessionAuth checks the form's csrf_token

    def __init__(self, config, pool, page: RunPage):
        self.config, self.pool, self.page = config, pool, page

    def on_post(self, req, resp, run_id: str):
        viewer = session_of(req)
        form = getattr(req.context, "form", None) or {}
        detail = api_media(self.page.detail.on_get, req, run_id)
        try:
            outcome = self.record(viewer, detail, form, req)
        except ApiError as exc:
            if exc.status in (401, 404):
                raise
            # The page again, with the reason and what was typed.
            return self.page.show(req, resp, run_id, refusal=exc, status=falcon.code_to_http_status(exc.status),
                                  form={k: _field(form, k) for k in form if k != "csrf_token"})
        resp.status = falcon.HTTP_303
        resp.location = f"/release-runs/{id_param(run_id)}?done={outcome}#review"


class ApprovalForm(_RunForm):
    def record(self, viewer, detail, form, req=None) -> str:
        if detail["review"] is None:
            raise ApiError(409, "no_review", "this run has no review yet: it opens when the result arrives")
        body = {"status": _field(form, "status")}
        # A comment goes with a request for changes (checked before anything is recorded).
        comment = change_request.comment_text(_field(form, "comment")) \
            if body["status"] == "changes_requested" else None
        if _field(form, "break_glass") == "on":
            body.update(breakGlass=True, reason=_field(form, "reason") or "")
        _, answer = record_approval(self.pool, self.config, viewer, int(detail["review"]["id"]), body, comment=comment)
        if comment and answer["outcome"] in ("recorded", "already_applied"):
            run = detail["run"]
            with db.connection(self.pool, self.config) as conn:
                context = queries.fetch_one(conn, "run_page_context", release_run_id=int(run["id"]),
                                            repository_ids=sorted(viewer.repository_ids))
            change_request.post(self.page.names.client, context, run, viewer.viewer_login, comment,
                                f"{self.config.public_url}/release-runs/{run['id']}")
            return "changes_requested_commented"
        return "unchanged" if answer["outcome"] in ("unchanged", "already_applied") else answer["approval"]["status"]


class WaiverForm(_RunForm):
    def __init__(self, config, pool, page: RunPage):
        super().__init__(config, pool, page)
        self.waivers = Waivers(config, pool)

    def record(self, viewer, detail, form, req=None) -> str:
        repository = detail["run"]["repository"]["id"]
        revoke = _field(form, "revoke")
        if revoke is not None:
            # Through DELETE /api/v1/repositories/{id}/waivers?waiverId=: its checks, its SQL function.
            req.params["waiverId"] = revoke
            api_media(self.waivers.on_delete, req, repository)
            return "revoked"
        body = {"fingerprint": _field(form, "fingerprint"), "reason": _field(form, "reason") or ""}
        expires_on = (_field(form, "expires_on") or "").strip()
        if expires_on:
            body["expiresAt"] = last_moment_of(expires_on)
        create_waiver(self.pool, self.config, viewer, int(repository), body)
        return "waived"


def last_moment_of(day: str) -> str:
    """The form's last day of a waiver (a date input, YYYY-MM-DD) as the API's expiresAt:
    the waiver stands through that day, UTC."""
    try:
        if not EXPIRY_DATE.match(day):
            raise ValueError
        date = dt.date.fromisoformat(day)
    except ValueError:
        raise ApiError(400, "invalid_expires_at", "the last day must be a date (YYYY-MM-DD)") from None
    return dt.datetime.combine(date, dt.time(23, 59, 59), dt.UTC).isoformat()

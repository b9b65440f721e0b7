"""Reviews and waivers (sql/functions/reviews.sql).

POST   /api/v1/reviews/{id}/approvals                   session, or bearer reviews:write
GET    /api/v1/repositories/{repositoryId}/waivers      session, or bearer reviews:read
POST   /api/v1/repositories/{repositoryId}/waivers      session, or bearer reviews:write
DELETE /api/v1/repositories/{repositoryId}/waivers?waiverId=   session, or bearer reviews:write

The approver, and a waiver's author, is the authenticated person
(`host-user:<id>`; a token minted by a person acts as them, other tokens as
`token:<id>`), never the body. A review or repository outside the caller's
repositories is 404, whether it exists or not; one where the caller's
permission on the code host gives less than the scope is 403. A break-glass
approval needs `admin` there. Each person has SERVICE_DECISIONS_PER_MINUTE
approvals, requests for changes and waivers a minute per repository (429).
Unknown body properties are dropped, as the spec's versioning section says.
"""
from __future__ import annotations

import datetime as dt
import re

import falcon

from app import queries, sql_api
from app.jsonlog import log
from app.web import authority, db, keyset
from app.web.bearer_auth import require
from app.web.bodies import SMALL_MAX_BYTES, read_json_object
from app.web.errors import ApiError
from app.web.params import positive_id, utc_instant
from app.web.run_listing import DatabaseResource, RunDetail, RunFindings, id_param
from app.web.tokens import iso

APPROVAL_FIELDS = {"status", "breakGlass", "reason"}
WAIVER_FIELDS = {"fingerprint", "reason", "expiresAt"}
FINGERPRINT = re.compile(r"^[\x21-\x7e]{1,200}$")
MIN_BREAK_GLASS_REASON = 10


def _known(body: dict, allowed: set) -> dict:
    """The body without the properties this version does not know (dropped, not refused)."""
    return {k: v for k, v in body.items() if k in allowed}


def _rate_limited(retry_after_seconds: int) -> ApiError:
    return ApiError(429, "too_many_decisions", "too many decisions on this repository this minute; retry later",
                    headers={"Retry-After": str(retry_after_seconds)})


def _text(body: dict, name: str, maximum: int, code: str, minimum: int = 1) -> str:
    value = body.get(name)
    if not isinstance(value, str) or not minimum <= len(value.strip()) or len(value) > maximum:
        raise ApiError(400, code, f"{name} must be text of {minimum} to {maximum} characters")
    return value.strip()


class Approvals(DatabaseResource):
    session_methods = frozenset({"POST"})

    def on_post(self, req, resp, review_id: str):
        auth = require(req, scope="reviews:write")
        review = id_param(review_id, "review")
        resp.status, resp.media = record_approval(self.pool, self.config, auth, review,
                                                  read_json_object(req, SMALL_MAX_BYTES))


def record_approval(pool, config, auth, review: int, body: dict, comment: str | None = None) -> tuple[str, dict]:
    """An approval from a JSON body or the run page's form: one validation, one SQL call.
    `comment` (the run page's, with a request for changes) is kept on the approval."""
    body = _known(body, APPROVAL_FIELDS)
    status = body.get("status")
    if status not in ("approved", "changes_requested"):
        raise ApiError(400, "invalid_status", "status must be approved or changes_requested")
    break_glass = body.get("breakGlass", False)
    if not isinstance(break_glass, bool):
        raise ApiError(400, "invalid_break_glass", "breakGlass must be true or false")
    reason = None
    if break_glass:
        reason = _text(body, "reason", 1000, "invalid_break_glass_reason", minimum=MIN_BREAK_GLASS_REASON)
    elif "reason" in body:
        raise ApiError(400, "invalid_break_glass_reason", "reason goes with breakGlass: true")
    with db.connection(pool, config) as conn:
        found = queries.fetch_one(conn, "review_repository", review_id=review,
                                  repository_ids=sorted(auth.repository_ids))
    if found is None:
        raise ApiError(404, "not_found", "no such review among your repositories")
    repository = found["repository_id"]
    auth = authority.current(pool, config, auth, repository, "admin" if break_glass else "reviews:write",
                             decision=True)
    function, commented = (sql_api.review_record_approval_v2, {}) if comment is None else \
        (sql_api.review_record_approval_comment_v2, {"comment": comment})
    row = db.call(pool, config, function, idempotent=False, review_id=review, repository_ids=[repository],
                  actor=auth.person, status=status, break_glass=break_glass, break_glass_reason=reason,
                  limit=config.decisions_per_minute, **commented)
    if row["outcome"] == "invalid_comment":
        raise ApiError(400, "invalid_comment", "a comment goes with changes_requested and has at most 4000 characters")
    if row["outcome"] == "rate_limited":
        raise _rate_limited(row["retry_after_seconds"])
    if row["outcome"] == "not_found":
        raise ApiError(404, "not_found", "no such review among your repositories")
    if row["outcome"] == "self_approval_not_allowed":
        raise ApiError(409, "self_approval_not_allowed",
                       "the review's creator cannot approve it (breakGlass with a reason overrides, audited)")
    log("review.approval", reviewId=review, outcome=row["outcome"], status=status,
        breakGlass=row["break_glass"], actor=auth.actor, person=auth.person)
    return (falcon.HTTP_201 if row["outcome"] == "recorded" else falcon.HTTP_200), {
        "ok": True, "outcome": row["outcome"],
        "approval": {"id": str(row["approval_id"]), "reviewId": str(review), "approverId": auth.person,
                     "status": row["status"], "breakGlass": row["break_glass"], "updatedAt": iso(row["updated_at"])},
        "review": {"id": str(review), "decision": row["review_decision"]},
        "releaseRun": {"id": str(row["release_run_id"]), "decision": row["release_decision"]},
    }


def _expires_at(body: dict, max_days: int) -> dt.datetime | None:
    raw = body.get("expiresAt")
    if raw is None:
        return None
    moment = utc_instant(raw, max_length=40)
    if moment is None:
        raise ApiError(400, "invalid_expires_at",
                       "expiresAt must be an ISO 8601 time with a time zone, 1970-01-01 to 9999-12-31 UTC")
    now = dt.datetime.now(dt.UTC)
    if moment <= now:
        raise ApiError(400, "invalid_expires_at", "expiresAt must be in the future")
    if moment > now + dt.timedelta(days=max_days):
        raise ApiError(400, "invalid_expires_at", f"a waiver expires at most {max_days} days ahead")
    return moment


def waiver_item(row: dict) -> dict:
    return {"id": str(row["id"]), "fingerprint": row["fingerprint"], "reason": row["reason"],
            "expiresAt": iso(row["expires_at"]), "createdBy": row["created_by"], "createdAt": iso(row["created_at"]),
            "standing": row["standing"]}


class Waivers(DatabaseResource):
    session_methods = frozenset({"GET", "POST", "DELETE"})

    def on_get(self, req, resp, repository_id: str):
        auth = require(req, scope="reviews:read")
        repository = id_param(repository_id, "repository")
        if repository not in auth.repository_ids:
            raise ApiError(404, "not_found", "no such repository among your repositories")
        require(req, scope="reviews:read", repository_id=repository)
        limit = keyset.limit_param(req, default=50)
        after = keyset.decode(req, {"repositoryId": repository}, (keyset.ID,))
        with db.connection(self.pool, self.config) as conn:
            rows = queries.fetch_all(conn, "waivers_page", shape={"after": after is not None},
                                     repository_id=repository, repository_ids=sorted(auth.repository_ids),
                                     limit=limit + 1, after_id=after[0] if after else None)
        rows, next_cursor = keyset.page(req, rows, limit, lambda r: [r["id"]], {"repositoryId": repository})
        resp.media = {"items": [waiver_item(r) for r in rows], "nextCursor": next_cursor}

    def on_post(self, req, resp, repository_id: str):
        auth = require(req, scope="reviews:write")
        repository = id_param(repository_id, "repository")
        resp.status, resp.media = create_waiver(self.pool, self.config, auth, repository,
                                                read_json_object(req, SMALL_MAX_BYTES))

    def on_delete(self, req, resp, repository_id: str):
        auth = require(req, scope="reviews:write")
        repository = id_param(repository_id, "repository")
        waiver = positive_id(req.get_param("waiverId"))
        if waiver is None:
            raise ApiError(400, "invalid_waiver_id", "waiverId must be a waiver id")
        auth = authority.current(self.pool, self.config, auth, repository, "reviews:write", decision=True)
        row = db.call(self.pool, self.config, sql_api.waiver_delete, idempotent=False, repository_id=repository,
                      repository_ids=sorted(auth.repository_ids), waiver_id=waiver, actor=auth.person)
        if row["outcome"] == "not_found":
            raise ApiError(404, "not_found", "no such waiver among your repositories")
        log("review.waiver_deleted", waiverId=waiver, outcome=row["outcome"], actor=auth.actor)
        resp.media = {"ok": True, "outcome": row["outcome"], "waiverId": str(row["waiver_id"]),
                      "deletedAt": iso(row["deleted_at"]), "decisionsChanged": row["decisions_changed"]}


def create_waiver(pool, config, auth, repository: int, body: dict) -> tuple[str, dict]:
    """A waiver from a JSON body or the run page's form: one validation, one SQL call."""
    body = _known(body, WAIVER_FIELDS)
    fingerprint = body.get("fingerprint")
    if not isinstance(fingerprint, str) or not FINGERPRINT.match(fingerprint):
        raise ApiError(400, "invalid_fingerprint", "fingerprint must be a finding's fingerprint")
    reason = _text(body, "reason", 1000, "invalid_reason")
    expires_at = _expires_at(body, config.waiver_max_days)
    auth = authority.current(pool, config, auth, repository, "reviews:write", decision=True)
    row = db.call(pool, config, sql_api.waiver_create_v3, idempotent=False, repository_id=repository,
                  repository_ids=sorted(auth.repository_ids), fingerprint=fingerprint, reason=reason,
                  expires_at=expires_at, actor=auth.person, max_days=config.waiver_max_days,
                  limit=config.decisions_per_minute)
    if row["outcome"] == "rate_limited":
        raise _rate_limited(row["retry_after_seconds"])
    if row["outcome"] == "invalid_expires_at":
        raise ApiError(400, "invalid_expires_at", f"a waiver expires at most {config.waiver_max_days} days ahead")
    if row["outcome"] == "not_found":
        raise ApiError(404, "not_found", "no such repository among your repositories")
    if row["outcome"] == "waiver_exists":
        raise ApiError(409, "waiver_exists", "a standing waiver already covers this fingerprint; delete it first")
    if row["outcome"] == "finding_not_waivable":
        raise ApiError(409, "finding_not_waivable",
                       "a checker.rule-failed finding marks an incomplete check; it cannot be waived, only fixed")
    log("review.waiver_created", waiverId=row["waiver_id"], repositoryId=repository, actor=auth.person,
        decisionsChanged=row["decisions_changed"])
    return falcon.HTTP_201, {"ok": True, "waiver": waiver_item({
        "id": row["waiver_id"], "fingerprint": fingerprint, "reason": reason, "expires_at": expires_at,
        "created_by": auth.person, "created_at": row["created_at"], "standing": True}),
        "decisionsChanged": row["decisions_changed"]}


def add_routes(app, config, pool) -> None:
    """Reading runs and their findings, approvals, waivers (GET /api/v1/runs is
    RunsCollection, on the path of run ingest)."""
    app.add_route("/api/v1/runs/{run_id}", RunDetail(config, pool))
    app.add_route("/api/v1/runs/{run_id}/findings", RunFindings(config, pool))
    app.add_route("/api/v1/reviews/{review_id}/approvals", Approvals(config, pool))
    app.add_route("/api/v1/repositories/{repository_id}/waivers", Waivers(config, pool))

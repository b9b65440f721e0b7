"""Reading release runs: the listing, one run, and its findings.

GET /api/v1/runs                 a signed-in viewer's release runs across every repository they
                                 can reach (a bearer token with reviews:read: its repository),
                                 newest first by (started_at, id); keyset pages (`limit` 1-100,
                                 default 25; `cursor`), filters `repositoryId`, `status`, `decision`
GET /api/v1/runs/{id}            the run, its release decision, review and finding counts
GET /api/v1/runs/{id}/findings   keyset pages of its findings; filters `severity` (comma
                                 separated) and `waived` (true or false)

A run outside the caller's repositories is 404, whether it exists or not.
The queries are in sql/queries/ (runs_page, run_detail, run_findings_page).
"""
from __future__ import annotations

import datetime as dt

from app import queries
from app.web import db, keyset
from app.web.bearer_auth import require
from app.web.errors import ApiError
from app.web.params import positive_id, utc_instant
from app.web.runs import RunIngest
from app.web.tokens import iso

RUN_STATUSES = ("queued", "dispatched", "completed", "failed", "timed_out", "superseded")
DECISIONS = ("PASS", "FAIL", "CONDITIONAL", "UNKNOWN")
SEVERITIES = ("error", "high", "medium", "low", "info")


def visible_repositories(req, scope: str) -> list[int]:
    """The repositories the caller may read with `scope`: a session's, or a token's one."""
    return sorted(require(req, scope=scope).repository_ids)


def id_param(value: str, what: str = "release run") -> int:
    """A path id: anything but a positive 64-bit integer names nothing (404)."""
    found = positive_id(value)
    if found is None:
        raise ApiError(404, "not_found", f"no such {what} among your repositories")
    return found


class DatabaseResource:
    """A resource that reaches the database through app/web/db.py."""

    def __init__(self, config, pool):
        self.config, self.pool = config, pool


def choice_param(req, name: str, allowed: tuple, code: str) -> str | None:
    value = req.get_param(name)
    if value is not None and value not in allowed:
        raise ApiError(400, code, f"{name} must be one of {', '.join(allowed)}")
    return value


def repository_filter(req, visible: list[int]) -> list[int]:
    raw = req.get_param("repositoryId")
    if raw is None:
        return visible
    if positive_id(raw) is None:
        raise ApiError(400, "invalid_repository_id", "repositoryId must be a repository id")
    return [r for r in visible if r == int(raw)]


def _timestamp(value) -> dt.datetime:
    return utc_instant(value)


class RunsCollection(RunIngest):
    """POST ingests a run (app/web/runs.py); GET lists release runs."""

    session_methods = frozenset({"GET"})

    def on_get(self, req, resp):
        visible = visible_repositories(req, "reviews:read")
        limit = keyset.limit_param(req)
        filters = {"repositoryId": req.get_param("repositoryId"),
                   "status": choice_param(req, "status", RUN_STATUSES, "invalid_status"),
                   "decision": choice_param(req, "decision", DECISIONS, "invalid_decision")}
        repository_ids = repository_filter(req, visible)
        after = keyset.decode(req, filters, (keyset.INSTANT, keyset.ID))
        rows = []
        if repository_ids:
            shape = {"after": after is not None, "status": filters["status"] is not None,
                     "decision": filters["decision"] is not None}
            params = {"repository_ids": repository_ids, "limit": limit + 1, "status": filters["status"],
                      "decision": filters["decision"]}
            if after is not None:
                params.update(after_started_at=_timestamp(after[0]), after_id=after[1])
            with db.connection(self.pool, self.config) as conn:
                rows = queries.fetch_all(conn, "runs_page", shape=shape, **params)
        rows, next_cursor = keyset.page(req, rows, limit, lambda r: [r["started_at"].isoformat(), r["id"]], filters)
        resp.media = {"items": [run_item(r) for r in rows], "nextCursor": next_cursor}


def run_item(row: dict) -> dict:
    return {"id": str(row["id"]), "repository": {"id": str(row["repository_id"]), "fullName": row["full_name"]},
            "pullRequestNumber": row["pr_number"], "headSha": row["head_sha"], "status": row["status"],
            "decision": row["decision"], "startedAt": iso(row["started_at"]),
            "reviewId": str(row["review_id"]) if row["review_id"] is not None else None}


class RunDetail(DatabaseResource):
    session_methods = frozenset({"GET"})

    def on_get(self, req, resp, run_id: str):
        visible = visible_repositories(req, "reviews:read")
        with db.connection(self.pool, self.config) as conn:
            row = queries.fetch_one(conn, "run_detail", release_run_id=id_param(run_id), repository_ids=visible)
        if row is None:
            raise ApiError(404, "not_found", "no such release run among your repositories")
        review = None
        if row["review_id"] is not None:
            review = {"id": str(row["review_id"]), "createdBy": row["review_created_by"],
                      "decision": row["review_decision"]}
        resp.media = {
            "run": {**run_item(row), "completedAt": iso(row["completed_at"]), "conclusion": row["conclusion"],
                    "failureReason": row["failure_reason"], "readiness": row["readiness"], "score": row["score"],
                    "readinessDecision": row["readiness_decision"],
                    "publishedConclusion": row["published_conclusion"]},
            "decision": row["decision"],
            "review": review,
            "counts": {"findings": row["findings"], "waived": row["waived"],
                       "unwaivedBlocking": row["unwaived_blocking"],
                       "bySeverity": {s: row[s] for s in SEVERITIES}},
        }


class RunFindings(DatabaseResource):
    session_methods = frozenset({"GET"})

    def on_get(self, req, resp, run_id: str):
        visible = visible_repositories(req, "reviews:read")
        release_run_id = id_param(run_id)
        limit = keyset.limit_param(req, default=50)
        severities = self._severities(req)
        waived = self._waived(req)
        filters = {"severity": severities, "waived": waived}
        after = keyset.decode(req, filters, (keyset.ORDINAL,))
        with db.connection(self.pool, self.config) as conn:
            if queries.fetch_one(conn, "run_visible", release_run_id=release_run_id, repository_ids=visible) is None:
                raise ApiError(404, "not_found", "no such release run among your repositories")
            rows = queries.fetch_all(
                conn, "run_findings_page", shape={"after": after is not None, "severities": bool(severities),
                                                  "waived": waived},
                release_run_id=release_run_id, repository_ids=visible, limit=limit + 1, severities=severities,
                after_ordinal=after[0] if after else None)
        rows, next_cursor = keyset.page(req, rows, limit, lambda r: [r["ordinal"]], filters)
        resp.media = {"items": [finding_item(r) for r in rows], "nextCursor": next_cursor}

    @staticmethod
    def _severities(req) -> list[str] | None:
        raw = req.get_param("severity")
        if raw is None:
            return None
        values = sorted(set(raw.split(",")))
        if not values or any(v not in SEVERITIES for v in values):
            raise ApiError(400, "invalid_severity", f"severity is a comma-separated list of {', '.join(SEVERITIES)}")
        return values

    @staticmethod
    def _waived(req) -> bool | None:
        raw = req.get_param("waived")
        if raw is None:
            return None
        if raw not in ("true", "false"):
            raise ApiError(400, "invalid_waived", "waived must be true or false")
        return raw == "true"


def finding_item(row: dict) -> dict:
    return {"ordinal": row["ordinal"], "fingerprint": row["fingerprint"], "severity": row["severity"],
            "ruleId": row["rule_id"], "message": row["message"], "title": row["title"], "path": row["path"],
            "startLine": row["start_line"], "endLine": row["end_line"], "startColumn": row["start_column"],
            "endColumn": row["end_column"], "waived": row["waiver_id"] is not None,
            "waiverId": str(row["waiver_id"]) if row["waiver_id"] is not None else None}

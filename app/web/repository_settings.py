"""GET and PUT /api/v1/repositories/{repositoryId}/settings (admin scope of that repository: an
admin token of it, or a session whose viewer is admin or maintainer of it on the code host).

One setting today, `tokenPublishedResults` (default false): whether a result
published with a bearer token (POST /api/v1/runs/result) may decide a release
run. Off, only the readiness workflow's signed result does, and a token result
is refused 409 `oidc_result_required`. On, the check run says the result was
published by token and names the token; the signed result, when it comes,
still supersedes it. Every change is an audit event
(`repository.settings_changed`, actor the person: `host-user:<id>`, or
`token:<id>` for a token no person minted) in the same transaction. Unknown
body properties are dropped, as the spec's versioning section says.
"""
from __future__ import annotations

from app import api_tokens, sql_api
from app.jsonlog import log
from app.web import authority, db
from app.web.bearer_auth import require
from app.web.bodies import SMALL_MAX_BYTES, read_json_object
from app.web.errors import ApiError


def _repository_id(value: str) -> int:
    try:
        return api_tokens.repository_id(value)
    except api_tokens.InvalidTokenRequest as exc:
        raise ApiError(400, exc.code, exc.message) from None


def _not_found() -> ApiError:
    return ApiError(404, "repository_not_found", "no such repository in any installation")


class RepositorySettings:
    auth = "bearer"
    session_methods = frozenset({"GET", "PUT"})

    def __init__(self, config, pool):
        self.config, self.pool = config, pool

    def on_get(self, req, resp, repository_id):
        repository = _repository_id(repository_id)
        require(req, scope="admin", repository_id=repository)
        with db.connection(self.pool, self.config) as conn:
            row = sql_api.repository_settings_get(conn, repository_id=repository)
        if row["outcome"] != "found":
            raise _not_found()
        resp.media = {"ok": True, "repositoryId": str(repository),
                      "tokenPublishedResults": row["token_published_results"]}

    def on_put(self, req, resp, repository_id):
        repository = _repository_id(repository_id)
        auth = require(req, scope="admin", repository_id=repository)
        body = read_json_object(req, SMALL_MAX_BYTES)
        if not isinstance(body.get("tokenPublishedResults"), bool):
            raise ApiError(400, "invalid_token_published_results", "tokenPublishedResults must be true or false")
        auth = authority.current(self.pool, self.config, auth, repository, "admin")
        with db.connection(self.pool, self.config) as conn:
            row = sql_api.repository_settings_update(conn, repository_id=repository,
                                                     token_published_results=body["tokenPublishedResults"],
                                                     actor=auth.person)
        if row["outcome"] == "repository_not_found":
            raise _not_found()
        log("repository.settings", repositoryId=repository, outcome=row["outcome"],
            tokenPublishedResults=row["token_published_results"], changedBy=auth.actor, person=auth.person)
        resp.media = {"ok": True, "outcome": row["outcome"], "repositoryId": str(repository),
                      "tokenPublishedResults": row["token_published_results"],
                      "auditEventId": str(row["audit_event_id"]) if row["audit_event_id"] else None}

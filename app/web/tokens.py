"""POST /api/v1/tokens, GET /api/v1/tokens?repositoryId=, DELETE /api/v1/tokens?tokenId=.

With a bearer token, all three need its admin scope and its repository.
With a signed-in session (app/web/session_auth.py) the rights are the
viewer's on the code host for that repository (docs/security.md): minting a
token with scopes the viewer holds there (`admin` or `runs:write` need
`admin`), listing needs `admin`, revoking one's own tokens needs access,
revoking someone else's needs `admin` (audited); the rights are re-read from
the code host first when stale, as for every credential change. A token minted from a
session acts as its person (app/web/bearer_auth.py) and lives at most
SERVICE_SESSION_TOKEN_MAX_DAYS (the default when durationDays is left out;
more is 400). The token value is returned once, by POST, and never stored.
Unknown body properties are dropped, as the spec's versioning section says.
"""
from __future__ import annotations

import datetime as dt

import falcon

from app import api_tokens, sql_api
from app.jsonlog import log
from app.web import authority, db
from app.web.bearer_auth import require
from app.web.bodies import read_json_object
from app.web.errors import ApiError

MAX_BODY_BYTES = 16 * 1024
CREATE_FIELDS = {"repositoryId", "name", "scopes", "durationDays"}
NOT_FOUND_OUTCOMES = ("repository_not_found", "repository_removed")


def iso(value: dt.datetime | None) -> str | None:
    if value is None:
        return None
    return value.astimezone(dt.UTC).isoformat().replace("+00:00", "Z")


def _invalid(exc: api_tokens.InvalidTokenRequest) -> ApiError:
    return ApiError(400, exc.code, exc.message)


def token_record(row: dict, token_id_key: str = "token_id") -> dict:
    return {
        "id": str(row[token_id_key]),
        "name": row["name"],
        "tokenPrefix": row["token_prefix"],
        "scopes": list(row["scopes"]),
        "expiresAt": iso(row["expires_at"]),
        "createdAt": iso(row["created_at"]),
    }


class Tokens:
    auth = "bearer"
    # A signed-in viewer manages the tokens of the repositories they can reach.
    session_methods = frozenset({"GET", "POST", "DELETE"})

    def __init__(self, config, pool):
        self.config = config
        self.pool = pool

    def on_post(self, req, resp):
        auth = require(req)
        if not hasattr(auth, "require_access"):
            require(req, scope="admin")
        body = read_json_object(req, MAX_BODY_BYTES)
        try:
            if "repositoryId" not in body:
                raise api_tokens.InvalidTokenRequest("invalid_repository_id", "repositoryId is required")
            repository_id = api_tokens.repository_id(body["repositoryId"])
            if "name" not in body:
                raise api_tokens.InvalidTokenRequest("invalid_name", "name is required")
            name = api_tokens.name(body["name"])
            scopes = api_tokens.scopes(body.get("scopes"))
            duration = api_tokens.duration_days(body.get("durationDays"))
        except api_tokens.InvalidTokenRequest as exc:
            raise _invalid(exc) from None
        require(req, repository_id=repository_id)
        # What the caller holds there; admin and runs:write tokens need admin.
        session = hasattr(auth, "require_access")
        needed = ("admin" if not session or {"admin", "runs:write"} & set(scopes) else
                  "reviews:write" if "reviews:write" in scopes else "reviews:read")
        auth = authority.current(self.pool, self.config, auth, repository_id, needed)
        if auth.person_id is not None:   # a person's token: bounded life
            limit = self.config.session_token_max_days
            if duration is None:
                duration = limit
            elif duration > limit:
                raise ApiError(400, "invalid_duration_days",
                               f"a token minted by a person lives at most {limit} days")

        new = api_tokens.generate()
        with db.connection(self.pool, self.config) as conn:
            row = sql_api.token_create_v2(conn, repository_id=repository_id, name=name,
                                          scopes=scopes, duration_days=duration, token_sha256=new.sha256,
                                          token_prefix=new.prefix, created_by=auth.actor, person_id=auth.person_id)
        if row["outcome"] in NOT_FOUND_OUTCOMES:
            raise ApiError(404, "repository_not_found", "no such repository in any installation")
        if row["outcome"] == "account_canceled":
            raise ApiError(403, "account_canceled", "the account's marketplace subscription is canceled")
        log("token.created", tokenId=str(row["token_id"]), repositoryId=repository_id, createdBy=auth.actor,
            person=auth.person, scopes=scopes)
        resp.status = falcon.HTTP_201
        resp.media = {"ok": True, "token": new.value, "tokenRecord": token_record(
            {**row, "name": name, "token_prefix": new.prefix, "scopes": scopes})}

    def on_get(self, req, resp):
        require(req, scope="admin")
        try:
            repository_id = api_tokens.repository_id(req.get_param("repositoryId"))
        except api_tokens.InvalidTokenRequest as exc:
            raise _invalid(exc) from None
        require(req, scope="admin", repository_id=repository_id)
        with db.connection(self.pool, self.config) as conn:
            rows = sql_api.token_list(conn, repository_id=repository_id)
        resp.media = {"ok": True, "repositoryId": str(repository_id), "tokens": [
            {**token_record(r), "status": r["status"], "lastUsedAt": iso(r["last_used_at"]),
             "revokedAt": iso(r["revoked_at"])}
            for r in rows]}

    def on_delete(self, req, resp):
        auth = require(req)
        if not hasattr(auth, "require_access"):
            auth = require(req, scope="admin")
        try:
            token_id = api_tokens.token_id(req.get_param("tokenId"))
        except api_tokens.InvalidTokenRequest as exc:
            raise _invalid(exc) from None
        if hasattr(auth, "repositories_with"):
            # A session's rights on the token's repository, re-read when stale (a credential change).
            with db.connection(self.pool, self.config) as conn:
                repository = sql_api.token_repository_within(conn, token_id=token_id,
                                                             repository_ids=sorted(auth.repository_ids))
            if repository is not None:
                auth = authority.current(self.pool, self.config, auth, repository, "reviews:read")
        admin = auth.repositories_with("admin") if hasattr(auth, "repositories_with") else auth.repository_ids
        with db.connection(self.pool, self.config) as conn:
            # Another repository's token, or another person's where the caller is
            # not admin, is not_found. Revoking another person's token is audited.
            row = sql_api.token_revoke_v2(conn, token_id=token_id,
                                          admin_repository_ids=sorted(admin),
                                          own_repository_ids=sorted(auth.repository_ids), person_id=auth.person_id,
                                          actor=auth.person)
        if row["outcome"] == "not_found":
            raise ApiError(404, "not_found", "no such token for this repository")
        log("token.revoked", tokenId=token_id, outcome=row["outcome"], revokedBy=auth.actor, person=auth.person)
        resp.media = {"ok": True, "outcome": row["outcome"], "tokenId": token_id,
                      "revokedAt": iso(row["revoked_at"])}

"""Bearer-token authentication for every /api/v1 route.

How a route uses it
-------------------
Every resource under /api/v1 is bearer-authenticated unless its class says
otherwise with an `auth` attribute:

    auth = "bearer"     (the default) the middleware authenticates the token
    auth = "operator"   the operator API: the resource checks the operator token
    auth = "oidc"       the workflow result callback: the resource's `before_body(req)`
                        checks its OIDC token (run by AuthenticateBeforeBody, app/web/bodies.py)
    auth = "none"       deliberately public

After the middleware, `req.context.auth` is an `Auth` (token id, repository
id, scopes); under bin/serve's front, on the routes that authenticate before
the body (app/web/bodies.py), before the body is read. A responder states
what it needs with `require`:

    auth = require(req, scope="runs:write", repository_id=body["repositoryId"])

which raises 403 `insufficient_scope` or `repository_mismatch`. Any token
that authenticates may call a route that requires no scope.

Failures: 401 `missing_token`, `malformed_token`, `invalid_token` (unknown),
`token_expired`, `token_revoked`; 403 `account_canceled` (the account's
marketplace subscription is canceled: fails closed), `repository_unavailable`
(removed from the installation). A 401 for a request that presented a
credential counts as a failed authentication for the client
(app/web/auth_throttle.py); past SERVICE_AUTH_RATE_LIMIT_PER_MINUTE in the
current minute the client gets 429 with Retry-After, before its token is
looked at, even a correct one. A request with no credential at all
(`missing_token`: a cross-site image tag can send those) is neither counted
nor limited, so strangers cannot lock a client out. Valid requests and 403s
are not counted.
"""
from __future__ import annotations

from dataclasses import dataclass

from app import api_tokens, sql_api
from app.web import auth_throttle, db
from app.web.errors import ApiError

BEARER = "bearer"
SELF_AUTHENTICATED = ("operator", "oidc", "none")
API_PREFIX = "/api/v1/"
CHALLENGE = {"WWW-Authenticate": 'Bearer realm="boardready"'}

_UNAUTHORIZED = {
    "unknown": ("invalid_token", "the token is not valid"),
    "expired": ("token_expired", "the token has expired"),
    "revoked": ("token_revoked", "the token has been revoked"),
}
_FORBIDDEN = {
    "account_canceled": ("account_canceled", "the account's marketplace subscription is canceled"),
    "repository_removed": ("repository_unavailable", "the token's repository is no longer part of an installation"),
}


@dataclass(frozen=True)
class Auth:
    token_id: str
    repository_id: str        # the code host's repository id, as the API spells it
    scopes: frozenset[str]
    person_id: int | None = None   # who minted it from a session (or from their token); None: acts as itself

    @property
    def actor(self) -> str:
        return f"token:{self.token_id}"

    @property
    def person(self) -> str:
        """Who decides when this token is used: the person who minted it, else the token itself."""
        return f"host-user:{self.person_id}" if self.person_id is not None else self.actor

    @property
    def repository_ids(self) -> frozenset[int]:
        return frozenset({int(self.repository_id)})


def require(req, scope: str | None = None, repository_id: str | int | None = None) -> Auth:
    """The request's Auth, after checking it has `scope` and is for `repository_id`."""
    auth = getattr(req.context, "auth", None)
    if hasattr(auth, "require_access"):  # a signed-in session (app/web/session_auth.py)
        return auth.require_access(scope, repository_id)
    if not isinstance(auth, Auth):
        # A route that is not bearer-authenticated asked for a bearer identity:
        # fail closed rather than act without one.
        raise ApiError(401, "missing_token", "a bearer token is required", headers=CHALLENGE)
    if scope is not None and scope not in auth.scopes:
        raise ApiError(403, "insufficient_scope", f"the token lacks the {scope} scope")
    if repository_id is not None and str(repository_id) != auth.repository_id:
        raise ApiError(403, "repository_mismatch", "the token is scoped to another repository")
    return auth


def _presented_token(req) -> tuple[str | None, str | None]:
    """(token value, None) or (None, failure code)."""
    header = req.get_header("Authorization")
    if header is None or not header.strip():
        return None, "missing_token"
    scheme, _, value = header.strip().partition(" ")
    value = value.strip()
    if scheme.lower() != "bearer" or not api_tokens.TOKEN_VALUE.match(value):
        return None, "malformed_token"
    return value, None


class BearerAuth:
    """Falcon middleware: authenticates bearer routes under /api/v1."""

    def __init__(self, config, pool):
        self.config = config
        self.pool = pool

    def process_resource(self, req, resp, resource, params):
        if resource is None or not req.path.startswith(API_PREFIX):
            return
        kind = getattr(resource, "auth", BEARER)
        if kind in SELF_AUTHENTICATED:
            return
        if kind != BEARER:
            raise RuntimeError(f"unknown auth kind {kind!r} on {type(resource).__name__}")
        if getattr(req.context, "auth", None) is not None:
            return  # a session already authenticated it (app/web/session_auth.py)
        req.context.auth = self.authenticate(req)

    def authenticate(self, req) -> Auth:
        key = auth_throttle.client_key(req)
        at = auth_throttle.now()
        value, failure = _presented_token(req)
        if failure == "missing_token":
            raise ApiError(401, failure, _FAILURE_MESSAGES[failure], headers=CHALLENGE)
        with db.connection(self.pool, self.config) as conn:
            auth_throttle.refuse_if_limited(conn, auth_throttle.BEARER, key,
                                            self.config.auth_rate_limit_per_minute, at)
            row = None
            if value is not None:
                row = sql_api.token_verify_v2(conn, token_sha256=api_tokens.digest(value), now=at)
                if row["outcome"] in _UNAUTHORIZED:
                    failure = row["outcome"]
            if failure is not None:
                auth_throttle.record_failure(conn, auth_throttle.BEARER, key, at)
                code, message = _UNAUTHORIZED.get(failure) or (failure, _FAILURE_MESSAGES[failure])
                raise ApiError(401, code, message, headers=CHALLENGE)
        if row["outcome"] in _FORBIDDEN:
            raise ApiError(403, *_FORBIDDEN[row["outcome"]])
        if row["outcome"] != "valid":
            raise RuntimeError(f"token_verify returned {row['outcome']!r}")
        return Auth(str(row["token_id"]), str(row["repository_id"]), frozenset(row["scopes"]), row["person_id"])


_FAILURE_MESSAGES = {
    "missing_token": "Authorization: Bearer <token> is required",
    "malformed_token": "the Authorization header does not carry a token of this service",
}

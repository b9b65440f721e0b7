"""Browser sessions: the cookie, who it speaks for, and CSRF.

A session is an opaque random cookie (`HttpOnly`, `SameSite=Lax`; when
SERVICE_PUBLIC_URL is https, `Secure` and named with the `__Host-` prefix, so
no other host, a sibling subdomain included, can set or shadow it; a request
carrying two values of a cookie is taken as carrying none, so a planted
duplicate cannot win); the database keeps only its SHA-256, the
viewer and the repositories resolved at sign-in with the viewer's permission
on each as the code host reported it (sql/functions/sessions.sql). The scopes
are per repository (docs/security.md): admin or maintain -> `admin` and the
review scopes, push -> `reviews:read` and `reviews:write`, triage or pull ->
`reviews:read`. A session never carries `runs:write` nor a code host token.

How a route uses it
-------------------
A resource lists the methods that accept a session:

    session_methods = frozenset({"GET", "POST"})

For those methods, a request without an Authorization header that carries
the session cookie is authenticated here (BearerAuth then leaves it alone),
and `req.context.auth` is a `SessionActor`. `bearer_auth.require(req, scope=,
repository_id=)` works for both kinds of caller; for a session, a repository
the viewer cannot reach is 404, nothing disclosed, and one where the viewer
lacks the scope is 403 `insufficient_scope`.

Every unsafe request made with a session needs the session's CSRF token, in
the `X-CSRF-Token` header (JSON) or the `csrf_token` field of a form: 403
`csrf_failed` otherwise. The token is derived from the cookie value, which
script cannot read, so another site can neither read nor forge it.

Failures: 401 `session_expired`, `invalid_session` (unknown cookie: counted
as a failed authentication for the client, like a wrong bearer token). A valid
session is looked up before the client's failure count and is never refused
because of other clients' failures.
"""
from __future__ import annotations

import base64
import datetime
import hashlib
import hmac
import secrets
from dataclasses import dataclass
from urllib.parse import parse_qs

from app import sql_api
from app.web import auth_throttle, db
from app.web.bodies import read_bounded
from app.web.errors import ApiError

SESSION_COOKIE = "boardready_session"
SECURE_SESSION_COOKIE = "__Host-" + SESSION_COOKIE
ALL_SCOPES = frozenset({"runs:write", "reviews:read", "reviews:write", "admin"})
ADMIN_SCOPES = frozenset({"admin", "reviews:read", "reviews:write"})
WRITE_SCOPES = frozenset({"reviews:read", "reviews:write"})
READ_SCOPES = frozenset({"reviews:read"})
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
CSRF_HEADER = "X-CSRF-Token"
CSRF_FIELD = "csrf_token"
FORM_MAX_BYTES = 16 * 1024


def new_secret_value() -> str:
    """A cookie value: 256 random bits."""
    return secrets.token_urlsafe(32)


def digest(value: str) -> bytes:
    return hashlib.sha256(value.encode("utf-8")).digest()


def derived(value: str, purpose: str) -> str:
    """A value derived from a cookie for one purpose (CSRF token, PKCE verifier):
    computable only by whoever holds the cookie."""
    return base64.urlsafe_b64encode(hashlib.sha256(f"{purpose}:{value}".encode()).digest()).rstrip(b"=").decode()


def csrf_token(session_value: str) -> str:
    return derived(session_value, "csrf")


def session_cookie(config) -> str:
    """The session cookie's name: `__Host-` prefixed when served over HTTPS."""
    return SECURE_SESSION_COOKIE if config.public_url.startswith("https://") else SESSION_COOKIE


def set_cookie(resp, config, name: str, value: str, max_age: int, path: str = "/") -> None:
    resp.set_cookie(name, value, max_age=max_age, path=path, http_only=True, same_site="Lax",
                    secure=config.public_url.startswith("https://"))


def clear_cookie(resp, config, name: str, path: str = "/") -> None:
    """Expire the cookie now, with the attributes it was set with (a `__Host-` cookie is only
    replaced by a Secure one; Falcon drops max_age=0 and unset_cookie sets no Secure)."""
    resp.set_cookie(name, "", expires=EXPIRED, path=path, http_only=True, same_site="Lax",
                    secure=config.public_url.startswith("https://"))


EXPIRED = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)


def cookie_value(req, name: str) -> str | None:
    values = set(req.get_cookie_values(name) or [])
    if len(values) != 1:
        # None, or two of them: one may have been planted (a sibling host, a narrower
        # path listed first); neither is trusted.
        return None
    value = values.pop()
    # Only values shaped like ours are looked up: anything else is no cookie.
    return value if 20 <= len(value) <= 100 and value.replace("-", "").replace("_", "").isalnum() else None


@dataclass(frozen=True)
class SessionActor:
    session_id: str
    viewer_id: int
    viewer_login: str
    repository_ids: frozenset[int]
    expires_at: object
    csrf_token: str
    admin_repository_ids: frozenset[int] = frozenset()
    write_repository_ids: frozenset[int] = frozenset()
    permissions_checked_at: object = None

    @property
    def actor(self) -> str:
        return f"host-user:{self.viewer_id}"

    # A session is its person (a token minted by a person acts as them: app/web/bearer_auth.py).
    person = actor

    @property
    def person_id(self) -> int:
        return self.viewer_id

    def scopes_for(self, repository_id: int) -> frozenset[str]:
        """The scopes the code host's permission gives the viewer on the repository."""
        if repository_id in self.admin_repository_ids:
            return ADMIN_SCOPES
        if repository_id in self.write_repository_ids:
            return WRITE_SCOPES
        return READ_SCOPES if repository_id in self.repository_ids else frozenset()

    def repositories_with(self, scope: str) -> frozenset[int]:
        return frozenset(r for r in self.repository_ids if scope in self.scopes_for(r))

    def require_access(self, scope: str | None = None, repository_id: str | int | None = None) -> SessionActor:
        # A repository the viewer cannot reach does not exist for them; one
        # where the code host gives them less than the scope is 403.
        if repository_id is not None:
            repository = int(repository_id)
            if repository not in self.repository_ids:
                raise ApiError(404, "not_found", "no such repository among those you can access")
            if scope is not None and scope not in self.scopes_for(repository):
                raise _insufficient(scope)
        # Without a repository, the caller checks the scope where it acts
        # (app/web/authority.py); listings show only repositories_with(scope).
        return self


def _insufficient(scope: str) -> ApiError:
    return ApiError(403, "insufficient_scope",
                    f"your permission on the code host does not give the {scope} scope here")


def session_of(req) -> SessionActor:
    """The request's session, for routes that need a signed-in viewer (401 otherwise)."""
    auth = getattr(req.context, "auth", None)
    if not isinstance(auth, SessionActor):
        raise ApiError(401, "session_required", "sign in first (GET /auth/sign-in)")
    return auth


def check_csrf(req, actor: SessionActor, form: dict | None = None) -> None:
    presented = req.get_header(CSRF_HEADER)
    if presented is None and form is not None:
        presented = (form.get(CSRF_FIELD) or [None])[0]
    if not presented or not hmac.compare_digest(presented.encode(), actor.csrf_token.encode()):
        raise ApiError(403, "csrf_failed", f"a session's unsafe request needs its CSRF token ({CSRF_HEADER} header)")


def read_form(req) -> dict | None:
    """A form body (application/x-www-form-urlencoded), kept on req.context.form; None for other bodies."""
    if (req.content_type or "").split(";")[0].strip().lower() != "application/x-www-form-urlencoded":
        return None
    raw = read_bounded(req, FORM_MAX_BYTES)
    try:
        form = parse_qs(raw.decode("utf-8"), keep_blank_values=True, max_num_fields=50)
    except (UnicodeDecodeError, ValueError):
        raise ApiError(400, "malformed_form", "the form body is not valid") from None
    req.context.form = form
    return form


class SessionAuth:
    """Falcon middleware: authenticates the session cookie on the methods a resource accepts it for."""

    def __init__(self, config, pool):
        self.config = config
        self.pool = pool

    def process_resource(self, req, resp, resource, params):
        if resource is None or req.method not in getattr(resource, "session_methods", ()):
            return
        if req.get_header("Authorization") is not None:
            return  # a bearer token speaks for itself
        value = cookie_value(req, session_cookie(self.config))
        if value is None:
            return
        actor = self.authenticate(req, value)
        if req.method not in SAFE_METHODS:
            check_csrf(req, actor, read_form(req) if req.get_header(CSRF_HEADER) is None else None)
        req.context.auth = actor

    def authenticate(self, req, value: str) -> SessionActor:
        # The lookup, the limiter (only for an unknown cookie) and a failure's
        # count are one call (sql/functions/sessions.sql).
        # Retried once after a lost connection: a repeat can at most count one more failure.
        row = db.call(self.pool, self.config, sql_api.session_authenticate_v2, idempotent=True,
                      token_sha256=digest(value), client_key=auth_throttle.client_key(req),
                      limit=self.config.auth_rate_limit_per_minute, now=auth_throttle.now())
        if row["outcome"] == "limited":
            raise auth_throttle.limited(row["retry_after_seconds"])
        if row["outcome"] == "unknown":
            raise ApiError(401, "invalid_session", "the session is not valid; sign in again")
        if row["outcome"] == "expired":
            raise ApiError(401, "session_expired", "the session has expired; sign in again")
        return SessionActor(str(row["session_id"]), row["viewer_id"], row["viewer_login"],
                            frozenset(row["repository_ids"]), row["expires_at"], csrf_token(value),
                            frozenset(row["admin_repository_ids"]), frozenset(row["write_repository_ids"]),
                            row["permissions_checked_at"])

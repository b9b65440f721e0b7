"""Sign-in with the code host (the OAuth web flow for apps, with PKCE) and the
session endpoints.

Sign-in starts and callbacks are limited per client address to
SERVICE_SIGN_IN_PER_MINUTE (429 `too_many_sign_ins` with Retry-After): each
start stores a row and each callback costs an outbound token exchange with the
app's client secret.

GET /auth/sign-in[?returnTo=/path]
    A random pre-session cookie (10 minutes, path /auth) is bound to a random
    `state` in the database; the PKCE verifier is derived from the cookie, so
    only this browser can finish. 302 to {HOST_WEB_URL}/login/oauth/authorize.
GET /auth/callback?code=&state=
    The cookie's attempt is used up (one try), `state` must match, the code is
    exchanged with the verifier, the viewer and what they reach on the code
    host are read (app/host/oauth.py), and the OAuth token is forgotten. A
    session cookie is set; 302 to returnTo.
POST /auth/sign-out
    Deletes the session (CSRF token required when there is one); 204, or 303
    to / for a form.
GET /api/v1/session
    200 {viewer: {id, login}, actor, csrfToken, expiresAt}; 401 without a session.
"""
from __future__ import annotations

import re

import falcon

from app import sql_api
from app.host.oauth import HostUnavailable, OAuthClient, SignInRefused, authorize_url
from app.jsonlog import log
from app.web import auth_throttle, db
from app.web.errors import ApiError
from app.web.session_auth import (
    SessionAuth,
    check_csrf,
    clear_cookie,
    cookie_value,
    derived,
    digest,
    new_secret_value,
    read_form,
    session_cookie,
    session_of,
    set_cookie,
)
from app.web.tokens import iso

SIGN_IN_COOKIE = "boardready_sign_in"
SIGN_IN_PATH = "/auth"
SIGN_IN_TTL_SECONDS = 600
RETURN_TO = re.compile(r"^/(?![/\\])[\x21-\x7e]{0,1999}$")   # a path on this service, never another host
CODE = re.compile(r"^[A-Za-z0-9_.-]{1,200}$")
STATE = re.compile(r"^[A-Za-z0-9_-]{16,200}$")


def _not_configured() -> ApiError:
    return ApiError(503, "sign_in_not_configured", "sign-in needs HOST_OAUTH_CLIENT_ID and HOST_OAUTH_CLIENT_SECRET")


def _verifier(pre_session: str) -> str:
    return derived(pre_session, "pkce")


class _SignInRoute:
    auth = "none"

    def __init__(self, config, pool):
        self.config, self.pool = config, pool
        self.settings = config.sign_in

    @property
    def redirect_uri(self) -> str:
        return f"{self.config.public_url}/auth/callback"


    def take_turn(self, req) -> None:
        """One sign-in step for the client address, or 429 past the limit.

        Only a top-level navigation takes a turn: what another site's page can
        make a browser fetch on its own (an image, a script, a frame, a fetch)
        says so in Sec-Fetch-Dest / Sec-Fetch-Mode and is refused (403
        `sign_in_not_navigation`) before it is counted, so it cannot use up the
        address's sign-ins and lock its people out."""
        dest, mode = req.get_header("Sec-Fetch-Dest"), req.get_header("Sec-Fetch-Mode")
        if (dest is not None and dest.lower() != "document") or (mode is not None and mode.lower() != "navigate"):
            raise ApiError(403, "sign_in_not_navigation", "sign in by opening this address in the browser")
        row = db.call(self.pool, self.config, sql_api.rate_take, idempotent=False, limiter="sign_in",
                      subject=auth_throttle.client_key(req), limit=self.config.sign_in_per_minute,
                      now=auth_throttle.now())
        if not row["allowed"]:
            raise ApiError(429, "too_many_sign_ins", "too many sign-in attempts from this address; retry later",
                           headers={"Retry-After": str(row["retry_after_seconds"])})


class SignIn(_SignInRoute):
    def on_get(self, req, resp):
        if not self.settings.enabled:
            raise _not_configured()
        self.take_turn(req)
        return_to = req.get_param("returnTo") or "/"
        if not RETURN_TO.match(return_to):
            raise ApiError(400, "invalid_return_to", "returnTo must be a path on this service")
        pre_session, state = new_secret_value(), new_secret_value()
        db.call(self.pool, self.config, sql_api.sign_in_begin, idempotent=False, cookie_sha256=digest(pre_session),
                state=state, return_to=return_to, ttl_seconds=SIGN_IN_TTL_SECONDS)
        set_cookie(resp, self.config, SIGN_IN_COOKIE, pre_session, SIGN_IN_TTL_SECONDS, path=SIGN_IN_PATH)
        resp.status = falcon.HTTP_302
        resp.location = authorize_url(self.settings.web_url, self.settings.client_id, self.redirect_uri, state,
                                      _verifier(pre_session))


class Callback(_SignInRoute):
    def on_get(self, req, resp):
        if not self.settings.enabled:
            raise _not_configured()
        self.take_turn(req)
        pre_session = cookie_value(req, SIGN_IN_COOKIE)
        # Whatever happens next, this browser's sign-in attempt is over.
        clear_cookie(resp, self.config, SIGN_IN_COOKIE, path=SIGN_IN_PATH)
        if pre_session is None:
            raise ApiError(400, "sign_in_expired", "no sign-in is in progress in this browser; start again")
        state = req.get_param("state") or ""
        row = db.call(self.pool, self.config, sql_api.sign_in_finish, idempotent=False,
                      cookie_sha256=digest(pre_session), state=state if STATE.match(state) else "")
        if req.get_param("error") is not None:
            raise ApiError(403, "sign_in_denied", "the sign-in was not authorized on the code host")
        if row["outcome"] in ("unknown", "expired"):
            raise ApiError(400, "sign_in_expired", "the sign-in took too long or was already used; start again")
        if row["outcome"] != "ok":
            raise ApiError(400, "invalid_state", "the sign-in's state does not match this browser's")
        code = req.get_param("code") or ""
        if not CODE.match(code):
            raise ApiError(400, "invalid_code", "the code host sent no usable code")
        viewer = self._viewer(code, _verifier(pre_session))

        value = new_secret_value()
        created = db.call(self.pool, self.config, sql_api.session_create_v2, idempotent=False,
                          token_sha256=digest(value), viewer_id=viewer.id, viewer_login=viewer.login,
                          installation_ids=list(viewer.installation_ids),
                          repository_ids=list(viewer.repository_ids),
                          admin_repository_ids=list(viewer.admin_repository_ids),
                          write_repository_ids=list(viewer.write_repository_ids),
                          ttl_hours=self.settings.session_ttl_hours)
        log("session.created", sessionId=str(created["session_id"]), viewerId=viewer.id,
            installations=len(viewer.installation_ids), repositories=len(viewer.repository_ids))
        set_cookie(resp, self.config, session_cookie(self.config), value, self.settings.session_ttl_hours * 3600)
        resp.status = falcon.HTTP_302
        resp.location = row["return_to"]

    def _viewer(self, code: str, verifier: str):
        client = OAuthClient(self.settings.web_url, self.config.host_api_url, self.settings.client_id,
                             self.settings.client_secret, timeout_ms=self.config.host_timeout_ms)
        try:
            return client.resolve_viewer(code, self.redirect_uri, verifier)
        except SignInRefused as exc:
            log("session.sign_in_refused", level="warning", reason=str(exc))
            raise ApiError(400, "sign_in_refused", "the code host refused the sign-in code; start again") from None
        except HostUnavailable as exc:
            log("session.code_host_unavailable", level="error", reason=str(exc))
            raise ApiError(503, "code_host_unavailable", "the code host could not be reached; retry") from None


class SignOut(_SignInRoute):
    """Not in session_methods: an unknown or expired cookie is simply cleared."""

    def on_post(self, req, resp):
        value = cookie_value(req, session_cookie(self.config))
        form = read_form(req)
        if value is not None:
            try:
                actor = SessionAuth(self.config, self.pool).authenticate(req, value)
            except ApiError as exc:
                if exc.status != 401:
                    raise
            else:
                check_csrf(req, actor, form)
                deleted = db.call(self.pool, self.config, sql_api.session_delete, idempotent=True,
                                  token_sha256=digest(value))
                log("session.deleted", sessionId=actor.session_id, outcome=deleted["outcome"])
        clear_cookie(resp, self.config, session_cookie(self.config))
        if form is not None:
            resp.status = falcon.HTTP_303
            resp.location = "/"
        else:
            resp.status = falcon.HTTP_204


class SessionInfo:
    auth = "none"
    session_methods = frozenset({"GET"})

    def on_get(self, req, resp):
        actor = session_of(req)
        resp.media = {"viewer": {"id": actor.viewer_id, "login": actor.viewer_login}, "actor": actor.actor,
                      "csrfToken": actor.csrf_token, "expiresAt": iso(actor.expires_at)}


def add_routes(app: falcon.App, config, pool) -> None:
    app.add_route("/auth/sign-in", SignIn(config, pool))
    app.add_route("/auth/callback", Callback(config, pool))
    app.add_route("/auth/sign-out", SignOut(config, pool))
    app.add_route("/api/v1/session", SessionInfo())

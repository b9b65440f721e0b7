"""Identity endpoints: the OAuth web flow for user sign-in, the OIDC issuer's
discovery and keys, and the ID-token request endpoint a runner calls.

The OAuth flow is deliberately small: there is no login form; ``authorize``
signs in the configured test user at once and redirects back with a code (or
with ``error=access_denied`` when the user is set to refuse). As on the code
host: PKCE with ``code_challenge_method=S256`` only (a code issued with a
challenge needs its ``code_verifier``), a ``redirect_uri`` must be one of the
app's callback URLs or below one (else a redirect to the first callback URL
with ``error=redirect_uri_mismatch``), and a code works once, for 10 minutes.
"""
from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
import time
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from emulator.auth import random_token
from emulator.errors import HostError
from emulator.oidc import ISSUER_PATH, OidcIssuer
from emulator.routing import Reply, RequestContext, route
from emulator.state import State, Token

OAUTH_CODE_LIFETIME_SECONDS = 600


class IdentityRoutes:
    def __init__(self, state: State, issuer: OidcIssuer):
        self.state = state
        self.issuer = issuer

    # ---- OAuth web flow --------------------------------------------------------------------

    @route("GET", "/login/oauth/authorize", "oauth/authorize")
    def authorize(self, ctx: RequestContext) -> Reply:
        client_id = ctx.arg("client_id")
        with self.state.lock:
            app = next((a for a in self.state.apps.values() if a.client_id == client_id), None)
            user_id, denied = self.state.oauth_user_id, self.state.oauth_denied
        if app is None:
            return Reply(404, b"unknown client_id", content_type="text/plain")
        if user_id is None:
            return Reply(403, b"no test user is configured for sign-in (control API: POST /_emulator/users)", content_type="text/plain")
        default_uri = app.callback_urls[0] if app.callback_urls else f"{ctx.base_url}/oauth/callback"
        redirect_uri = ctx.arg("redirect_uri") or default_uri
        if app.callback_urls and not any(_under(redirect_uri, url) for url in app.callback_urls):
            return _redirect(default_uri, error="redirect_uri_mismatch", state=ctx.arg("state"),
                             error_description="The redirect_uri MUST match the registered callback URL for this application.")
        challenge, method = ctx.arg("code_challenge"), ctx.arg("code_challenge_method")
        if challenge is not None and method != "S256":
            # The code host accepts only the S256 method.
            return Reply(400, b"code_challenge_method must be S256", content_type="text/plain")
        if denied:
            return _redirect(redirect_uri, error="access_denied", state=ctx.arg("state"),
                             error_description="The user has denied your application access.")
        code = secrets.token_hex(10)
        with self.state.lock:
            self.state.oauth_codes[code] = {
                "app_id": app.id,
                "user_id": user_id,
                "redirect_uri": redirect_uri,
                "code_challenge": challenge,
                "expires": time.time() + OAUTH_CODE_LIFETIME_SECONDS,
            }
        return _redirect(redirect_uri, code=code, state=ctx.arg("state"))

    @route("POST", "/login/oauth/access_token", "oauth/access-token")
    def access_token(self, ctx: RequestContext) -> Reply:
        form = ctx.form_or_json()
        wants_json = "application/json" in (ctx.header("accept") or "")

        def answer(body: dict) -> Reply:
            # The real endpoint answers 200 even for errors, with an "error" field.
            if wants_json:
                return Reply(200, body)
            return Reply(200, urlencode(body).encode(), content_type="application/x-www-form-urlencoded; charset=utf-8")

        with self.state.lock:
            app = next((a for a in self.state.apps.values() if a.client_id == form.get("client_id")), None)
            if app is None or not hmac.compare_digest(str(form.get("client_secret", "")), app.client_secret):
                return answer({"error": "incorrect_client_credentials",
                               "error_description": "The client_id and/or client_secret passed are incorrect."})
            grant = self.state.oauth_codes.pop(str(form.get("code", "")), None)
            if grant is None or grant["app_id"] != app.id or grant["expires"] < time.time():
                return answer({"error": "bad_verification_code",
                               "error_description": "The code passed is incorrect or expired."})
            if grant["code_challenge"] is not None and not _verifier_matches(form.get("code_verifier"),
                                                                             grant["code_challenge"]):
                return answer({"error": "bad_verification_code",
                               "error_description": "The code passed is incorrect or expired."})
            if form.get("redirect_uri") and form["redirect_uri"] != grant["redirect_uri"]:
                return answer({"error": "redirect_uri_mismatch",
                               "error_description": "The redirect_uri MUST match the registered callback URL for this application."})
            token = Token(value=random_token("gho_"), kind="user", expires_at=None, user_id=grant["user_id"], app_id=app.id)
            self.state.tokens[token.value] = token
        return answer({"access_token": token.value, "token_type": "bearer", "scope": ""})

    # ---- OIDC ------------------------------------------------------------------------------

    @route("GET", ISSUER_PATH + "/.well-known/openid-configuration", "oidc/discovery")
    def discovery(self, ctx: RequestContext) -> Reply:
        return Reply(200, self.issuer.discovery())

    @route("GET", ISSUER_PATH + "/.well-known/jwks", "oidc/jwks")
    def jwks(self, ctx: RequestContext) -> Reply:
        return Reply(200, self.issuer.jwks())

    @route("GET", "/_services/token/runs/{run_id}/attempts/{attempt_number}/idtoken", "oidc/request-id-token")
    def request_id_token(self, ctx: RequestContext) -> Reply:
        """What a runner's ``core.getIDToken(audience)`` calls, with the per-attempt request token."""
        presented = (ctx.header("authorization") or "").partition(" ")[2].strip()
        try:
            run_id, number = int(ctx.params["run_id"]), int(ctx.params["attempt_number"])
        except ValueError:
            raise HostError(404, "Not Found") from None
        with self.state.lock:
            run = self.state.runs.get(run_id)
            if run is None or not 1 <= number <= len(run.attempts):
                raise HostError(404, "Not Found")
            attempt = run.attempts[number - 1]
            if not presented or not hmac.compare_digest(presented, attempt.id_token_request_token):
                raise HostError(401, "Bad credentials")
            if attempt.status != "in_progress":
                # The request token only works while the job runs.
                raise HostError(401, "The job is not running")
            repo = self.state.repositories[run.repository_id]
            audience = ctx.arg("audience") or f"{ctx.base_url}/{repo.owner.login}"
            claims = self.issuer.run_claims(repo, run, attempt, audience)
        return Reply(200, {"count": 1, "value": self.issuer.sign(claims)})


def _redirect(uri: str, **params) -> Reply:
    """302 to ``uri`` with ``params`` added to its query (None values left out)."""
    parts = urlsplit(uri)
    query = parse_qsl(parts.query) + [(k, v) for k, v in params.items() if v is not None]
    return Reply(302, b"", {"Location": urlunsplit(parts._replace(query=urlencode(query)))}, content_type="text/html")


def _under(redirect_uri: str, callback_url: str) -> bool:
    """Same scheme, host and port, and the callback URL's path or one below it."""
    given, registered = urlsplit(redirect_uri), urlsplit(callback_url)
    if (given.scheme, given.netloc) != (registered.scheme, registered.netloc):
        return False
    base = registered.path.rstrip("/")
    return given.path == registered.path or given.path.startswith(base + "/")


def _verifier_matches(verifier, challenge: str) -> bool:
    """RFC 7636 S256: base64url(SHA-256(code_verifier)) equals the challenge."""
    if not isinstance(verifier, str) or not 43 <= len(verifier) <= 128:
        return False
    computed = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode("ascii", "replace")).digest()).rstrip(b"=")
    return hmac.compare_digest(computed.decode(), challenge)

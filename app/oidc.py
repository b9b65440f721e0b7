"""Verifying the code host's OIDC ID tokens for the workflow result callback.

The issuer's discovery document names its JWKS; keys are cached and fetched
again when a token names an unknown `kid`, at most once a minute, so a flood of
forged kids cannot turn into a flood of requests to the issuer.
"""
from __future__ import annotations

import threading
import time

import httpx
import jwt

from app.refusal import Refused

LEEWAY_SECONDS = 60
REFETCH_INTERVAL_SECONDS = 60
REQUIRED_CLAIMS = ("iss", "aud", "exp", "iat", "repository", "repository_id", "run_id", "jti")


class OidcRefused(Refused):
    """A token the OIDC check refuses; `code` is the stable error code."""


class JwksCache:
    def __init__(self, issuer: str, http: httpx.Client, clock=time.monotonic):
        self.issuer = issuer.rstrip("/")
        self.http = http
        self.clock = clock
        self._keys: dict[str, jwt.PyJWK] = {}
        self._fetched_at: float | None = None
        self._lock = threading.Lock()

    def _fetch(self) -> None:
        try:
            discovery = self.http.get(f"{self.issuer}/.well-known/openid-configuration").json()
            document = self.http.get(discovery["jwks_uri"]).json()
        except (httpx.HTTPError, ValueError, KeyError, TypeError):
            raise OidcRefused("oidc_issuer_unavailable", "the token issuer's keys could not be fetched") from None
        keys = {}
        for entry in document.get("keys", []):
            try:
                if entry.get("kid") and entry.get("kty") == "RSA":
                    keys[entry["kid"]] = jwt.PyJWK(entry, algorithm="RS256")
            except jwt.PyJWTError:
                continue
        self._keys = keys

    def key(self, kid: str) -> jwt.PyJWK:
        with self._lock:
            if kid not in self._keys:
                now = self.clock()
                if self._fetched_at is None or now - self._fetched_at >= REFETCH_INTERVAL_SECONDS:
                    self._fetched_at = now
                    self._fetch()
            found = self._keys.get(kid)
        if found is None:
            raise OidcRefused("oidc_unknown_key", "the token is signed by a key the issuer does not publish")
        return found


class OidcVerifier:
    def __init__(self, issuer: str, audience: str, http: httpx.Client | None = None, clock=time.monotonic):
        self.issuer = issuer.rstrip("/")
        self.audience = audience
        self.keys = JwksCache(self.issuer, http or httpx.Client(timeout=5), clock=clock)

    def verify(self, token: str) -> dict:
        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError:
            raise OidcRefused("oidc_malformed_token", "the ID token is not a JWT") from None
        if header.get("alg") != "RS256" or not isinstance(header.get("kid"), str):
            raise OidcRefused("oidc_malformed_token", "the ID token must be RS256 with a key id")
        key = self.keys.key(header["kid"])
        try:
            claims = jwt.decode(token, key.key, algorithms=["RS256"], audience=self.audience, issuer=self.issuer,
                                leeway=LEEWAY_SECONDS, options={"require": list(REQUIRED_CLAIMS)})
        except jwt.ExpiredSignatureError:
            raise OidcRefused("oidc_token_expired", "the ID token has expired") from None
        except jwt.InvalidAudienceError:
            raise OidcRefused("oidc_wrong_audience", "the ID token is for another audience") from None
        except jwt.InvalidIssuerError:
            raise OidcRefused("oidc_wrong_issuer", "the ID token is from another issuer") from None
        except jwt.ImmatureSignatureError:
            raise OidcRefused("oidc_token_not_yet_valid", "the ID token is not valid yet") from None
        except jwt.MissingRequiredClaimError as exc:
            raise OidcRefused("oidc_missing_claim", f"the ID token lacks the {exc.claim} claim") from None
        except jwt.PyJWTError:
            raise OidcRefused("oidc_invalid_token", "the ID token's signature or claims are invalid") from None
        return claims


def workflow_file(claims: dict) -> str | None:
    """The workflow path of `workflow_ref` (owner/repo/.github/workflows/X.yml@ref) when it is in the token's repository."""
    ref = claims.get("workflow_ref")
    repository = claims.get("repository")
    if not isinstance(ref, str) or not isinstance(repository, str) or "@" not in ref:
        return None
    path = ref.split("@", 1)[0]
    prefix = repository + "/"
    return path[len(prefix):] if path.startswith(prefix) else None

"""Credentials the code host accepts: app JWTs, installation tokens, user OAuth tokens.

App JWT rules follow the real host: RS256 signed with the app's private key,
``iss`` is the app id (string or integer), ``exp`` at most 10 minutes after
``iat`` and not passed, ``iat`` not in the future (a minute of clock skew is
tolerated, as the host does). Every failure is a 401 with the host's message.
"""
from __future__ import annotations

import json
import random
import secrets
import time
from datetime import timedelta

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from jwt import api_jws as jws

from emulator.errors import HostError, bad_credentials, not_found
from emulator.state import App, Repository, State, Token, User, utcnow

CLOCK_SKEW_SECONDS = 60
MAX_JWT_LIFETIME_SECONDS = 600
PERMISSION_LEVELS = {"read": 1, "write": 2, "admin": 3}


def generate_rsa_key_pair(bits: int = 2048) -> tuple[str, str]:
    """(private PEM, public PEM) of a fresh RSA key."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=bits)
    private_pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()
    public_pem = key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    ).decode()
    return private_pem, public_pem


def public_pem_of(private_pem: str) -> str:
    key = serialization.load_pem_private_key(private_pem.encode(), password=None)
    return key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    ).decode()


def random_token(prefix: str) -> str:
    # The length varies on purpose: clients must not assume a fixed token length.
    return prefix + secrets.token_urlsafe(random.randint(27, 60))


def credential_of(authorization: str | None) -> str | None:
    """The credential of ``Authorization: token X`` or ``Authorization: Bearer X``."""
    if not authorization:
        return None
    scheme, _, value = authorization.strip().partition(" ")
    if scheme.lower() not in ("token", "bearer") or not value.strip():
        return None
    return value.strip()


def verify_app_jwt(state: State, authorization: str | None, now: float | None = None) -> App:
    """The app that signed the bearer JWT, or HostError 401."""
    token = credential_of(authorization)
    if token is None or token.count(".") != 2:
        raise HostError(401, "A JSON web token could not be decoded")
    # PyJWS rather than jwt.decode: the claims are checked here, by the host's rules
    # (pyjwt would refuse an integer iss, which the host accepts).
    try:
        header = jwt.get_unverified_header(token)
        claims = json.loads(jws.decode_complete(token, options={"verify_signature": False})["payload"])
    except (jwt.PyJWTError, ValueError):
        raise HostError(401, "A JSON web token could not be decoded") from None
    if not isinstance(claims, dict):
        raise HostError(401, "A JSON web token could not be decoded")
    if header.get("alg") != "RS256":
        raise HostError(401, "A JSON web token could not be decoded")
    issuer = claims.get("iss")
    try:
        app_id = int(issuer)
    except (TypeError, ValueError):
        raise HostError(401, "'Issuer' claim ('iss') must be an Integer") from None
    with state.lock:
        app = state.apps.get(app_id)
    if app is None:
        raise HostError(401, "Integration not found")
    try:
        jws.decode_complete(token, app.public_key_pem, algorithms=["RS256"])
    except jwt.PyJWTError:
        raise HostError(401, "A JSON web token could not be decoded") from None
    now = time.time() if now is None else now
    iat, exp = claims.get("iat"), claims.get("exp")
    if not isinstance(iat, int) or isinstance(iat, bool) or iat > now + CLOCK_SKEW_SECONDS:
        raise HostError(401, "'Issued at' claim ('iat') must be an Integer representing a time in the past.")
    if not isinstance(exp, int) or isinstance(exp, bool) or exp <= now:
        raise HostError(
            401,
            "'Expiration time' claim ('exp') must be a numeric value representing the future time at which the assertion expires",
        )
    if exp - iat > MAX_JWT_LIFETIME_SECONDS:
        raise HostError(401, "'Expiration time' claim ('exp') is too far in the future")
    return app


def make_app_jwt(private_pem: str, app_id: int | str, iat: int | None = None, exp: int | None = None, **extra) -> str:
    """An app JWT as a well-behaved client makes one (iat 60 s back, 9 minutes of life)."""
    now = int(time.time())
    iat = now - 60 if iat is None else iat
    exp = iat + 540 if exp is None else exp
    payload = json.dumps({"iat": iat, "exp": exp, "iss": app_id, **extra}).encode()
    return jws.encode(payload, private_pem, algorithm="RS256", headers={"typ": "JWT"})


def permission_covers(granted: dict, name: str, level: str) -> bool:
    return PERMISSION_LEVELS.get(granted.get(name, ""), 0) >= PERMISSION_LEVELS[level]


def issue_installation_token(
    state: State, installation_id: int, repository_ids: list | None, permissions: dict
) -> Token:
    with state.lock:
        token = Token(
            value=random_token("ghs_"),
            kind="installation",
            expires_at=utcnow() + timedelta(seconds=state.installation_token_ttl_seconds),
            installation_id=installation_id,
            repository_ids=repository_ids,
            permissions=permissions,
            app_id=state.installations[installation_id].app_id,
        )
        state.tokens[token.value] = token
        return token


def _live_token(state: State, authorization: str | None, kind: str) -> Token:
    value = credential_of(authorization)
    if value is None:
        # The real API answers an anonymous call on a private resource with 401 here, not 404.
        raise HostError(401, "Requires authentication")
    with state.lock:
        token = state.tokens.get(value)
        if token is None or token.kind != kind:
            raise bad_credentials()
        if token.expires_at is not None and token.expires_at <= utcnow():
            raise bad_credentials()
        if kind == "installation" and token.installation_id not in state.installations:
            raise bad_credentials()
        return token


def require_installation_token(state: State, authorization: str | None) -> Token:
    return _live_token(state, authorization, "installation")


def require_repository_access(
    state: State, authorization: str | None, owner: str, name: str, permission: tuple[str, str] | None
) -> tuple[Token, Repository]:
    """The token and repository when the installation token reaches the repository.

    An unknown repository and one outside the token's reach look the same (404), as
    on the real host, so a token never learns about repositories it cannot see.
    """
    token = require_installation_token(state, authorization)
    with state.lock:
        repo = state.repository_by_name(owner, name)
        if repo is None or repo.installation_id != token.installation_id:
            raise not_found()
        if token.repository_ids is not None and repo.id not in token.repository_ids:
            raise not_found()
        if permission and not permission_covers(token.permissions, *permission):
            raise HostError(403, "Resource not accessible by integration")
        return token, repo


def require_user_token(state: State, authorization: str | None) -> tuple[Token, User]:
    token = _live_token(state, authorization, "user")
    with state.lock:
        user = state.users.get(token.user_id)
        if user is None:
            raise bad_credentials()
        return token, user

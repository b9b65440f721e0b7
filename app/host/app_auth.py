"""App authentication: an RS256 JWT signed with the app's private key, traded
for installation access tokens, which are cached in memory until shortly
before they expire. Tokens are never logged or stored."""
from __future__ import annotations

import datetime as dt
import threading
import time

import jwt

from app.config import Secret

JWT_BACKDATE_SECONDS = 60     # tolerate clock drift between us and the host
JWT_LIFETIME_SECONDS = 540    # exp - iat = 600 s, the host's maximum
TOKEN_REFRESH_MARGIN = dt.timedelta(minutes=5)


def app_jwt(app_id: str, private_key: Secret, now: float | None = None) -> str:
    now = int(now if now is not None else time.time())
    claims = {"iat": now - JWT_BACKDATE_SECONDS, "exp": now + JWT_LIFETIME_SECONDS, "iss": str(app_id)}
    return jwt.encode(claims, private_key.reveal(), algorithm="RS256")


class InstallationTokens:
    """Per-process cache of installation access tokens (a cache, not state: any
    replica can mint its own)."""

    def __init__(self, fetch):
        self._fetch = fetch  # installation_id -> (token, expires_at)
        self._cache: dict[int, tuple[Secret, dt.datetime]] = {}
        self._lock = threading.Lock()

    def get(self, installation_id: int) -> Secret:
        with self._lock:
            cached = self._cache.get(installation_id)
        if cached and cached[1] - TOKEN_REFRESH_MARGIN > dt.datetime.now(dt.UTC):
            return cached[0]
        token, expires_at = self._fetch(installation_id)
        with self._lock:
            self._cache[installation_id] = (token, expires_at)
        return token

    def invalidate(self, installation_id: int) -> None:
        with self._lock:
            self._cache.pop(installation_id, None)

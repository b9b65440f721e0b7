"""Signing a person in with the code host: the OAuth web flow for apps with
PKCE (S256), and what the viewer can reach, read with the short-lived user
token. The token lives in this module's calls only: it is never returned,
stored, logged or put in a session.

Paths and shapes are the code host's: `{HOST_WEB_URL}/login/oauth/authorize`,
`{HOST_WEB_URL}/login/oauth/access_token`, and on the REST API `GET /user`,
`GET /user/installations`, `GET /user/installations/{id}/repositories`
(see tests/fixtures/code-host/rest-openapi-subset.json). Each repository of
the last carries the person's `permissions` (admin, maintain, push, triage,
pull): the session's scopes per repository come from them (docs/security.md).
"""
from __future__ import annotations

import base64
import hashlib
import re
from dataclasses import dataclass
from urllib.parse import urlencode

import httpx

from app.host.client import API_VERSION

PER_PAGE = 100
# Bounds what one sign-in may read: 100 pages of installations or of one
# installation's repositories, and 20000 repositories in all.
MAX_PAGES = 100
MAX_REPOSITORIES = 20_000
_NEXT_LINK = re.compile(r'<([^>]+)>;\s*rel="next"')


class SignInRefused(Exception):
    """The code host refused the code (wrong, expired, used, or the verifier does not match)."""


class HostUnavailable(Exception):
    """The code host could not be reached or answered something unusable."""


@dataclass(frozen=True)
class Viewer:
    id: int
    login: str
    installation_ids: tuple[int, ...]
    repository_ids: tuple[int, ...]
    admin_repository_ids: tuple[int, ...] = ()   # admin or maintain
    write_repository_ids: tuple[int, ...] = ()   # push


def permission_level(permissions) -> str:
    """admin (admin or maintain), write (push) or read, from a repository's `permissions` object."""
    if not isinstance(permissions, dict):
        return "read"
    if permissions.get("admin") is True or permissions.get("maintain") is True:
        return "admin"
    return "write" if permissions.get("push") is True else "read"


def pkce_challenge(verifier: str) -> str:
    """RFC 7636 S256: base64url(SHA-256(verifier)) without padding."""
    return base64.urlsafe_b64encode(hashlib.sha256(verifier.encode("ascii")).digest()).rstrip(b"=").decode()


def authorize_url(web_url: str, client_id: str, redirect_uri: str, state: str, verifier: str) -> str:
    query = {"client_id": client_id, "redirect_uri": redirect_uri, "state": state,
             "code_challenge": pkce_challenge(verifier), "code_challenge_method": "S256"}
    return f"{web_url}/login/oauth/authorize?{urlencode(query)}"


class OAuthClient:
    def __init__(self, web_url: str, api_url: str, client_id: str, client_secret, timeout_ms: int = 10_000,
                 transport: httpx.BaseTransport | None = None):
        self.web_url, self.api_url = web_url, api_url
        self.client_id, self.client_secret = client_id, client_secret
        timeout = timeout_ms / 1000
        self.timeout = httpx.Timeout(timeout, connect=min(timeout, 5.0))
        self.transport = transport

    def resolve_viewer(self, code: str, redirect_uri: str, verifier: str) -> Viewer:
        """Exchange the code, read who signed in and what they reach, and forget the token."""
        with httpx.Client(timeout=self.timeout, transport=self.transport,
                          headers={"User-Agent": "boardready"}) as http:
            token = self._exchange(http, code, redirect_uri, verifier)
            auth = {"Authorization": f"Bearer {token}", "Accept": "application/vnd.github+json",
                    "X-GitHub-Api-Version": API_VERSION}
            del token
            user = self._get(http, f"{self.api_url}/user", auth)
            if not isinstance(user.get("id"), int) or not isinstance(user.get("login"), str):
                raise HostUnavailable("GET /user answered without id and login")
            installations = self._pages(http, f"{self.api_url}/user/installations", auth, "installations")
            installation_ids = tuple(sorted({i["id"] for i in installations if isinstance(i.get("id"), int)}))
            levels: dict[int, str] = {}
            for installation_id in installation_ids:
                for repo in self._pages(http, f"{self.api_url}/user/installations/{installation_id}/repositories",
                                        auth, "repositories"):
                    if isinstance(repo.get("id"), int) and not isinstance(repo["id"], bool):
                        levels[repo["id"]] = permission_level(repo.get("permissions"))
                if len(levels) >= MAX_REPOSITORIES:
                    break
        kept = sorted(levels)[:MAX_REPOSITORIES]
        return Viewer(user["id"], user["login"][:100], installation_ids, tuple(kept),
                      tuple(r for r in kept if levels[r] == "admin"), tuple(r for r in kept if levels[r] == "write"))

    def _exchange(self, http: httpx.Client, code: str, redirect_uri: str, verifier: str) -> str:
        try:
            response = http.post(f"{self.web_url}/login/oauth/access_token", headers={"Accept": "application/json"},
                                 data={"client_id": self.client_id, "client_secret": self.client_secret.reveal(),
                                       "code": code, "redirect_uri": redirect_uri, "code_verifier": verifier})
        except httpx.HTTPError as exc:
            raise HostUnavailable(f"token exchange failed: {type(exc).__name__}") from None
        if response.status_code >= 500:
            raise HostUnavailable(f"token exchange answered {response.status_code}")
        try:
            body = response.json()
        except ValueError:
            raise HostUnavailable("token exchange answered no JSON") from None
        # The code host answers 200 with an "error" field for a refused code.
        token = body.get("access_token") if isinstance(body, dict) else None
        if not isinstance(token, str) or not token:
            raise SignInRefused(str(body.get("error") if isinstance(body, dict) else "no access_token")[:64])
        return token

    def _get(self, http: httpx.Client, url: str, auth: dict, params: dict | None = None) -> dict:
        response = self._send(http, url, auth, params)
        body = response.json()
        if not isinstance(body, dict):
            raise HostUnavailable("expected a JSON object")
        return body

    def _send(self, http: httpx.Client, url: str, auth: dict, params: dict | None) -> httpx.Response:
        try:
            response = http.get(url, headers=auth, params=params)
        except httpx.HTTPError as exc:
            raise HostUnavailable(f"{type(exc).__name__}") from None
        if response.status_code in (401, 403):
            raise SignInRefused(f"the user token was refused ({response.status_code})")
        if response.status_code != 200:
            raise HostUnavailable(f"answered {response.status_code}")
        return response

    def _pages(self, http: httpx.Client, url: str, auth: dict, key: str) -> list[dict]:
        """Every item of a paginated list, following the Link header's next page."""
        items: list[dict] = []
        next_url, params = url, {"per_page": PER_PAGE}
        for _ in range(MAX_PAGES):
            response = self._send(http, next_url, auth, params)
            try:
                batch = response.json().get(key)
            except (ValueError, AttributeError):
                raise HostUnavailable(f"{key}: expected a JSON object") from None
            if not isinstance(batch, list):
                raise HostUnavailable(f"{key}: expected a list")
            items.extend(item for item in batch if isinstance(item, dict))
            found = _NEXT_LINK.search(response.headers.get("link", ""))
            if not found or not found.group(1).startswith(self.api_url + "/"):
                break
            next_url, params = found.group(1), None
        return items

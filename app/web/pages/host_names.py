"""What the pages name from the code host: pull request titles and people's logins.

The service stores neither a pull request's title nor every person's login
(a run's actors are `host-user:<id>`), so the pages resolve them:

- Logins first from what the service kept when the person signed in or
  opened a pull request (boardready.people_logins, sql/functions/pages.sql),
  then from the code host (GET /user/{id} with the installation's token).
- Titles from the code host (GET /repos/{owner}/{repo}/pulls/{number}).

Answers are kept in this process (logins for its life; titles, and that
nothing was found, for TITLE_TTL_SECONDS), so a page asks the code host only for what it has not
seen; the calls of one page run side by side, each bounded by
LOOKUP_TIMEOUT_MS. A page never fails for a name: what could not be
resolved is shown as it is stored (`#12`, `host-user:2200000003`).
"""
from __future__ import annotations

import re
import threading
import time
from concurrent.futures import ThreadPoolExecutor

from app import sql_api
from app.host.client import HostClient, _repo_path
from app.host.errors import HostError
from app.jsonlog import log
from app.web import db

TITLE_TTL_SECONDS = 300
LOOKUP_TIMEOUT_MS = 3000
MAX_LOOKUPS_AT_ONCE = 8
MAX_KEPT = 5000
HOST_USER = re.compile(r"^host-user:([0-9]{1,19})$")


class PageHostClient(HostClient):
    """The host client with the read only the pages make (a person's login: HostClient.user)."""

    def pull_request(self, installation_id: int, repository: str, number: int) -> dict:
        return self._installation_call(installation_id, "GET", f"{_repo_path(repository)}/pulls/{int(number)}").json()


def _client(config) -> PageHostClient | None:
    if not (config.host_app_id and config.host_app_private_key):
        return None
    return PageHostClient(config.host_api_url, config.host_app_id, config.host_app_private_key,
                          timeout_ms=min(config.host_timeout_ms, LOOKUP_TIMEOUT_MS))


class HostNames:
    def __init__(self, config, pool):
        self.config, self.pool = config, pool
        self.client = _client(config)
        self._titles: dict[tuple[int, int], tuple[float, str | None]] = {}   # None: the host had none
        self._logins: dict[str, str] = {}
        self._unknown: dict[str, float] = {}   # actors nothing was found for, and when: not asked again for a while
        self._lock = threading.Lock()

    # -- titles -------------------------------------------------------------
    def titles(self, pulls: list[tuple[int, int, str, int]]) -> dict[tuple[int, int], str]:
        """{(repository id, number): title} for (repository id, number, full name, installation id)."""
        now = time.monotonic()
        with self._lock:
            kept = {key: title for key, (at, title) in self._titles.items() if now - at < TITLE_TTL_SECONDS}
        wanted = {(r, n): (name, inst) for r, n, name, inst in pulls if (r, n) not in kept}
        known = {key: title for key, title in kept.items() if title is not None}
        if wanted and self.client is not None:
            def lookup(item):
                (repository_id, number), (name, installation) = item
                try:
                    return (repository_id, number), self.client.pull_request(installation, name, number).get("title")
                except (HostError, ValueError) as exc:
                    log("pages.host_lookup_failed", level="warning", what="pull_request", repositoryId=repository_id,
                        number=number, error=type(exc).__name__)
                    return (repository_id, number), None

            with ThreadPoolExecutor(max_workers=min(MAX_LOOKUPS_AT_ONCE, len(wanted))) as lookups:
                found = list(lookups.map(lookup, wanted.items()))
            with self._lock:
                if len(self._titles) > MAX_KEPT:
                    self._titles.clear()
                for key, title in found:
                    # A failed lookup is kept too, so a page does not ask again for TTL_SECONDS.
                    self._titles[key] = (now, title if isinstance(title, str) else None)
                    if isinstance(title, str):
                        known[key] = title
        return known

    # -- logins -------------------------------------------------------------
    def logins(self, actors: set[str], installation_id: int | None) -> dict[str, str]:
        """{actor: what to show}: a login for `host-user:<id>`, the token's name for
        `token:<id>`; actors not resolved are left out (the page shows them as stored)."""
        now = time.monotonic()
        with self._lock:
            shown = {a: self._logins[a] for a in actors if a in self._logins}
            recently_unknown = {a for a in actors if now - self._unknown.get(a, -TITLE_TTL_SECONDS) < TITLE_TTL_SECONDS}
        missing = sorted(a for a in actors if a not in shown and a not in recently_unknown)
        if missing:
            with db.connection(self.pool, self.config) as conn:
                rows = sql_api.people_logins(conn, actors=missing)
            found = {r["actor"]: r["shown"] for r in rows if r["shown"]}
            for actor in missing:
                user = HOST_USER.match(actor)
                if actor not in found and user and self.client is not None and installation_id is not None:
                    try:
                        login = self.client.user(installation_id, int(user.group(1))).get("login")
                    except (HostError, ValueError) as exc:
                        log("pages.host_lookup_failed", level="warning", what="user", actor=actor,
                            error=type(exc).__name__)
                        login = None
                    if isinstance(login, str) and login:
                        found[actor] = login
            with self._lock:
                if len(self._logins) > MAX_KEPT:
                    self._logins.clear()
                if len(self._unknown) > MAX_KEPT:
                    self._unknown.clear()
                self._logins.update(found)
                self._unknown.update({a: now for a in missing if a not in found})
            shown.update(found)
        return shown

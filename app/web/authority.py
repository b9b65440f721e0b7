"""Who may decide: the caller's right on one repository, checked before any
request that changes a decision or a credential (docs/security.md).

`current(pool, config, auth, repository_id, scope)` checks the scope there
(403 `insufficient_scope`) and, for a session whose rights were read from the
code host more than SERVICE_PERMISSION_TTL_SECONDS ago, first asks the code
host again (`GET /repos/{owner}/{repo}/collaborators/{username}/permission`
with the installation's token), stores the answer in the session
(session_permission_replace) and checks against it: a person who lost the
permission gets 403, one left with no access at all has the session ended
(401 `session_ended`).

A bearer token minted by a person carries at most that person's current
rights: before a change the person's permission is read from the code host
(their current login by their durable id, `GET /user/{id}`, then the same
permission call) and the token acts within both its scopes and that
permission; a person with no access left there has their tokens on the
repository revoked (403). A token with no person behind it (minted by an
operator) never decides: approvals, requests for changes, waivers and
break-glass are 403 `person_required` with it (`decision=True`).
"""
from __future__ import annotations

import dataclasses
import datetime as dt
import threading

from app import queries, sql_api
from app.host import client as host_client
from app.host.errors import HostError
from app.jsonlog import log
from app.web import db
from app.web.errors import ApiError
from app.web.session_auth import ADMIN_SCOPES, READ_SCOPES, WRITE_SCOPES, SessionActor

# The code host's role names (role_name) and legacy permission names, to ours.
ROLES = {"admin": "admin", "maintain": "admin", "write": "write", "push": "write", "triage": "read",
         "read": "read", "pull": "read", "none": "none"}

_clients: dict[int, object] = {}
_clients_lock = threading.Lock()


def require_on(auth, scope: str, repository_id: int):
    """`auth` has `scope` on the repository (a session: from the code host; a token: its own), else 403/404."""
    if hasattr(auth, "require_access"):
        return auth.require_access(scope, repository_id)
    if scope not in auth.scopes:
        raise ApiError(403, "insufficient_scope", f"the token lacks the {scope} scope")
    if int(auth.repository_id) != int(repository_id):
        raise ApiError(403, "repository_mismatch", "the token is scoped to another repository")
    return auth


def _stale(config, actor: SessionActor, now: dt.datetime) -> bool:
    checked = actor.permissions_checked_at
    return checked is None or now - checked >= dt.timedelta(seconds=config.permission_ttl_seconds)


def _client(config):
    with _clients_lock:
        if id(config) not in _clients:
            _clients[id(config)] = host_client.from_config(config)
        return _clients[id(config)]


def _role_from_host(pool, config, actor: SessionActor, repository_id: int) -> str:
    client = _client(config)
    with db.connection(pool, config) as conn:
        repository = queries.fetch_one(conn, "repository_identity", repository_id=repository_id)
    if client is None or repository is None:
        raise ApiError(503, "code_host_unavailable", "your permission could not be confirmed with the code host")
    try:
        answer = client.collaborator_permission(repository["installation_id"], repository["full_name"],
                                                actor.viewer_login)
    except HostError as exc:
        if exc.status == 404:
            return "none"
        log("session.permission_unavailable", level="warning", reason=str(exc)[:200])
        raise ApiError(503, "code_host_unavailable", "your permission could not be confirmed with the code host") \
            from None
    return ROLES.get(str(answer.get("role_name") or answer.get("permission") or "none"), "none")


# What each permission lets a person's token do (a session's scopes: app/web/session_auth.py).
ROLE_SCOPES = {"admin": ADMIN_SCOPES | {"runs:write"}, "write": WRITE_SCOPES, "read": READ_SCOPES, "none": frozenset()}


def _person_role(pool, config, auth, repository_id: int) -> str:
    """The permission the code host gives the token's person on the repository now."""
    client = _client(config)
    with db.connection(pool, config) as conn:
        repository = queries.fetch_one(conn, "repository_identity", repository_id=repository_id)
    if client is None or repository is None:
        raise ApiError(503, "code_host_unavailable", "the token's person's permission could not be confirmed")
    try:
        # The login by the durable id: a login can be renamed and then taken by someone else.
        login = client.user(repository["installation_id"], auth.person_id).get("login")
        if not isinstance(login, str) or not login:
            return "none"
        answer = client.collaborator_permission(repository["installation_id"], repository["full_name"], login)
    except HostError as exc:
        if exc.status == 404:
            return "none"
        log("token.permission_unavailable", level="warning", reason=str(exc)[:200])
        raise ApiError(503, "code_host_unavailable", "the token's person's permission could not be confirmed") \
            from None
    if (answer.get("user") or {}).get("id") not in (None, auth.person_id):
        return "none"
    return ROLES.get(str(answer.get("role_name") or answer.get("permission") or "none"), "none")


def _token_within_person(pool, config, auth, repository_id: int, scope: str):
    """A person's token, its scopes cut to what the person holds on the code host now."""
    role = _person_role(pool, config, auth, repository_id)
    log("token.permission_reread", tokenId=auth.token_id, personId=auth.person_id, repositoryId=repository_id,
        role=role)
    if role == "none":
        db.call(pool, config, sql_api.access_removed, idempotent=True, person_id=auth.person_id, account_id=None,
                installation_id=None, repository_ids=[int(repository_id)], reason="permission.reread")
        raise ApiError(403, "insufficient_scope", "the token's person no longer has access to this repository")
    held = dataclasses.replace(auth, scopes=frozenset(auth.scopes & ROLE_SCOPES[role]))
    if scope not in held.scopes and scope in auth.scopes:
        raise ApiError(403, "insufficient_scope",
                       f"the token's person's permission on the code host no longer gives the {scope} scope")
    return held


def current(pool, config, auth, repository_id: int, scope: str, decision: bool = False):
    """The caller, with rights no older than SERVICE_PERMISSION_TTL_SECONDS, holding `scope` on the repository.
    `decision`: an approval, a request for changes or a waiver, which only a person makes."""
    if not isinstance(auth, SessionActor):
        if int(repository_id) not in auth.repository_ids:
            raise ApiError(404, "not_found", "no such repository among your repositories")
        if decision and auth.person_id is None:
            raise ApiError(403, "person_required",
                           "only a person decides: use a session, or a token minted by a person")
        require_on(auth, scope, repository_id)
        if auth.person_id is None:
            return auth
        return _token_within_person(pool, config, auth, repository_id, scope)
    auth.require_access(None, repository_id)  # 404 for a repository the viewer never reached
    now = dt.datetime.now(dt.UTC)
    if _stale(config, auth, now):
        role = _role_from_host(pool, config, auth, repository_id)
        row = db.call(pool, config, sql_api.session_permission_replace, idempotent=True,
                      session_id=auth.session_id, repository_id=repository_id, role=role)
        log("session.permission_reread", sessionId=auth.session_id, repositoryId=repository_id, role=role,
            outcome=row["outcome"])
        if row["outcome"] in ("ended", "not_found"):
            raise ApiError(401, "session_ended", "you no longer have access on the code host; sign in again")
        admin = auth.admin_repository_ids - {repository_id}
        write = auth.write_repository_ids - {repository_id}
        readable = auth.repository_ids - ({repository_id} if role == "none" else set())
        auth = dataclasses.replace(auth, permissions_checked_at=now, repository_ids=frozenset(readable),
                                   admin_repository_ids=frozenset(admin | ({repository_id} if role == "admin" else set())),
                                   write_repository_ids=frozenset(write | ({repository_id} if role == "write" else set())))
        if role == "none":
            raise ApiError(403, "insufficient_scope", "you no longer have access to this repository on the code host")
    return auth.require_access(scope, repository_id)

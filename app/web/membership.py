"""Access ends when the code host says so (issue 25, docs/security.md).

A verified lifecycle delivery that removes a person's or everyone's access
ends the sessions that reached the scope and revokes the tokens people minted
there (sql/functions/sessions.sql, access_removed), with audit events:

    organization member_removed        the person, every repository of the organization's installations
    member removed                     the person, that repository
    installation_repositories removed  everyone, those repositories
    installation deleted / suspend     everyone, the installation's repositories

It runs when the delivery arrives, not in a queued job, so that access ends
at once; it is idempotent, so a redelivery (or a retry after a failure, which
the code host makes when it gets no 2xx) changes nothing more.

A delivery about one person carries no time, so an old one redelivered
must not undo what happened since (a person removed, then added back): for
those the person's state is read from the code host, not from the delivery
(`recheck`): for each repository in the scope that the person's sessions or
tokens reach, their permission now; none ends access there, less replaces
the sessions' rights (their tokens are cut to it at each change,
app/web/authority.py). The same re-read follows a change that may only have
lowered rights (`member` edited, team `membership` added or removed). When
the code host cannot be asked, a removal is applied as delivered (fail
closed). A team's access to a repository edited, added or removed (`team`
events name no person) makes every session reaching the repository read its
rights again before its next change. Suspend and unsuspend are read back from the code host too
(`GET /app/installations/{id}`), and the installation's status set from its
answer at once (sql/functions/sessions.sql, installation_suspension_set).
"""
from __future__ import annotations

from dataclasses import dataclass

from app import sql_api
from app.host.errors import HostError
from app.jsonlog import log
from app.payload import optional_id, positive_id
from app.web import authority, db

#: Events the app must subscribe to (besides the lifecycle's) for access to end at once.
EVENTS = ("organization", "member", "membership", "team")
#: Removals and edits of one person's access: re-read from the code host before acting.
PERSONAL = ("organization.member_removed", "organization.member_added", "member.removed", "member.edited",
            "membership.added", "membership.removed")


@dataclass(frozen=True)
class AccessRemoval:
    reason: str
    person_id: int | None
    account_id: int | None
    installation_id: int | None
    repository_ids: list[int] | None


def removal(event: str, action: str | None, payload: dict, normalized: dict) -> AccessRemoval | None:
    """What the delivery removes, or None. Raises InvalidPayload (400, nothing stored) for a
    removal without the ids it needs."""
    if event == "organization" and action == "member_removed":
        return AccessRemoval("organization.member_removed", positive_id(payload, "membership.user.id"),
                             positive_id(payload, "organization.id"), optional_id(payload, "installation.id"), None)
    if event == "member" and action == "removed":
        return AccessRemoval("member.removed", positive_id(payload, "member.id"), None,
                             optional_id(payload, "installation.id"), [positive_id(payload, "repository.id")])
    # Changes that may only have lowered someone's rights: re-read when the ids are there
    # (organization member_added also comes with a change of a member's role).
    person, where = {("organization", "member_added"): ("membership.user.id", "organization.id"),
                     ("member", "edited"): ("member.id", "repository.id"),
                     ("membership", "added"): ("member.id", "organization.id"),
                     ("membership", "removed"): ("member.id", "organization.id")}.get((event, action), (None, None))
    if person is not None:
        person_id, scope = optional_id(payload, person), optional_id(payload, where)
        if person_id is None or scope is None:
            return None
        repositories = [scope] if event == "member" else None
        return AccessRemoval(f"{event}.{action}", person_id, None if event == "member" else scope,
                             optional_id(payload, "installation.id"), repositories)
    if event == "team" and action in ("edited", "added_to_repository", "removed_from_repository"):
        repository = optional_id(payload, "repository.id")
        # A team's access to a repository changed: whom it concerns, the delivery does not say.
        return None if repository is None else AccessRemoval(
            f"team.{action}", None, None, optional_id(payload, "installation.id"), [repository])
    if event == "installation_repositories" and normalized.get("repositoriesRemoved"):
        return AccessRemoval("installation_repositories.removed", None, None, normalized["installation"]["id"],
                             [r["id"] for r in normalized["repositoriesRemoved"]])
    if event == "installation" and action == "unsuspend":
        return AccessRemoval("installation.unsuspend", None, None, normalized["installation"]["id"], None)
    if event == "installation" and action in ("deleted", "suspend"):
        return AccessRemoval(f"installation.{action}", None, None, normalized["installation"]["id"], None)
    return None


def apply(pool, config, change: AccessRemoval, delivery_id: str) -> None:
    if change.reason.startswith("team."):
        row = db.call(pool, config, sql_api.sessions_permissions_stale, idempotent=True,
                      repository_ids=change.repository_ids)
        log("access.permissions_stale", deliveryId=delivery_id, reason=change.reason,
            repositoryIds=change.repository_ids, sessions=row["sessions_marked"])
        return
    if change.reason in PERSONAL:
        try:
            recheck(pool, config, change, delivery_id)
            return
        except HostError as exc:
            log("access.recheck_unavailable", level="warning", deliveryId=delivery_id, reason=change.reason,
                error=str(exc)[:200])
            if change.reason not in ("organization.member_removed", "member.removed"):
                return   # an edit the code host could not confirm: the next change re-reads
    if change.reason in ("installation.suspend", "installation.unsuspend"):
        _suspension_from_host(pool, config, change, delivery_id)
        if change.reason == "installation.unsuspend":
            return
    _remove(pool, config, change, delivery_id)


def _suspension_from_host(pool, config, change: AccessRemoval, delivery_id: str) -> None:
    """The installation's suspension as the code host has it now; a suspend it cannot confirm is applied."""
    client = authority._client(config)
    suspended = change.reason == "installation.suspend"
    if client is not None:
        try:
            suspended = client.installation(change.installation_id).get("suspended_at") is not None
        except HostError as exc:
            log("access.suspension_unconfirmed", level="warning", deliveryId=delivery_id, error=str(exc)[:200])
            if not suspended:
                return
    row = db.call(pool, config, sql_api.installation_suspension_set, idempotent=True,
                  installation_id=change.installation_id, suspended=suspended)
    log("access.suspension", deliveryId=delivery_id, installationId=change.installation_id, suspended=suspended,
        outcome=row["outcome"])


def recheck(pool, config, change: AccessRemoval, delivery_id: str) -> None:
    """Apply what the code host says of the person now on each repository of the scope they reach."""
    client = authority._client(config)
    if client is None:
        raise HostError("no code host client configured")
    with db.connection(pool, config) as conn:
        reached = sql_api.person_reach(conn, person_id=change.person_id, account_id=change.account_id,
                                       installation_id=change.installation_id, repository_ids=change.repository_ids)
    if not reached:
        return
    try:
        login = client.user(reached[0]["installation_id"], change.person_id).get("login")
    except HostError as exc:
        if exc.status != 404:
            raise
        login = None
    lost = []
    for repository in reached:
        role = "none"
        if isinstance(login, str) and login:
            try:
                answer = client.collaborator_permission(repository["installation_id"], repository["full_name"],
                                                        login)
                role = authority.ROLES.get(str(answer.get("role_name") or answer.get("permission") or "none"),
                                           "none")
            except HostError as exc:
                if exc.status != 404:
                    raise
        if role == "none":
            lost.append(repository["repository_id"])
        else:
            db.call(pool, config, sql_api.person_permission_replace, idempotent=True, person_id=change.person_id,
                    repository_id=repository["repository_id"], role=role)
    log("access.rechecked", deliveryId=delivery_id, reason=change.reason, personId=change.person_id,
        repositories=len(reached), lost=len(lost))
    if lost:
        _remove(pool, config, AccessRemoval(change.reason, change.person_id, None, None, lost), delivery_id)


def _remove(pool, config, change: AccessRemoval, delivery_id: str) -> None:
    row = db.call(pool, config, sql_api.access_removed, idempotent=True, person_id=change.person_id,
                  account_id=change.account_id, installation_id=change.installation_id,
                  repository_ids=change.repository_ids, reason=change.reason)
    log("access.removed", deliveryId=delivery_id, reason=change.reason, personId=change.person_id,
        sessionsEnded=row["sessions_ended"], tokensRevoked=row["tokens_revoked"])

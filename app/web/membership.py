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
"""
from __future__ import annotations

from dataclasses import dataclass

from app import sql_api
from app.jsonlog import log
from app.payload import optional_id, positive_id
from app.web import db


#: Events the app must subscribe to (besides the lifecycle's) for access to end at once.
EVENTS = ("organization", "member")


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
    if event == "installation_repositories" and normalized.get("repositoriesRemoved"):
        return AccessRemoval("installation_repositories.removed", None, None, normalized["installation"]["id"],
                             [r["id"] for r in normalized["repositoriesRemoved"]])
    if event == "installation" and action in ("deleted", "suspend"):
        return AccessRemoval(f"installation.{action}", None, None, normalized["installation"]["id"], None)
    return None


def apply(pool, config, change: AccessRemoval, delivery_id: str) -> None:
    row = db.call(pool, config, sql_api.access_removed, idempotent=True, person_id=change.person_id,
                  account_id=change.account_id, installation_id=change.installation_id,
                  repository_ids=change.repository_ids, reason=change.reason)
    log("access.removed", deliveryId=delivery_id, reason=change.reason, personId=change.person_id,
        sessionsEnded=row["sessions_ended"], tokensRevoked=row["tokens_revoked"])

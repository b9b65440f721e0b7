"""Normalize a verified marketplace_purchase delivery into what the account
state machine needs: action, account (id, login, type) and effective date.

Nothing else of the payload is kept (the plan, prices and billing e-mail are
not stored: the only tier is free). A field the state machine relies on that is
missing or malformed is an InvalidPayload: the request gets a 400 naming the
field and nothing is stored.
"""
from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass

from app.lifecycle_events import InvalidPayload

ACTION = re.compile(r"^[a-z_]{1,64}$")
ACCOUNT_TYPES = ("Organization", "User")


@dataclass(frozen=True)
class MarketplaceEvent:
    action: str
    account_id: int
    account_login: str
    account_type: str            # 'Organization' or 'User'
    effective_date: dt.datetime  # timezone-aware


def _field(payload: dict, path: str):
    current = payload
    for part in path.split("."):
        if not isinstance(current, dict) or part not in current:
            raise InvalidPayload(path, "is required")
        current = current[part]
    return current


def _effective_date(payload: dict) -> dt.datetime:
    raw = _field(payload, "effective_date")
    if not isinstance(raw, str) or len(raw) > 64:
        raise InvalidPayload("effective_date", "must be an ISO 8601 timestamp")
    try:
        value = dt.datetime.fromisoformat(raw)
    except ValueError:
        raise InvalidPayload("effective_date", "must be an ISO 8601 timestamp") from None
    if value.tzinfo is None:
        # Ordering across deliveries needs an absolute instant.
        raise InvalidPayload("effective_date", "must carry a UTC offset")
    return value


def normalize(payload: dict) -> MarketplaceEvent:
    action = _field(payload, "action")
    if not isinstance(action, str) or not ACTION.match(action):
        raise InvalidPayload("action", "has an invalid value")
    account_id = _field(payload, "marketplace_purchase.account.id")
    if isinstance(account_id, bool) or not isinstance(account_id, int) or not 0 < account_id < 2**63:
        raise InvalidPayload("marketplace_purchase.account.id", "must be a positive integer")
    login = _field(payload, "marketplace_purchase.account.login")
    if not isinstance(login, str) or not 0 < len(login) <= 255:
        raise InvalidPayload("marketplace_purchase.account.login", "has an invalid value")
    account_type = _field(payload, "marketplace_purchase.account.type")
    if account_type not in ACCOUNT_TYPES:
        raise InvalidPayload("marketplace_purchase.account.type", "must be Organization or User")
    return MarketplaceEvent(action, account_id, login, account_type, _effective_date(payload))

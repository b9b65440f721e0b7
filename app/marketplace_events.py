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

from app.payload import InvalidPayload, get, positive_id, text

ACTION = re.compile(r"^[a-z_]{1,64}$")
ACCOUNT_TYPES = ("Organization", "User")


@dataclass(frozen=True)
class MarketplaceEvent:
    action: str
    account_id: int
    account_login: str
    account_type: str            # 'Organization' or 'User'
    effective_date: dt.datetime  # timezone-aware


def _effective_date(payload: dict) -> dt.datetime:
    raw = get(payload, "effective_date")
    if not isinstance(raw, str) or len(raw) > 64:
        raise InvalidPayload("effective_date", "must be an ISO 8601 timestamp")
    try:
        value = dt.datetime.fromisoformat(raw)
    except ValueError:
        raise InvalidPayload("effective_date", "must be an ISO 8601 timestamp") from None
    if value.tzinfo is None:
        # Ordering across deliveries needs an absolute instant.
        raise InvalidPayload("effective_date", "must carry a UTC offset")
    try:
        utc = value.astimezone(dt.UTC)   # OverflowError past year 9999 in UTC
    except OverflowError:
        utc = None
    if utc is None or utc.year < 1970:
        # Only instants every layer can hold and print back (docs/security.md, Inputs).
        raise InvalidPayload("effective_date", "must lie within 1970-01-01 .. 9999-12-31 UTC")
    return value


def normalize(payload: dict) -> MarketplaceEvent:
    action = text(payload, "action", ACTION, max_length=64)
    account_id = positive_id(payload, "marketplace_purchase.account.id")
    login = text(payload, "marketplace_purchase.account.login", max_length=255)
    account_type = get(payload, "marketplace_purchase.account.type")
    if account_type not in ACCOUNT_TYPES:
        raise InvalidPayload("marketplace_purchase.account.type", "must be Organization or User")
    return MarketplaceEvent(action, account_id, login, account_type, _effective_date(payload))

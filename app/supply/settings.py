"""SERVICE_COMPONENT_*: the component provider (the Nexar supply GraphQL API
with OAuth2 client credentials) and its limits, validated with app.config's
reader. Without a client id and secret supply tracking is off; one without
the other, or any invalid value (a limit, the timeout, the poll interval), is
reported in `missing`: readiness names it, nothing falls back silently."""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Mapping

from app.config import OAUTH_CLIENT_ID, Secret, _Reader

DEFAULT_PROVIDER_URL = "https://api.nexar.com/graphql"
DEFAULT_TOKEN_URL = "https://identity.nexar.com/connect/token"
_URL = re.compile(r"https?://[^\s/?#]+(/[^\s?#]*)?")


@dataclass(frozen=True)
class SupplySettings:
    provider_url: str = DEFAULT_PROVIDER_URL
    token_url: str = DEFAULT_TOKEN_URL
    client_id: str | None = None
    client_secret: Secret | None = None
    rate_limit_per_minute: int = 30
    breaker_threshold: int = 5
    breaker_cooldown_ms: int = 300_000
    observation_max_age_hours: int = 24
    timeout_ms: int = 10_000
    poll_ms: int = 1000
    missing: tuple[str, ...] = field(default=())

    @property
    def enabled(self) -> bool:
        return self.client_id is not None and self.client_secret is not None


def load(env: Mapping[str, str] | None = None) -> SupplySettings:
    r = _Reader(os.environ if env is None else env)
    urls = {}
    for name, default in (("SERVICE_COMPONENT_PROVIDER_URL", DEFAULT_PROVIDER_URL),
                          ("SERVICE_COMPONENT_PROVIDER_TOKEN_URL", DEFAULT_TOKEN_URL)):
        value = (r.text(name) or default).rstrip("/")
        if not _URL.fullmatch(value):
            r.missing.append(name)
            value = default
        urls[name] = value
    client_id = r.matching_text("SERVICE_COMPONENT_PROVIDER_CLIENT_ID", OAUTH_CLIENT_ID)
    secret, secret_name = r.text_or_file("SERVICE_COMPONENT_PROVIDER_CLIENT_SECRET")
    if secret is not None and not re.fullmatch(r"[\x21-\x7e]{1,512}", secret):
        r.missing.append(secret_name)
        secret = None
    elif (client_id is None) != (secret is None):
        # Half a client is a mistake, not a choice: say which half is missing.
        r.missing.append("SERVICE_COMPONENT_PROVIDER_CLIENT_SECRET" if secret is None
                         else "SERVICE_COMPONENT_PROVIDER_CLIENT_ID")
    both = client_id is not None and secret is not None
    return SupplySettings(
        provider_url=urls["SERVICE_COMPONENT_PROVIDER_URL"], token_url=urls["SERVICE_COMPONENT_PROVIDER_TOKEN_URL"],
        client_id=client_id if both else None, client_secret=Secret(secret) if both else None,
        rate_limit_per_minute=r.integer("SERVICE_COMPONENT_INTELLIGENCE_RATE_LIMIT_PER_MINUTE", 30, minimum=1,
                                        maximum=10_000, required_valid=True),
        breaker_threshold=r.integer("SERVICE_COMPONENT_INTELLIGENCE_CIRCUIT_BREAKER_THRESHOLD", 5, minimum=1,
                                    maximum=1000, required_valid=True),
        breaker_cooldown_ms=r.integer("SERVICE_COMPONENT_INTELLIGENCE_CIRCUIT_BREAKER_COOLDOWN_MS", 300_000,
                                      minimum=100, maximum=86_400_000, required_valid=True),
        observation_max_age_hours=r.integer("SERVICE_COMPONENT_OBSERVATION_MAX_AGE_HOURS", 24, minimum=1,
                                            maximum=24 * 365, required_valid=True),
        timeout_ms=r.integer("SERVICE_COMPONENT_PROVIDER_TIMEOUT_MS", 10_000, minimum=100, maximum=120_000,
                             required_valid=True),
        poll_ms=r.integer("SERVICE_SUPPLY_POLL_MS", 1000, minimum=10, maximum=600_000, required_valid=True),
        missing=tuple(r.missing),
    )

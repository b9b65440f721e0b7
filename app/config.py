"""All configuration, read from the environment and validated in one place.

`SERVICE_*` configures the service, `HOST_*` the code host. A value that is
present but invalid counts as missing: readiness names it, and the process
keeps running (liveness stays green) so an operator can see what is wrong.
Secrets are kept in `Secret` wrappers so that a stray repr never prints them.
"""
from __future__ import annotations

import ipaddress
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

DEFAULT_ARTIFACT_CAPABILITY_TTL_SECONDS = 900  # 15 minutes: long enough to open a report, short enough to leak little
DEFAULT_ARTIFACT_MAX_BYTES = 8 * 1024 * 1024   # the run results' body cap: the front buffers no more for /api/v1/runs
ARTIFACT_SIGNING_KEY = re.compile(r"^[\x21-\x7e]{32,512}$")   # at least 32 visible ASCII characters
DEFAULT_READINESS_DB_TIMEOUT_MS = 1000
DEFAULT_POOL_MAX = 50
DEFAULT_JOB_MAX_ATTEMPTS = 5
DEFAULT_WORKER_POLL_MS = 1000
DEFAULT_INTAKE_FIRST_MS = 5000
DEFAULT_WORKER_CONCURRENCY = 4
DEFAULT_JOB_LEASE_SECONDS = 60
DEFAULT_BIND = "127.0.0.1:8000"
DEFAULT_PROVIDER_URL = "https://api.nexar.com/graphql"
DEFAULT_TOKEN_URL = "https://identity.nexar.com/connect/token"
_URL = re.compile(r"https?://[^\s/?#]+(/[^\s?#]*)?")
WEBHOOK_MAX_BODY_BYTES = 2 * 1024 * 1024
DEFAULT_HOST_API_URL = "https://api.github.com"
DEFAULT_HOST_TIMEOUT_MS = 10_000
DEFAULT_OIDC_ISSUER = "https://token.actions.githubusercontent.com"
# The code host's default ID-token audience is the owner's URL: a token minted
# for anything else would be accepted here too, so it is refused as a setting.
DEFAULT_HOST_AUDIENCE_PREFIX = "https://github.com/"
DEFAULT_AUTH_RATE_LIMIT_PER_MINUTE = 20
DEFAULT_OPERATOR_RATE_LIMIT_PER_MINUTE = 20
OPERATOR_TOKEN = re.compile(r"^[\x21-\x7e]{32,512}$")      # at least 32 visible ASCII characters
OPERATOR_ACTOR_ID = re.compile(r"^[A-Za-z0-9._:-]{1,200}$")
DEFAULT_SLO_SNAPSHOT_INTERVAL_MS = 30_000
DEFAULT_REQUEST_READ_TIMEOUT_MS = 10_000
DEFAULT_HOST_WEB_URL = "https://github.com"
DEFAULT_SESSION_TTL_HOURS = 12
OAUTH_CLIENT_ID = re.compile(r"^[A-Za-z0-9._-]{1,100}$")
# Only a proxy on this machine is trusted to say who the client is, by default.
DEFAULT_TRUSTED_PROXIES = "127.0.0.0/8,::1/128"


class Secret:
    """A string that never shows itself in logs, reprs or tracebacks."""

    __slots__ = ("_value",)

    def __init__(self, value: str):
        self._value = value

    def reveal(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return "Secret(***)"

    __str__ = __repr__

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Secret) and other._value == self._value

    def __hash__(self) -> int:
        return hash(self._value)


@dataclass(frozen=True)
class SupplySettings:
    """SERVICE_COMPONENT_*: the component provider (the Nexar supply GraphQL API
    with OAuth2 client credentials) and its limits. Without a client id and
    secret supply tracking is off; one without the other, or any invalid value
    (a limit, the timeout, the poll interval), is reported in `missing`:
    readiness names it, nothing falls back silently."""
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


@dataclass(frozen=True)
class Config:
    database_url: str | None
    data_dir: str
    pool_max: int
    db_acquire_timeout_ms: int
    readiness_db_timeout_ms: int
    artifact_capability_ttl_seconds: int
    self_hosted_runner_minimum_version: str | None
    webhook_secret: Secret | None
    marketplace_webhook_secret: Secret | None
    job_max_attempts: int
    job_lease_seconds: int
    worker_poll_ms: int
    worker_concurrency: int
    bind: str
    web_concurrency: int
    web_threads: int
    # How long lifecycle jobs wait for a burst of deliveries to end (workers/intake_first.py).
    intake_first_ms: int = DEFAULT_INTAKE_FIRST_MS
    # Accounts and access. The operator API is enabled only when both the token
    # and the actor id are set and valid.
    auth_rate_limit_per_minute: int = DEFAULT_AUTH_RATE_LIMIT_PER_MINUTE
    operator_rate_limit_per_minute: int = DEFAULT_OPERATOR_RATE_LIMIT_PER_MINUTE
    operator_api_token: Secret | None = None
    operator_actor_id: str | None = None
    # The code host app: its id, RSA private key (PEM) and REST API address.
    host_app_id: str | None = None
    host_app_private_key: Secret | None = None
    host_api_url: str = DEFAULT_HOST_API_URL
    host_timeout_ms: int = DEFAULT_HOST_TIMEOUT_MS
    # The workflow result callback: who issues the ID tokens and for whom.
    oidc_issuer: str = DEFAULT_OIDC_ISSUER
    oidc_audience: str | None = None
    # Where people reach the service (links in check runs and comments).
    public_url: str = "http://127.0.0.1:8000"
    # Hostile clients: how long reading one request may take, and whose
    # X-Forwarded-For names the client (app/web/client_address.py).
    request_read_timeout_ms: int = DEFAULT_REQUEST_READ_TIMEOUT_MS
    trusted_proxies: tuple = field(default_factory=lambda: _networks(DEFAULT_TRUSTED_PROXIES))
    # Reconciliation workers and the SLO policy's snapshot interval.
    reconciliation: ReconciliationSettings = field(default_factory=lambda: ReconciliationSettings())
    slo_snapshot_interval_ms: int = DEFAULT_SLO_SNAPSHOT_INTERVAL_MS
    # Sign-in with the code host and browser sessions (app/web/sign_in.py).
    sign_in: SignInSettings = field(default_factory=lambda: SignInSettings())
    # Retention of run summaries and account erasure (workers/retention.py).
    retention: RetentionSettings = field(default_factory=lambda: RetentionSettings())
    # Component supply tracking (workers/supply.py).
    supply: SupplySettings = field(default_factory=lambda: SupplySettings())
    # Report artifacts (app/web/pages/artifacts.py): the upload cap and the key
    # of capability links; without the key, reports are neither taken nor served.
    artifact_max_bytes: int = DEFAULT_ARTIFACT_MAX_BYTES
    artifact_signing_key: Secret | None = None
    # Release records (app/attestation.py): Ed25519 PEM files, the active key
    # first, then retired keys whose public halves stay published (rotation).
    attestation_keys: tuple[str, ...] = ()
    # Who may decide (docs/security.md): how long a session's rights from the
    # code host are trusted before a change re-reads them, how long a token
    # minted from a session may live, the sign-in and decision rate limits,
    # the key of listing cursors (None: generated into the data folder,
    # app/web/keyset.py) and how far ahead a waiver may expire.
    permission_ttl_seconds: int = 300
    session_token_max_days: int = 90
    sign_in_per_minute: int = 20
    decisions_per_minute: int = 30
    cursor_secret: Secret | None = None
    waiver_max_days: int = 365
    # Variables that are absent or invalid and that readiness must report.
    missing: tuple[str, ...] = field(default=())
    # Invalid values of variables that have a safe default: reported, default used.
    invalid: tuple[str, ...] = field(default=())


@dataclass(frozen=True)
class SignInSettings:
    """HOST_OAUTH_CLIENT_ID, HOST_OAUTH_CLIENT_SECRET (or _FILE), HOST_WEB_URL,
    SERVICE_SESSION_TTL_HOURS. Without the client id and secret, sign-in is off
    (503 sign_in_not_configured); one without the other is not ready."""
    client_id: str | None = None
    client_secret: Secret | None = None
    web_url: str = DEFAULT_HOST_WEB_URL
    session_ttl_hours: int = DEFAULT_SESSION_TTL_HOURS

    @property
    def enabled(self) -> bool:
        return self.client_id is not None and self.client_secret is not None


@dataclass(frozen=True)
class RetentionSettings:
    """SERVICE_RUN_RETENTION_DAYS (1-30: the Community plan keeps run
    summaries 30 days, no more), SERVICE_RETENTION_BATCH_SIZE (rows one
    transaction deletes, 10-100000) and SERVICE_RETENTION_INTERVAL_MS (from 100,
    so that tests can drive the sweep). Tuning knobs: an invalid value falls
    back to its default, which is never longer retention than the plan's."""
    run_retention_days: int = 30
    batch_size: int = 1000
    interval_ms: int = 60_000


@dataclass(frozen=True)
class ReconciliationSettings:
    """SERVICE_RECONCILIATION_*: the spec's defaults. Intervals may be as small
    as 100 ms and durations as 1 s, so that tests and operators can drive them."""
    concurrency: int = 2
    poll_ms: int = 5000
    detect_interval_ms: int = 30_000
    observation_seconds: int = 300
    deadline_seconds: int = 1800
    next_check_seconds: int = 60
    valid: bool = True         # every variable above was absent or valid


RECONCILIATION_VARIABLES = (
    "SERVICE_RECONCILIATION_CONCURRENCY", "SERVICE_RECONCILIATION_POLL_MS",
    "SERVICE_RECONCILIATION_DETECT_INTERVAL_MS", "SERVICE_RECONCILIATION_OBSERVATION_SECONDS",
    "SERVICE_RECONCILIATION_DEADLINE_SECONDS", "SERVICE_RECONCILIATION_NEXT_CHECK_SECONDS",
)


class _Reader:
    def __init__(self, env: Mapping[str, str]):
        self.env = env
        self.missing: list[str] = []
        self.invalid: list[str] = []

    def text(self, name: str) -> str | None:
        value = self.env.get(name)
        return value if value not in (None, "") else None

    def required_secret(self, name: str) -> Secret | None:
        value = self.text(name)
        if value is None:
            self.missing.append(name)
            return None
        return Secret(value)

    def matching_text(self, name: str, pattern: re.Pattern) -> str | None:
        # Optional: absent disables what it configures; present but invalid is
        # reported (never echoed) and disables it too.
        value = self.text(name)
        if value is None:
            return None
        if not pattern.fullmatch(value):
            self.invalid.append(name)
            return None
        return value

    def text_or_file(self, name: str) -> tuple[str | None, str]:
        """The value of `name`, else the content of the file `name`_FILE names
        (None when unreadable), and which of the two variables it came from."""
        value = self.text(name)
        if value is not None or not self.text(name + "_FILE"):
            return value, name
        try:
            with open(self.text(name + "_FILE"), encoding="utf-8") as handle:
                return handle.read(64 * 1024).strip() or None, name + "_FILE"
        except PermissionError:
            # The file is there but not this process's to read (its owner or
            # group is not the service user's): say so, not "missing".
            return None, name + "_FILE (unreadable)"
        except OSError:
            return None, name + "_FILE"

    def matching_secret(self, name: str, pattern: re.Pattern) -> Secret | None:
        value = self.matching_text(name, pattern)
        return Secret(value) if value is not None else None

    def integer(self, name: str, default: int, minimum: int, maximum: int | None = None,
                required_valid: bool = False) -> int:
        raw = self.text(name)
        if raw is None:
            return default
        if re.fullmatch(r"[0-9]{1,12}", raw.strip()):
            value = int(raw)
            if value >= minimum and (maximum is None or value <= maximum):
                return value
        # An invalid value of a setting that shapes a public contract makes the
        # service not ready; an invalid tuning knob falls back to its default.
        (self.missing if required_valid else self.invalid).append(name)
        return default


def _operator_actor_id(r: _Reader) -> str | None:
    """SERVICE_OPERATOR_ACTOR_ID, audited as `operator:<id>`: an id written with
    that prefix already (operator:alice) is taken as alice, not operator:operator:alice.
    Absent, the operator API is off; present but invalid, the service is not
    ready (readiness names it), since the operator's actions would be audited
    under no name."""
    value = r.text("SERVICE_OPERATOR_ACTOR_ID")
    if value is not None and not OPERATOR_ACTOR_ID.fullmatch(value):
        r.missing.append("SERVICE_OPERATOR_ACTOR_ID")
        return None
    if value and value.startswith("operator:"):
        value = value[len("operator:"):] or None
    return value


def _host_app(r: _Reader) -> tuple[str | None, Secret | None]:
    """HOST_APP_ID and the app's private key (HOST_APP_PRIVATE_KEY, or a file in
    HOST_APP_PRIVATE_KEY_FILE); both required, the key must be an RSA PEM."""
    app_id = r.text("HOST_APP_ID")
    if app_id is None or not re.fullmatch(r"[0-9]{1,20}", app_id.strip()):
        r.missing.append("HOST_APP_ID")
        app_id = None
    pem, key_name = r.text_or_file("HOST_APP_PRIVATE_KEY")
    if pem is None or not _is_rsa_private_key(pem):
        r.missing.append(key_name)
        return (app_id.strip() if app_id else None), None
    return (app_id.strip() if app_id else None), Secret(pem)


def _sign_in(r: _Reader) -> SignInSettings:
    client_id = r.matching_text("HOST_OAUTH_CLIENT_ID", OAUTH_CLIENT_ID)
    secret, secret_name = r.text_or_file("HOST_OAUTH_CLIENT_SECRET")
    if secret is not None and not re.fullmatch(r"[\x21-\x7e]{1,200}", secret):
        secret = None
        r.missing.append(secret_name)
    elif (client_id is None) != (secret is None):
        # Half a client is a mistake, not a choice: say which half is missing.
        r.missing.append("HOST_OAUTH_CLIENT_SECRET" if secret is None else "HOST_OAUTH_CLIENT_ID")
    web_url = (r.text("HOST_WEB_URL") or DEFAULT_HOST_WEB_URL).rstrip("/")
    if not re.fullmatch(r"https?://[^\s/?#]+(/[^\s?#]*)?", web_url):
        r.missing.append("HOST_WEB_URL")
        web_url = DEFAULT_HOST_WEB_URL
    ttl = r.integer("SERVICE_SESSION_TTL_HOURS", DEFAULT_SESSION_TTL_HOURS, minimum=1, maximum=720,
                    required_valid=True)
    return SignInSettings(client_id=client_id, client_secret=Secret(secret) if secret and client_id else None,
                          web_url=web_url, session_ttl_hours=ttl)


def _oidc_audience(r: _Reader) -> str | None:
    audience = r.text("SERVICE_OIDC_AUDIENCE")
    if audience is None or audience.startswith(DEFAULT_HOST_AUDIENCE_PREFIX) or len(audience) > 255:
        r.missing.append("SERVICE_OIDC_AUDIENCE")
        return None
    return audience


def _networks(text: str) -> tuple:
    return tuple(ipaddress.ip_network(part.strip(), strict=False) for part in text.split(",") if part.strip())


def _trusted_proxies(r: _Reader) -> tuple:
    """SERVICE_TRUSTED_PROXIES: CIDRs or addresses, comma separated. Invalid is
    not ready (the setting decides whose failures are counted together)."""
    raw = r.text("SERVICE_TRUSTED_PROXIES")
    if raw is None:
        return _networks(DEFAULT_TRUSTED_PROXIES)
    try:
        return _networks(raw)
    except ValueError:
        r.missing.append("SERVICE_TRUSTED_PROXIES")
        return _networks(DEFAULT_TRUSTED_PROXIES)


def _reconciliation(r: _Reader) -> ReconciliationSettings:
    """Invalid values make the service not ready, naming the variable: a
    reconciler running on a wrong deadline would fail runs closed too early or never."""
    def read(name: str, default: int, minimum: int, maximum: int) -> int:
        return r.integer(name, default, minimum=minimum, maximum=maximum, required_valid=True)

    settings = ReconciliationSettings(
        concurrency=read("SERVICE_RECONCILIATION_CONCURRENCY", 2, 1, 64),
        poll_ms=read("SERVICE_RECONCILIATION_POLL_MS", 5000, 100, 3_600_000),
        detect_interval_ms=read("SERVICE_RECONCILIATION_DETECT_INTERVAL_MS", 30_000, 100, 86_400_000),
        observation_seconds=read("SERVICE_RECONCILIATION_OBSERVATION_SECONDS", 300, 1, 7 * 86_400),
        deadline_seconds=read("SERVICE_RECONCILIATION_DEADLINE_SECONDS", 1800, 1, 30 * 86_400),
        next_check_seconds=read("SERVICE_RECONCILIATION_NEXT_CHECK_SECONDS", 60, 1, 86_400),
    )
    if settings.deadline_seconds < settings.observation_seconds \
            and "SERVICE_RECONCILIATION_DEADLINE_SECONDS" not in r.missing:
        # Every item would be past its deadline when first seen.
        r.missing.append("SERVICE_RECONCILIATION_DEADLINE_SECONDS")
    valid = not any(name in r.missing for name in RECONCILIATION_VARIABLES)
    return ReconciliationSettings(**{**settings.__dict__, "valid": valid})


def _artifact_signing_key(r: _Reader) -> Secret | None:
    value = r.text("SERVICE_ARTIFACT_SIGNING_KEY")
    if value is not None and not ARTIFACT_SIGNING_KEY.fullmatch(value):
        r.missing.append("SERVICE_ARTIFACT_SIGNING_KEY")
        return None
    return Secret(value) if value is not None else None


def _operator_api_token(r: _Reader) -> Secret | None:
    # Present but invalid disables the operator API, and readiness says so.
    value = r.text("SERVICE_OPERATOR_API_TOKEN")
    if value is not None and not OPERATOR_TOKEN.fullmatch(value):
        r.missing.append("SERVICE_OPERATOR_API_TOKEN")
        return None
    return Secret(value) if value is not None else None


def _cursor_secret(r: _Reader) -> Secret | None:
    value = r.text("SERVICE_CURSOR_SECRET")
    if value is not None and not ARTIFACT_SIGNING_KEY.fullmatch(value):   # at least 32 visible characters
        r.missing.append("SERVICE_CURSOR_SECRET")
        return None
    return Secret(value) if value is not None else None


def _supply(r: _Reader) -> SupplySettings:
    before = len(r.missing)
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
        missing=tuple(r.missing[before:]),
    )


def load_supply(env: Mapping[str, str] | None = None) -> SupplySettings:
    """The supply settings alone (tests, tools); load() reads them into Config.supply."""
    return _supply(_Reader(os.environ if env is None else env))


def _retention(r: _Reader) -> RetentionSettings:
    return RetentionSettings(
        run_retention_days=r.integer("SERVICE_RUN_RETENTION_DAYS", 30, minimum=1, maximum=30),
        batch_size=r.integer("SERVICE_RETENTION_BATCH_SIZE", 1000, minimum=10, maximum=100_000),
        interval_ms=r.integer("SERVICE_RETENTION_INTERVAL_MS", 60_000, minimum=100, maximum=86_400_000),
    )


def _is_rsa_private_key(pem: str) -> bool:
    from cryptography.hazmat.primitives.asymmetric.rsa import RSAPrivateKey
    from cryptography.hazmat.primitives.serialization import load_pem_private_key

    try:
        return isinstance(load_pem_private_key(pem.encode(), password=None), RSAPrivateKey)
    except (ValueError, TypeError):
        return False


def load(env: Mapping[str, str] | None = None) -> Config:
    env = os.environ if env is None else env
    r = _Reader(env)
    webhook_secret = r.required_secret("HOST_WEBHOOK_SECRET")
    marketplace_secret = r.required_secret("HOST_MARKETPLACE_WEBHOOK_SECRET")
    ttl = r.integer("SERVICE_ARTIFACT_CAPABILITY_TTL_SECONDS", DEFAULT_ARTIFACT_CAPABILITY_TTL_SECONDS,
                    minimum=1, required_valid=True)
    runner_minimum = r.text("SERVICE_SELF_HOSTED_RUNNER_MINIMUM_VERSION")
    host_app_id, host_app_private_key = _host_app(r)
    supply = _supply(r)
    web_concurrency = r.integer("SERVICE_WEB_CONCURRENCY", 2, minimum=1, maximum=64)
    return Config(
        database_url=r.text("SERVICE_DATABASE_URL"),
        data_dir=r.text("SERVICE_DATA_DIR") or ".data",
        attestation_keys=tuple(p for p in (r.text("SERVICE_ATTESTATION_KEY") or "").split(":") if p),
        pool_max=r.integer("SERVICE_DATABASE_POOL_MAX", DEFAULT_POOL_MAX, minimum=2, maximum=50),
        db_acquire_timeout_ms=r.integer("SERVICE_DATABASE_ACQUIRE_TIMEOUT_MS", 5000, minimum=10, maximum=60_000),
        readiness_db_timeout_ms=r.integer("SERVICE_READINESS_DB_TIMEOUT_MS", DEFAULT_READINESS_DB_TIMEOUT_MS,
                                          minimum=10, maximum=60_000),
        artifact_capability_ttl_seconds=ttl,
        self_hosted_runner_minimum_version=runner_minimum.strip() if runner_minimum and runner_minimum.strip() else None,
        webhook_secret=webhook_secret,
        marketplace_webhook_secret=marketplace_secret,
        job_max_attempts=r.integer("SERVICE_JOB_MAX_ATTEMPTS", DEFAULT_JOB_MAX_ATTEMPTS, minimum=1, maximum=100),
        job_lease_seconds=r.integer("SERVICE_JOB_LEASE_SECONDS", DEFAULT_JOB_LEASE_SECONDS, minimum=1, maximum=3600),
        worker_poll_ms=r.integer("SERVICE_WORKER_POLL_MS", DEFAULT_WORKER_POLL_MS, minimum=10, maximum=600_000),
        worker_concurrency=r.integer("SERVICE_WORKER_CONCURRENCY", DEFAULT_WORKER_CONCURRENCY, minimum=1, maximum=64),
        intake_first_ms=r.integer("SERVICE_INTAKE_FIRST_MS", DEFAULT_INTAKE_FIRST_MS, minimum=0, maximum=60_000),
        bind=r.text("SERVICE_BIND") or DEFAULT_BIND,
        web_concurrency=web_concurrency,
        web_threads=r.integer("SERVICE_WEB_THREADS", 16, minimum=1, maximum=256),
        host_app_id=host_app_id,
        host_app_private_key=host_app_private_key,
        host_api_url=(r.text("HOST_API_URL") or DEFAULT_HOST_API_URL).rstrip("/"),
        host_timeout_ms=r.integer("SERVICE_HOST_TIMEOUT_MS", DEFAULT_HOST_TIMEOUT_MS, minimum=100, maximum=120_000),
        oidc_issuer=(r.text("SERVICE_OIDC_ISSUER") or DEFAULT_OIDC_ISSUER).rstrip("/"),
        oidc_audience=_oidc_audience(r),
        public_url=(r.text("SERVICE_PUBLIC_URL") or f"http://{r.text('SERVICE_BIND') or DEFAULT_BIND}").rstrip("/"),
        auth_rate_limit_per_minute=r.integer("SERVICE_AUTH_RATE_LIMIT_PER_MINUTE", DEFAULT_AUTH_RATE_LIMIT_PER_MINUTE,
                                             minimum=1, maximum=100_000),
        operator_rate_limit_per_minute=r.integer("SERVICE_OPERATOR_RATE_LIMIT_PER_MINUTE",
                                                 DEFAULT_OPERATOR_RATE_LIMIT_PER_MINUTE, minimum=1, maximum=100_000),
        operator_api_token=_operator_api_token(r),
        operator_actor_id=_operator_actor_id(r),
        request_read_timeout_ms=r.integer("SERVICE_REQUEST_READ_TIMEOUT_MS", DEFAULT_REQUEST_READ_TIMEOUT_MS,
                                          minimum=100, maximum=600_000),
        trusted_proxies=_trusted_proxies(r),
        reconciliation=_reconciliation(r),
        # A tuning knob: SLI collection never affects readiness.
        slo_snapshot_interval_ms=r.integer("SERVICE_SLO_SNAPSHOT_INTERVAL_MS", DEFAULT_SLO_SNAPSHOT_INTERVAL_MS,
                                           minimum=100, maximum=3_600_000),
        sign_in=_sign_in(r),
        retention=_retention(r),
        artifact_max_bytes=r.integer("SERVICE_ARTIFACT_MAX_BYTES", DEFAULT_ARTIFACT_MAX_BYTES, minimum=1024,
                                     maximum=DEFAULT_ARTIFACT_MAX_BYTES, required_valid=True),
        # Optional (reports are off without it); present but too short is not ready.
        artifact_signing_key=_artifact_signing_key(r),
        permission_ttl_seconds=r.integer("SERVICE_PERMISSION_TTL_SECONDS", 300, minimum=0, maximum=86_400),
        session_token_max_days=r.integer("SERVICE_SESSION_TOKEN_MAX_DAYS", 90, minimum=1, maximum=365),
        sign_in_per_minute=r.integer("SERVICE_SIGN_IN_PER_MINUTE", 20, minimum=1, maximum=100_000),
        decisions_per_minute=r.integer("SERVICE_DECISIONS_PER_MINUTE", 30, minimum=1, maximum=100_000),
        cursor_secret=_cursor_secret(r),
        waiver_max_days=r.integer("SERVICE_WAIVER_MAX_DAYS", 365, minimum=1, maximum=3650),
        supply=supply,
        missing=tuple(r.missing),
        invalid=tuple(r.invalid),
    )

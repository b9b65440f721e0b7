"""What each environment variable of the service changes, for the generated
reference (tools/config_docs.py writes docs/configuration.md and .env.example).

The names, the integer defaults and ranges, and which variables are read as
secrets come from app/config.py itself (the generator records its reader);
this table only adds the words a person needs. A variable the service reads
that is missing here fails tests/tools/test_config_docs.py, so a new setting
cannot ship undocumented.

`default` is given only where the code's default is not an integer the reader
sees (a text default applied after reading); `example` is what .env.example
suggests. Whether a variable is required, and what an invalid value does, the
generator finds out by loading the configuration without it and with a bad
value.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Variable:
    meaning: str
    default: str | None = None       # text defaults; integers come from the reader
    values: str | None = None        # accepted values, when not an integer range
    secret: bool = False             # also true when the reader reads it as a secret
    example: str | None = None       # for .env.example


GROUPS: list[tuple[str, dict[str, Variable]]] = [
    ("The code host app", {
        "HOST_APP_ID": Variable(
            "the code host app's id (the `iss` of the app JWT); `bin/register-app` writes it",
            values="digits", example="123456"),
        "HOST_APP_PRIVATE_KEY": Variable(
            "the app's RSA private key (PEM); `HOST_APP_PRIVATE_KEY_FILE` names a file holding it instead",
            values="an RSA private key in PEM", secret=True),
        "HOST_APP_PRIVATE_KEY_FILE": Variable(
            "a file holding the app's private key, read when `HOST_APP_PRIVATE_KEY` is unset",
            values="a readable file", example="/etc/boardready/app-private-key.pem"),
        "HOST_WEBHOOK_SECRET": Variable(
            "HMAC secret of the lifecycle webhook (`POST /api/host/webhook`); "
            "unset: every delivery is 503 `webhook_secret_missing`",
            values="any text", secret=True),
        "HOST_MARKETPLACE_WEBHOOK_SECRET": Variable(
            "HMAC secret of the marketplace webhook (never used for the other)",
            values="any text", secret=True),
        "HOST_API_URL": Variable(
            "the code host's REST API (the emulator's URL in the demo and tests)",
            default="`https://api.github.com`", values="a URL"),
        "HOST_WEB_URL": Variable(
            "the code host's web address (`/login/oauth/authorize`, `/login/oauth/access_token`)",
            default="`https://github.com`", values="an http or https URL"),
        "HOST_OAUTH_CLIENT_ID": Variable(
            "the app's OAuth client id; with the secret, turns sign-in on; one without the other is not ready",
            values="letters, digits, `.`, `_`, `-` (1-100)"),
        "HOST_OAUTH_CLIENT_SECRET": Variable(
            "the app's OAuth client secret; `HOST_OAUTH_CLIENT_SECRET_FILE` names a file holding it instead",
            values="visible ASCII (1-200)", secret=True),
        "HOST_OAUTH_CLIENT_SECRET_FILE": Variable(
            "a file holding the OAuth client secret, read when `HOST_OAUTH_CLIENT_SECRET` is unset",
            values="a readable file"),
        "SERVICE_HOST_TIMEOUT_MS": Variable(
            "timeout of one code host request (connect at most 5 s)"),
    }),
    ("Where the service is reached", {
        "SERVICE_BIND": Variable(
            "the API's listening address", default="`127.0.0.1:8000`", values="host:port"),
        "SERVICE_PUBLIC_URL": Variable(
            "base of the review links in check runs and comments; the sign-in callback is "
            "`SERVICE_PUBLIC_URL/auth/callback`, the webhook `SERVICE_PUBLIC_URL/api/host/webhook`; "
            "cookies are `Secure` when it is https",
            default="`http://<SERVICE_BIND>`", values="a URL", example="https://boardready.example.com"),
        "SERVICE_TRUSTED_PROXIES": Variable(
            "proxies whose `X-Forwarded-For` names the client (rate limits count failures per client)",
            default="`127.0.0.0/8,::1/128`", values="comma-separated addresses or CIDRs"),
        "SERVICE_WEB_CONCURRENCY": Variable("gunicorn worker processes of the API"),
        "SERVICE_WEB_THREADS": Variable(
            "threads per API process (they only ever run whole requests)"),
        "SERVICE_REQUEST_READ_TIMEOUT_MS": Variable(
            "deadline for reading one request, headers and body; past it 408 `request_timeout`, nothing stored"),
    }),
    ("The workflow result callback", {
        "SERVICE_OIDC_ISSUER": Variable(
            "issuer of the workflow's ID tokens; keys come from `{issuer}/.well-known/openid-configuration`",
            default="`https://token.actions.githubusercontent.com`", values="a URL"),
        "SERVICE_OIDC_AUDIENCE": Variable(
            "audience the workflow requests its ID token for (the repository variable "
            "`BOARDREADY_AUDIENCE` must say the same); the code host's default audience "
            "(`https://github.com/...`) is refused",
            values="text, at most 255 characters, not `https://github.com/...`",
            example="boardready"),
        "SERVICE_SELF_HOSTED_RUNNER_MINIMUM_VERSION": Variable(
            "reported by readiness when set", values="text"),
    }),
    ("Database", {
        "SERVICE_DATABASE_URL": Variable(
            "PostgreSQL URL (15 to 18; see docs/deploy.md for the roles); unset starts the embedded "
            "server under `SERVICE_DATA_DIR`",
            default="unset", values="a libpq URL", secret=True,
            example="postgresql://boardready_app:PASSWORD@db.example.com/boardready?sslmode=verify-full"),
        "SERVICE_DATA_DIR": Variable(
            "where the embedded cluster lives (`<dir>/pg`); an unusable folder stops start-up with a clear message",
            default="`.data`", values="a folder"),
        "SERVICE_ATTESTATION_KEY": Variable(
            "Ed25519 private key files (PEM) that sign release records, `:`-separated: the first signs, the "
            "others are retired keys still published at /api/v1/attestation-keys (docs/release-record.md)",
            default="unset: no keys published", values="PEM file paths", secret=True,
            example="/etc/boardready/attestation-key.pem"),
        "SERVICE_DATABASE_POOL_MAX": Variable(
            "connections for the whole service; `bin/serve` splits it between the web processes and the "
            "worker, and a web process never holds more than its threads + 1"),
        "SERVICE_DATABASE_ACQUIRE_TIMEOUT_MS": Variable(
            "how long a request waits for a connection before answering 503"),
        "SERVICE_READINESS_DB_TIMEOUT_MS": Variable(
            "readiness budget: waiting for a connection and the probe query share it"),
    }),
    ("Jobs and workers", {
        "SERVICE_JOB_MAX_ATTEMPTS": Variable("claims of a job or outbox item before it is dead-lettered"),
        "SERVICE_JOB_LEASE_SECONDS": Variable(
            "lease of a claimed job or outbox item; a live worker renews it, a dead one lets it expire"),
        "SERVICE_WORKER_POLL_MS": Variable("poll interval of the workers (NOTIFY wakes them sooner)"),
        "SERVICE_WORKER_CONCURRENCY": Variable("items a worker process handles at once"),
        "SERVICE_INTAKE_FIRST_MS": Variable(
            "how long lifecycle jobs wait for a burst of webhook deliveries to end before running beside it "
            "(0: never wait; a lone delivery's job never waits)"),
    }),
    ("Accounts and access", {
        "SERVICE_AUTH_RATE_LIMIT_PER_MINUTE": Variable(
            "failed bearer and OIDC authentications per client per minute before 429"),
        "SERVICE_OPERATOR_RATE_LIMIT_PER_MINUTE": Variable(
            "failed operator authentications per client per minute before 429 (separate counters)"),
        "SERVICE_OPERATOR_API_TOKEN": Variable(
            "operator token; unset or invalid disables the operator API and `/metrics`",
            values="32-512 visible ASCII characters", secret=True),
        "SERVICE_OPERATOR_ACTOR_ID": Variable(
            "audit actor of every operator action, recorded as operator:<id> (an id given as "
            "operator:alice is alice); required with the token",
            values="letters, digits, `.`, `_`, `:`, `-` (1-200)"),
        "SERVICE_SESSION_TTL_HOURS": Variable("lifetime of a browser session"),
        "SERVICE_PERMISSION_TTL_SECONDS": Variable(
            "how long a session's rights read from the code host are trusted before a change "
            "re-reads them (0: every change re-reads)"),
        "SERVICE_SESSION_TOKEN_MAX_DAYS": Variable("how long a token minted from a session may live"),
        "SERVICE_SIGN_IN_PER_MINUTE": Variable("sign-ins per client per minute before 429"),
        "SERVICE_DECISIONS_PER_MINUTE": Variable(
            "review decisions (approvals, waivers) per person per minute before 429"),
        "SERVICE_WAIVER_MAX_DAYS": Variable("how far ahead a waiver may expire"),
        "SERVICE_CURSOR_SECRET": Variable(
            "HMAC key of the run listing's cursors; unset, one is generated into the data folder "
            "(set it when several hosts serve the API, so a cursor works on all of them)",
            values="32-512 visible ASCII characters", secret=True),
    }),
    ("Review pages and report artifacts", {
        "SERVICE_ARTIFACT_SIGNING_KEY": Variable(
            "HMAC key of the report links; unset, uploads are 503 `artifacts_not_configured` "
            "and the run page says reports are not enabled",
            values="32-512 visible ASCII characters", secret=True),
        "SERVICE_ARTIFACT_CAPABILITY_TTL_SECONDS": Variable(
            "lifetime of report-artifact links, reported by readiness"),
        "SERVICE_ARTIFACT_MAX_BYTES": Variable(
            "largest report a runner may upload; past it 413 `payload_too_large`, nothing stored"),
    }),
    ("Reconciliation and the SLO policy", {
        "SERVICE_RECONCILIATION_CONCURRENCY": Variable("items each reconciler observes at once"),
        "SERVICE_RECONCILIATION_POLL_MS": Variable("how often each reconciler claims due items"),
        "SERVICE_RECONCILIATION_DETECT_INTERVAL_MS": Variable("how often each reconciler looks for candidates"),
        "SERVICE_RECONCILIATION_OBSERVATION_SECONDS": Variable(
            "how long something may look stuck before it is a candidate"),
        "SERVICE_RECONCILIATION_DEADLINE_SECONDS": Variable(
            "when an unresolved item fails closed, counted from the subject's start "
            "(at least the observation window)"),
        "SERVICE_RECONCILIATION_NEXT_CHECK_SECONDS": Variable("when an item is looked at again"),
        "SERVICE_SLO_SNAPSHOT_INTERVAL_MS": Variable("SLI snapshot interval (never affects readiness)"),
    }),
    ("Component supply tracking", {
        "SERVICE_COMPONENT_PROVIDER_URL": Variable(
            "the provider's GraphQL endpoint", default="`https://api.nexar.com/graphql`",
            values="an http or https URL"),
        "SERVICE_COMPONENT_PROVIDER_TOKEN_URL": Variable(
            "its OAuth2 token endpoint", default="`https://identity.nexar.com/connect/token`",
            values="an http or https URL"),
        "SERVICE_COMPONENT_PROVIDER_CLIENT_ID": Variable(
            "the OAuth2 client id; with the secret, turns supply tracking on; one without the other is not ready",
            values="letters, digits, `.`, `_`, `-` (1-100)"),
        "SERVICE_COMPONENT_PROVIDER_CLIENT_SECRET": Variable(
            "the OAuth2 client secret; `..._FILE` names a file holding it instead",
            values="visible ASCII (1-512)", secret=True),
        "SERVICE_COMPONENT_PROVIDER_CLIENT_SECRET_FILE": Variable(
            "a file holding the client secret", values="a readable file"),
        "SERVICE_COMPONENT_INTELLIGENCE_RATE_LIMIT_PER_MINUTE": Variable(
            "provider calls per installation per minute"),
        "SERVICE_COMPONENT_INTELLIGENCE_CIRCUIT_BREAKER_THRESHOLD": Variable(
            "consecutive failures that open the breaker"),
        "SERVICE_COMPONENT_INTELLIGENCE_CIRCUIT_BREAKER_COOLDOWN_MS": Variable("open to half-open"),
        "SERVICE_COMPONENT_OBSERVATION_MAX_AGE_HOURS": Variable("how long an observation is reused"),
        "SERVICE_COMPONENT_PROVIDER_TIMEOUT_MS": Variable("one provider request"),
        "SERVICE_SUPPLY_POLL_MS": Variable("the supply worker's poll interval when idle"),
    }),
    ("Retention and erasure", {
        "SERVICE_RUN_RETENTION_DAYS": Variable(
            "how long run summaries are kept (the Community plan allows no more than 30)"),
        "SERVICE_RETENTION_BATCH_SIZE": Variable("rows one retention or erasure transaction deletes at most"),
        "SERVICE_RETENTION_INTERVAL_MS": Variable(
            "how often retention and erasure sweep; a cancellation already due wakes the sweep at once"),
    }),
]


def variables() -> dict[str, Variable]:
    return {name: v for _, group in GROUPS for name, v in group.items()}

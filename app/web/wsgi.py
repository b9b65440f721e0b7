"""The Falcon application and the gunicorn entry point (`app.web.wsgi:application`)."""
from __future__ import annotations

import threading

import falcon
import orjson

from app import config as config_module
from app import database
from app.host import client as host_client

# POST /api/v1/runs/result publishes its check run in the request with the
# outbox's own handler, so the API and the worker share one publication path.
from app.host.outbox import OutboxQueue, SynchronousPublisher
from app.jsonlog import capture_library_logs
from app.oidc import OidcVerifier
from app.queueing import worker_identity
from app.web import checker_index, errors, legal_holds, operator, pages, paid, reviews, runs, sign_in, watched_board
from app.web.attestation_keys import AttestationKeys
from app.web.bearer_auth import BearerAuth
from app.web.bodies import AuthenticateBeforeBody, authenticates_before_body, max_body_bytes
from app.web.contract import OpenApiDocument
from app.web.hardening import Hardening
from app.web.health import Live, Ready
from app.web.lifecycle_webhook import LifecycleWebhook
from app.web.marketplace_webhook import MarketplaceWebhook
from app.web.metrics import Metrics
from app.web.operator_reconciliation import OperatorReconciliation
from app.web.repository_settings import RepositorySettings
from app.web.request_metrics import RequestMetrics
from app.web.run_listing import RunsCollection
from app.web.session_auth import SessionAuth
from app.web.tokens import Tokens

# Responses are encoded with orjson: the standard library's encoder was a
# tenth of the intake's CPU time.
JSON_RESPONSES = falcon.media.JSONHandler(dumps=lambda obj: orjson.dumps(obj).decode(), loads=orjson.loads)


def create_app(config, pool) -> falcon.App:
    # BearerAuth authenticates every /api/v1 route whose resource does not
    # declare another `auth` (see app/web/bearer_auth.py).
    # Hardening before the others: it keys the client before BearerAuth's limiter needs it.
    # SessionAuth before BearerAuth: a session cookie authenticates the methods a
    # resource lists in `session_methods` (app/web/session_auth.py).
    # AuthenticateBeforeBody last: it runs the resources' own `before_body`
    # checks and ends the front's header phase once the caller is accepted.
    # RequestMetrics first: it counts and times every answer, refusals included.
    app = falcon.App(cors_enable=False, middleware=[RequestMetrics(pool), Hardening(config),
                                                    SessionAuth(config, pool), BearerAuth(config, pool),
                                                    AuthenticateBeforeBody()])
    app.req_options.strip_url_path_trailing_slash = True
    app.resp_options.media_handlers[falcon.MEDIA_JSON] = JSON_RESPONSES
    errors.install(app)
    app.add_route("/api/health/live", Live())
    ready = Ready(config, pool)
    app.add_route("/api/health/ready", ready)
    app.add_route("/health/ready", ready)  # the path the spec's operational guidance names
    app.add_route("/api/openapi.json", OpenApiDocument())
    checker_index.add_routes(app, config)   # the runner's checker, from this service (PEP 503)
    app.add_route("/api/v1/attestation-keys", AttestationKeys(config))   # verifies release records
    app.add_route("/api/host/webhook", LifecycleWebhook(config, pool))
    add_access_routes(app, config, pool)
    add_result_routes(app, config, pool)
    sign_in.add_routes(app, config, pool)
    reviews.add_routes(app, config, pool)
    watched_board.add_routes(app, config, pool)  # component supply (issue 13)
    return app


def add_result_routes(app: falcon.App, config, pool) -> None:
    """Run results: ingest, the synchronous release result, the workflow callback."""
    verifier = OidcVerifier(config.oidc_issuer, config.oidc_audience) if config.oidc_audience else None
    host = host_client.from_config(config)
    publisher = SynchronousPublisher(OutboxQueue(config, host), pool, worker_identity("api")) if host else None
    app.add_route("/api/v1/runs", RunsCollection(config, pool))  # POST ingests, GET lists
    app.add_route("/api/v1/runs/result", runs.ReleaseResult(config, pool, publisher))
    app.add_route("/api/v1/runs/github-actions-result", runs.WorkflowResultCallback(config, pool, verifier))
    pages.add_routes(app, config, pool, verifier)  # the review pages and report artifacts


def add_access_routes(app: falcon.App, config, pool) -> None:
    """Accounts and access: marketplace webhook, tokens, paid endpoints, operator API."""
    app.add_route("/api/host/marketplace/webhook", MarketplaceWebhook(config, pool))
    app.add_route("/api/v1/tokens", Tokens(config, pool))
    app.add_route("/api/v1/repositories/{repository_id}/settings", RepositorySettings(config, pool))
    app.add_route("/api/v1/billing/checkout", paid.PaidCheckout())
    app.add_route("/api/v1/billing/portal", paid.PaidPortal())
    gate = operator.OperatorGate(config, pool)
    base = "/api/v1/operator/installations/{installation_id}/dead-letters"
    app.add_route(base, operator.DeadLetters(config, pool, gate))
    app.add_route(base + "/{item_type}/{item_id}/replay", operator.Replay(config, pool, gate))
    app.add_route("/api/v1/operator/reconciliation", OperatorReconciliation(config, pool, gate))
    app.add_route("/metrics", Metrics(config, pool, gate))
    legal_holds.add_routes(app, config, pool, gate)


def pool_size_per_web_process(config) -> int:
    # SERVICE_DATABASE_POOL_MAX caps the whole service: bin/serve splits it
    # between the web processes and the worker; a thread uses one connection.
    share = max(2, config.pool_max // (config.web_concurrency + 1))
    return min(share, config.web_threads + 1)


def _build_from_environment() -> falcon.App:
    capture_library_logs()
    config = config_module.load()
    if not config.database_url:
        raise SystemExit("SERVICE_DATABASE_URL must be set for gunicorn workers (bin/serve sets it)")
    pool = database.create_pool(config.database_url, max_size=pool_size_per_web_process(config), name="api")
    return create_app(config, pool)


class LazyApplication:
    """A WSGI app built in each server process after fork, not in the master
    (a pool must not cross a fork). Tools serve their own apps with it too."""

    def __init__(self, build):
        self._build = build
        self._app = None
        self._lock = threading.Lock()

    def __call__(self, environ, start_response):
        if self._app is None:
            with self._lock:
                if self._app is None:
                    self._app = self._build()
        return self._app(environ, start_response)


application = LazyApplication(_build_from_environment)
# The front (app/front/bridge.py) buffers at most this much of each route's body,
# and authenticates these routes' requests before it reads their body.
application.max_body_bytes = max_body_bytes
application.authenticates_before_body = authenticates_before_body

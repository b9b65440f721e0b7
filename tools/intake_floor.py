"""The floor for webhook intake: the least a correct intake must do.

Verify the HMAC over the raw body, parse the JSON, and make one durable INSERT
of the delivery id and body hash (a duplicate is a no-op). `bin/bench-intake
--baseline` serves it with the service's own server settings
(`app.serve.server_command`) beside the service, so the gap between the two is
what the service's extra work costs: validation, normalization, the inbox, the
job and its notification.

Served as `tools.intake_floor:application`; reads SERVICE_DATABASE_URL,
HOST_WEBHOOK_SECRET and the pool size from the environment.
"""
from __future__ import annotations

import hashlib
import hmac
import json
import os

import falcon
import psycopg
from psycopg_pool import ConnectionPool

from app.web.bodies import max_body_bytes
from app.web.wsgi import LazyApplication

TABLE = "bench_floor.deliveries"
SCHEMA_SQL = """
CREATE SCHEMA IF NOT EXISTS bench_floor;
CREATE TABLE IF NOT EXISTS bench_floor.deliveries (
  delivery_id   text PRIMARY KEY,
  body_sha256   text NOT NULL,
  received_at   timestamptz NOT NULL DEFAULT now()
);
"""
INSERT = f"INSERT INTO {TABLE} (delivery_id, body_sha256) VALUES (%s, %s) ON CONFLICT DO NOTHING"


def create_schema(database_url: str) -> None:
    with psycopg.connect(database_url, autocommit=True) as conn:
        conn.execute(SCHEMA_SQL)


def count(database_url: str, key_prefix: str) -> int:
    with psycopg.connect(database_url) as conn:
        return conn.execute(f"SELECT count(*) FROM {TABLE} WHERE delivery_id LIKE %s",
                            (key_prefix + "%",)).fetchone()[0]


class Webhook:
    def __init__(self, pool: ConnectionPool, secret: bytes):
        self.pool, self.secret = pool, secret

    def on_post(self, req, resp):
        raw = req.bounded_stream.read()
        given = (req.get_header("X-Hub-Signature-256") or "").removeprefix("sha256=")
        if not hmac.compare_digest(hmac.new(self.secret, raw, hashlib.sha256).hexdigest(), given):
            raise falcon.HTTPUnauthorized()
        json.loads(raw)
        delivery_id = req.get_header("X-GitHub-Delivery", required=True)
        with self.pool.connection() as conn:
            stored = conn.execute(INSERT, (delivery_id, hashlib.sha256(raw).hexdigest())).rowcount
        resp.status = falcon.HTTP_202 if stored else falcon.HTTP_200
        resp.media = {"ok": True}


class Live:
    def on_get(self, req, resp):
        resp.media = {"ok": True}


def create_app() -> falcon.App:
    pool = ConnectionPool(os.environ["SERVICE_DATABASE_URL"], min_size=1,
                          max_size=int(os.environ.get("BENCH_FLOOR_POOL_SIZE", "17")),
                          kwargs={"autocommit": True}, open=True)
    app = falcon.App()
    app.add_route("/api/host/webhook", Webhook(pool, os.environ["HOST_WEBHOOK_SECRET"].encode()))
    app.add_route("/api/health/live", Live())
    return app


application = LazyApplication(create_app)
# The front buffers at most this much of each route's body, as for the service.
application.max_body_bytes = max_body_bytes

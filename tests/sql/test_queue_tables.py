"""The queue tables against the one declaration their lease rules are rendered
from (sql/functions/queue.sql.j2: `queue_columns`, and each queue's table and
statuses). lifecycle_jobs (0001), work_items and schedules (0020, 0032) were
made by migrations at different times; in the catalog each must have every
queue column as boardready.queue_item_shape declares it (type, nullability,
default), the shape's lease CHECK, and a status CHECK of exactly the statuses
its queue declares, so that a table that drifts from the rules fails here.
And no other file in sql/functions writes a queue table's lease: a
transition that takes or ends one is the template's."""
from __future__ import annotations

import re

import psycopg

from app import migrations

QUEUE = migrations.FUNCTIONS.template("queue").module
SHAPE = "queue_item_shape"

_COLUMNS = """
SELECT a.attname, format_type(a.atttypid, a.atttypmod), a.attnotnull, pg_get_expr(d.adbin, d.adrelid)
  FROM pg_attribute a
  LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
 WHERE a.attrelid = %s::regclass AND a.attnum > 0 AND NOT a.attisdropped
"""
_CHECKS = "SELECT pg_get_constraintdef(c.oid) FROM pg_constraint c WHERE c.conrelid = %s::regclass AND c.contype = 'c'"


def columns(conn, table: str) -> dict[str, tuple]:
    """name -> (type, not null, default) of the table's columns."""
    return {name: shape for name, *shape in conn.execute(_COLUMNS, (f"boardready.{table}",)).fetchall()}


def checks(conn, table: str) -> list[str]:
    return [row[0] for row in conn.execute(_CHECKS, (f"boardready.{table}",)).fetchall()]


def status_check(definitions: list[str]) -> list[str]:
    """The statuses the table's status CHECK allows ([] when it has none)."""
    found = [d for d in definitions if re.match(r"CHECK \(+status = ANY", d)]
    return re.findall(r"'([a-z_]+)'::text", found[0]) if len(found) == 1 else []


def drift(conn) -> list[str]:
    """How the queue tables differ from the declaration, one line a difference."""
    shape_columns = columns(conn, SHAPE)
    [lease_check] = checks(conn, SHAPE)
    found = []
    if sorted(shape_columns) != sorted(QUEUE.queue_columns):
        found.append(f"{SHAPE} has {sorted(shape_columns)}, queue.sql.j2 declares {sorted(QUEUE.queue_columns)}")
    for queue in QUEUE.queues:
        table = queue["table"]
        have = columns(conn, table)
        for name in QUEUE.queue_columns:
            if have.get(name) != shape_columns.get(name):
                found.append(f"{table}.{name}: {have.get(name)}, the shape's {shape_columns.get(name)}")
        definitions = checks(conn, table)
        if lease_check not in definitions:
            found.append(f"{table}: no lease check {lease_check}")
        if status_check(definitions) != queue["statuses"]:
            found.append(f"{table}: statuses {status_check(definitions)}, queue.sql.j2 declares {queue['statuses']}")
    return found


def test_every_queue_table_has_the_declared_queue_columns_and_checks(pg_server, template_db):
    with psycopg.connect(pg_server.url(template_db)) as conn:
        assert [queue["table"] for queue in QUEUE.queues] == ["lifecycle_jobs", "work_items", "schedules"]
        assert drift(conn) == []


def test_only_the_template_takes_or_ends_a_lease():
    # outbox_items and reconciliation_items: views of work_items' kinds (0032), writable.
    tables = [queue["table"] for queue in QUEUE.queues] + ["outbox_items", "reconciliation_items"]
    sets_a_lease = re.compile(rf"UPDATE\s+(?:boardready\.)?(?:{'|'.join(tables)})\b[^;]*?"
                              r"\b(?:lease_token|leased_until|leased_by)\s*=", re.I)
    found = [(name, match.group(0).split("\n")[0]) for name, sql in migrations.function_sources()
             if not name.endswith(".j2") for match in sets_a_lease.finditer(sql)]
    assert found == [], "call queue.sql.j2's functions (or add the transition there)"


def test_a_queue_column_or_status_that_drifts_is_found(db_url):
    with psycopg.connect(db_url, autocommit=True) as conn:
        conn.execute("ALTER TABLE boardready.schedules ALTER COLUMN attempts SET DEFAULT 1")
        conn.execute("ALTER TABLE boardready.lifecycle_jobs ALTER COLUMN leased_by SET NOT NULL")
        conn.execute("ALTER TABLE boardready.work_items DROP CONSTRAINT work_items_status_check, "
                     "ADD CHECK (status IN ('accepted', 'leased', 'completed', 'dead_letter', 'parked'))")
        found = drift(conn)
    assert [line.split(":")[0] for line in found] == ["lifecycle_jobs.leased_by", "work_items", "schedules.attempts"]

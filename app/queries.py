"""Named read queries: `sql/queries/<name>.sql`, loaded by name.

Listings, dashboards and the tools' reads live as SQL files beside the
functions, so a reviewer reads the query where the schema is, and an operator
can paste it into psql. Values are always bound parameters (`%(name)s`); a
file ending in `.sql.j2` is a jinja2 template, for the few queries whose shape
(not values) changes, such as an optional filter or a keyset direction.
"""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

import jinja2
import psycopg

QUERIES = Path(__file__).resolve().parent.parent / "sql" / "queries"
_environment = jinja2.Environment(loader=jinja2.FileSystemLoader(QUERIES), autoescape=False,
                                  undefined=jinja2.StrictUndefined, keep_trailing_newline=True)


@lru_cache(maxsize=256)
def text(name: str, /, **shape: Any) -> str:
    """The query text of `name`; `shape` fills a template's structural choices (never values)."""
    plain = QUERIES / f"{name}.sql"
    if plain.is_file():
        if shape:
            raise TypeError(f"{name}.sql is not a template; it takes no shape arguments")
        return plain.read_text(encoding="utf-8")
    return _environment.get_template(f"{name}.sql.j2").render(**shape)


def fetch_all(conn: psycopg.Connection, name: str, /, shape: dict | None = None, **params: Any) -> list:
    return conn.execute(text(name, **(shape or {})), params).fetchall()


def fetch_one(conn: psycopg.Connection, name: str, /, shape: dict | None = None, **params: Any):
    return conn.execute(text(name, **(shape or {})), params).fetchone()

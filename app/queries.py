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


class QueryFolder:
    """The named queries of one folder: the service's (sql/queries) or the
    tools' (tools/queries, which the service never reads)."""

    def __init__(self, folder: Path, constants: dict[str, Any] | None = None):
        """`constants`: names every template of the folder may read (sql/functions' channels)."""
        self.folder = folder
        self._environment = jinja2.Environment(loader=jinja2.FileSystemLoader(folder), autoescape=False,
                                               undefined=jinja2.StrictUndefined, keep_trailing_newline=True)
        self._environment.globals.update(constants or {})
        self.text = lru_cache(maxsize=256)(self._text)

    def _text(self, name: str, /, **shape: Any) -> str:
        """The query text of `name`; `shape` fills a template's structural choices (never values)."""
        plain = self.folder / f"{name}.sql"
        if plain.is_file():
            if shape:
                raise TypeError(f"{name}.sql is not a template; it takes no shape arguments")
            return plain.read_text(encoding="utf-8")
        return self.template(name).render(**shape)

    def template(self, name: str, /) -> jinja2.Template:
        """The template `name.sql.j2` (its top-level `set`s are read as `.module.<name>`)."""
        return self._environment.get_template(f"{name}.sql.j2")

    def fetch_all(self, conn: psycopg.Connection, name: str, /, shape: dict | None = None, **params: Any) -> list:
        return conn.execute(self.text(name, **(shape or {})), params).fetchall()

    def fetch_one(self, conn: psycopg.Connection, name: str, /, shape: dict | None = None, **params: Any):
        return conn.execute(self.text(name, **(shape or {})), params).fetchone()


_service = QueryFolder(QUERIES)
text, fetch_all, fetch_one = _service.text, _service.fetch_all, _service.fetch_one

"""The tools' named read queries (`tools/queries/<name>.sql`): what the
benchmarks, load and demo tools read of the database to judge it. The
service's own queries are `sql/queries` (app/queries.py); it never reads these."""
from __future__ import annotations

from pathlib import Path

from app.queries import QueryFolder

_tools = QueryFolder(Path(__file__).resolve().parent / "queries")
text, fetch_all, fetch_one = _tools.text, _tools.fetch_all, _tools.fetch_one

"""The board drawing on the run page (docs/board-diff.md).

GET /release-runs/{id}/board.json
    The drawing's data for a run among the viewer's repositories: the board's
    geometry, its diff against the pull request's base and the findings with
    their places, as the checker wrote them into the report artifact of the
    run's latest result (a `<script type="application/json" id="board-data">`
    element; the signed result names the report's SHA-256, so this is the
    data of that result). 404 `no_board_drawing` when the run has no report
    or the report carries no drawing (a checker older than the drawing).
GET /static/board-view.js, /static/board-view.css
    The script that draws it and its styles, from this origin (the pages'
    CSP allows no inline script and no other origin). They are the checker's
    own (checker/templates/board_view.*), so the report artifact and the run
    page draw a board the same way.

The artifact is content a repository produced: its JSON is parsed (bounded by
the artifact cap already) and written out again, never passed through, and
the script builds the drawing with DOM calls and textContent.
"""
from __future__ import annotations

import json
from pathlib import Path

import falcon

from app import queries
from app.web import db
from app.web.errors import ApiError
from app.web.run_listing import id_param
from app.web.session_auth import session_of

STATIC = Path(__file__).resolve().parents[2] / "static"
START = b'<script type="application/json" id="board-data">'
END = b"</script>"
DRAWING_VERSION = 1


def board_document(report: bytes) -> dict | None:
    """The drawing's data in a report artifact, or None when it has none (or it is not ours)."""
    start = report.find(START)
    if start < 0:
        return None
    start += len(START)
    end = report.find(END, start)
    if end < 0:
        return None
    try:
        document = json.loads(report[start:end])
    except ValueError:
        return None
    if not isinstance(document, dict) or document.get("version") != DRAWING_VERSION:
        return None
    return document


def _no_drawing() -> ApiError:
    return ApiError(404, "no_board_drawing", "this run's report carries no board drawing")


class RunBoard:
    auth = "none"
    session_methods = frozenset({"GET"})

    def __init__(self, config, pool):
        self.config, self.pool = config, pool

    def on_get(self, req, resp, run_id: str):
        viewer = session_of(req)
        release_run_id = id_param(run_id)
        with db.connection(self.pool, self.config) as conn:
            row = queries.fetch_one(conn, "run_board_artifact", release_run_id=release_run_id,
                                    repository_ids=sorted(viewer.repository_ids))
        document = board_document(bytes(row["content"])) if row is not None else None
        if document is None:
            raise _no_drawing()
        resp.content_type = falcon.MEDIA_JSON
        resp.set_header("X-Content-Type-Options", "nosniff")
        # Never kept by the browser: after sign-out the drawing must not be served from its cache.
        resp.cache_control = ["private", "no-store"]
        resp.data = json.dumps(document, separators=(",", ":")).encode("utf-8")


class BoardViewAsset:
    """One of the drawing's two files, read once."""

    auth = "none"
    TYPES = {".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8"}

    def __init__(self, name: str):
        path = STATIC / name
        self.content_type = self.TYPES[path.suffix]
        self.data = path.read_bytes()

    def on_get(self, req, resp):
        resp.content_type = self.content_type
        resp.set_header("X-Content-Type-Options", "nosniff")
        resp.cache_control = ["public", "max-age=300"]
        resp.data = self.data

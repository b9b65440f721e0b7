"""The watched board and its supply (sql/functions/supply.sql).

POST   /api/v1/repositories/{repositoryId}/watched-board   {"path": "<the .kicad_pro in the default branch>"}
GET    /api/v1/repositories/{repositoryId}/watched-board
DELETE /api/v1/repositories/{repositoryId}/watched-board
GET    /api/v1/repositories/{repositoryId}/supply          the board's BOM lines, each with its latest observation,
                                                           in keyset pages (`limit`, `cursor`; `nextCursor`)

Session, or bearer `admin` of that repository. The Community plan allows one
watched board per installation account: watching a second repository's board
is 409 `plan_limit_watched_boards`; watching another path of the same
repository moves the board. A canceled account's board is unwatched (the SQL
does it before answering), so it is 404 `not_watched` from then on.
The actor of every change is the authenticated one (`host-user:<id>`,
`token:<id>`), written to the audit event in the same transaction.
"""
from __future__ import annotations

import falcon

from app import api_tokens, sql_api
from app.jsonlog import log
from app.web import authority, db, keyset
from app.web.bearer_auth import require
from app.web.bodies import SMALL_MAX_BYTES, read_json_object
from app.web.errors import ApiError
from app.web.run_listing import DatabaseResource
from app.web.tokens import iso

PROJECT_SUFFIX = ".kicad_pro"
MAX_PATH_CHARS = 400

_WATCH_REFUSALS = {
    "repository_not_found": (404, "repository_not_found", "no such repository in any installation"),
    "account_canceled": (403, "account_canceled", "the account's marketplace subscription is canceled"),
    "plan_limit_watched_boards": (409, "plan_limit_watched_boards",
                                  "the Community plan watches one board per account; unwatch the other one first"),
}


def _repository(value: str) -> int:
    try:
        return api_tokens.repository_id(value)
    except api_tokens.InvalidTokenRequest as exc:
        raise ApiError(400, exc.code, exc.message) from None


def project_path(value) -> str:
    """A .kicad_pro path relative to the repository's root, exactly as the checker
    names the project of its BOM lines: forward slashes, no empty, `.` or `..`
    segment, no control character, at most MAX_PATH_CHARS characters."""
    if not isinstance(value, str) or not 0 < len(value) <= MAX_PATH_CHARS:
        raise ApiError(400, "invalid_path", f"path must be text of 1 to {MAX_PATH_CHARS} characters")
    if any(ord(c) < 0x20 or 0x7f <= ord(c) < 0xa0 for c in value) or "\\" in value:
        raise ApiError(400, "invalid_path", "path must not contain control characters or backslashes")
    if not value.endswith(PROJECT_SUFFIX) or value == PROJECT_SUFFIX or value.endswith("/" + PROJECT_SUFFIX):
        raise ApiError(400, "invalid_path", f"path must name the board's {PROJECT_SUFFIX} file")
    if value.startswith("/") or any(s in ("", ".", "..") or s != s.strip() for s in value.split("/")):
        raise ApiError(400, "invalid_path", "path must be relative to the repository's root, without . or .. "
                                            "segments or surrounding spaces")
    return value


def board_item(row: dict) -> dict:
    return {"id": str(row["board_id"]), "path": row["path"], "createdAt": iso(row["created_at"]),
            "createdBy": row["created_by"], "refreshedAt": iso(row["refreshed_at"]),
            "bomRunId": str(row["bom_run_result_id"]) if row["bom_run_result_id"] else None}


def supply_item(row: dict) -> dict:
    observation = None
    if row["observed"]:
        observation = {
            "matched": row["matched"], "providerPartId": row["provider_part_id"],
            "lifecycleStatus": row["lifecycle_status"],
            "distributorClassification": row["distributor_classification"],
            "priceBreaks": row["price_breaks"], "stock": row["stock"], "authorizedStock": row["authorized_stock"],
            "fetchedAt": iso(row["fetched_at"])}
    return {"references": row["refs"], "quantity": row["quantity"], "value": row["value"],
            "footprint": row["footprint"], "manufacturer": row["manufacturer"], "mpn": row["mpn"], "dnp": row["dnp"],
            "partKey": row["part_key"], "observation": observation}


def _not_watched() -> ApiError:
    return ApiError(404, "not_watched", "the repository has no watched board")


def _current_board(conn, repository: int) -> dict:
    row = sql_api.watched_board_get(conn, repository_id=repository)
    if row["outcome"] != "found":
        raise _not_watched()
    return row


class WatchedBoard(DatabaseResource):
    session_methods = frozenset({"GET", "POST", "DELETE"})

    def on_get(self, req, resp, repository_id: str):
        repository = _repository(repository_id)
        require(req, scope="admin", repository_id=repository)
        with db.connection(self.pool, self.config) as conn:
            row = _current_board(conn, repository)
        resp.media = {"ok": True, "repositoryId": str(repository), "board": board_item(row)}

    def on_post(self, req, resp, repository_id: str):
        repository = _repository(repository_id)
        auth = require(req, scope="admin", repository_id=repository)
        body = read_json_object(req, SMALL_MAX_BYTES)
        # Unknown properties are dropped, as the spec's versioning section says.
        path = project_path(body.get("path"))
        # A change: the caller's admin right re-read from the code host first, as for every change.
        auth = authority.current(self.pool, self.config, auth, repository, "admin")
        row = db.call(self.pool, self.config, sql_api.watched_board_watch, idempotent=False,
                      repository_id=repository, path=path, actor=auth.actor)
        if row["outcome"] in _WATCH_REFUSALS:
            raise ApiError(*_WATCH_REFUSALS[row["outcome"]])
        log("supply.board_watch", repositoryId=repository, outcome=row["outcome"], boardId=row["board_id"],
            actor=auth.actor)
        resp.status = falcon.HTTP_201 if row["outcome"] == "watched" else falcon.HTTP_200
        resp.media = {"ok": True, "outcome": row["outcome"], "repositoryId": str(repository),
                      "board": {"id": str(row["board_id"]), "path": row["path"],
                                "createdAt": iso(row["created_at"])}}

    def on_delete(self, req, resp, repository_id: str):
        repository = _repository(repository_id)
        auth = require(req, scope="admin", repository_id=repository)
        auth = authority.current(self.pool, self.config, auth, repository, "admin")
        row = db.call(self.pool, self.config, sql_api.watched_board_unwatch, idempotent=False,
                      repository_id=repository, actor=auth.actor)
        if row["outcome"] != "unwatched":
            raise _not_watched()
        log("supply.board_unwatch", repositoryId=repository, boardId=row["board_id"], actor=auth.actor)
        resp.media = {"ok": True, "outcome": "unwatched", "repositoryId": str(repository),
                      "boardId": str(row["board_id"])}


class Supply(DatabaseResource):
    """Keyset pages of the board's BOM lines in the checker's order (`limit` 1-100,
    default 50; `cursor`). A cursor holds the board and the run whose BOM it
    pages: once either changed it is 400 `invalid_cursor`, since going on would
    page another list."""

    session_methods = frozenset({"GET"})

    def on_get(self, req, resp, repository_id: str):
        repository = _repository(repository_id)
        require(req, scope="admin", repository_id=repository)
        limit = keyset.limit_param(req, default=50)
        filters = {"repositoryId": str(repository)}
        after = keyset.decode(req, filters, (keyset.ID, keyset.ID, keyset.ORDINAL))
        rows = []
        with db.connection(self.pool, self.config) as conn:
            board = _current_board(conn, repository)
            bom = [board["board_id"], board["bom_run_result_id"]]
            if after is not None and after[:2] != bom:
                raise ApiError(400, "invalid_cursor", "the watched board or its BOM changed since this cursor was "
                                                      "made: start again without a cursor")
            if board["bom_run_result_id"] is not None:
                rows = sql_api.watched_board_supply(conn, board_id=board["board_id"],
                                                    bom_run_id=board["bom_run_result_id"],
                                                    after_ordinal=after[2] if after else None, limit=limit + 1)
        rows, next_cursor = keyset.page(req, rows, limit, lambda r: bom + [r["ordinal"]], filters)
        resp.media = {"ok": True, "repositoryId": str(repository), "board": board_item(board),
                      "parts": [supply_item(r) for r in rows], "nextCursor": next_cursor}


def add_routes(app, config, pool) -> None:
    app.add_route("/api/v1/repositories/{repository_id}/watched-board", WatchedBoard(config, pool))
    app.add_route("/api/v1/repositories/{repository_id}/supply", Supply(config, pool))

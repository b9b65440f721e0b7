"""What the REST routes share: the host's error for a body that breaks its schema,
pagination with the Link header, and the base class of each group of routes.

A group's handler declares its route with ``@route(method, path template,
operationId of the REST description)`` (emulator.routing).
"""
from __future__ import annotations

from datetime import UTC, datetime
from urllib.parse import urlencode

from emulator.auth import require_repository_access
from emulator.errors import HostError, not_found
from emulator.routing import RequestContext
from emulator.runs import RunEngine
from emulator.state import Repository, State


def invalid_request(detail: str) -> HostError:
    # The real API words body-schema failures as "Invalid request.\n\n<detail>".
    return HostError(422, f"Invalid request.\n\n{detail}")


def json_object(body) -> dict:
    """A parsed request body that must be an object: the host answers other JSON 422."""
    if not isinstance(body, dict):
        raise invalid_request("The request body must be an object.")
    return body


def is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def parse_time(value, field: str) -> datetime:
    if not isinstance(value, str):
        raise invalid_request(f"Invalid value for '{field}'.")
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise invalid_request(f"Invalid value for '{field}'.") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).replace(microsecond=0)


def paginate(ctx: RequestContext, items: list) -> tuple[list, dict]:
    """Slice ``items`` by per_page (max 100) and page, with the real API's Link header."""
    per_page = max(1, min(100, ctx.int_arg("per_page", 30)))
    page = max(1, ctx.int_arg("page", 1))
    last = max(1, -(-len(items) // per_page))
    chunk = items[(page - 1) * per_page : page * per_page]

    def link(number: int, rel: str) -> str:
        query = {k: v[-1] for k, v in ctx.query.items()}
        query.update({"per_page": per_page, "page": number})
        return f'<{ctx.base_url}{ctx.path}?{urlencode(query)}>; rel="{rel}"'

    links = []
    if page < last:
        links += [link(page + 1, "next"), link(last, "last")]
    if page > 1:
        links += [link(1, "first"), link(page - 1, "prev")]
    return chunk, ({"Link": ", ".join(links)} if links else {})


class RouteGroup:
    def __init__(self, state: State, runs: RunEngine):
        self.state = state
        self.runs = runs

    def _repo(self, ctx: RequestContext, permission: tuple[str, str] | None):
        return require_repository_access(
            self.state, ctx.header("authorization"), ctx.params["owner"], ctx.params["repo"], permission
        )

    @staticmethod
    def _int_param(ctx: RequestContext, name: str) -> int:
        try:
            return int(ctx.params[name])
        except ValueError:
            raise not_found() from None

    def _record_of(self, repo: Repository, records: dict, ctx: RequestContext, id_param: str):
        """The record of ``records`` whose id is the path parameter ``id_param``; one
        of another repository is answered 404, as the host does, like a missing one."""
        record = records.get(self._int_param(ctx, id_param))
        if record is None or record.repository_id != repo.id:
            raise not_found()
        return record

    def _app_of(self, app_id: int | None):
        return self.state.apps.get(app_id) if app_id is not None else None

    def _open_pulls_at(self, repo: Repository, sha: str) -> list:
        """The repository's open pull requests whose head is ``sha`` (runs and check runs list them)."""
        return [p for p in self.state.pulls_of(repo.id) if p.state == "open" and p.head_sha == sha]

"""The control surface over HTTP: each operation's ``@route`` binds a path to it;
the operation gets the JSON body (and, for GET, the query string) and the path
parameters as keyword arguments."""
from __future__ import annotations

import inspect
import json

from emulator.control.base import ControlError
from emulator.routing import Reply, RequestContext, Router, declared_routes

#: Operations answered 201 Created.
CREATING = {"register_app", "create_installation", "create_repository", "open_pull_request", "add_fault", "create_user"}


def register_control_routes(router: Router, controller) -> None:
    for method, template, _, name in declared_routes(controller):
        router.add(method, template, f"emulator/{name}", _bind(getattr(controller, name), name), control=True)


def _bind(function, name: str):
    parameters = inspect.signature(function).parameters

    def handler(ctx: RequestContext) -> Reply:
        kwargs = {k: v[-1] for k, v in ctx.query.items()} if ctx.method == "GET" else {}
        if ctx.raw_body.strip():
            try:
                body = json.loads(ctx.raw_body)
            except ValueError:
                return Reply(400, {"error": "the body is not JSON"})
            if not isinstance(body, dict):
                return Reply(400, {"error": "the body must be a JSON object"})
            kwargs.update(body)
        params = dict(ctx.params)
        if "owner" in params:
            params["full_name"] = f"{params.pop('owner')}/{params.pop('repo')}"
        kwargs.update(params)
        unknown = sorted(set(kwargs) - set(parameters))
        if unknown:
            return Reply(400, {"error": f"unknown fields {unknown}; {name} takes {sorted(parameters)}"})
        try:
            result = function(**kwargs)
        except ControlError as exc:
            return Reply(exc.status, {"error": str(exc)})
        except (TypeError, ValueError) as exc:
            return Reply(400, {"error": str(exc)})
        if isinstance(result, str):
            # Operations that make a token (app JWT, installation, user, OIDC) return it bare.
            result = {"token": result}
        if isinstance(result, list):
            result = {"items": result}
        return Reply(201 if ctx.method == "POST" and name in CREATING else 200, result)

    return handler

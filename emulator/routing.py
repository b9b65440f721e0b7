"""A small route table: (method, path template, operationId) -> handler.

A handler declares its route with ``@route`` above it; ``Router.add_declared``
registers the declared methods of an object (the REST groups, OAuth and OIDC,
the component provider), and the control surface binds its own the same way.

The emulator keeps its own table instead of Falcon's router because faults and
the request log match requests by the real API's operationId and path template,
and because some templates hold a multi-segment parameter in the middle
(``/repos/{owner}/{repo}/commits/{ref}/check-runs`` with ``ref`` = ``heads/main``).
"""
from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from types import FunctionType
from typing import Any
from urllib.parse import parse_qs

from emulator.errors import HostError


@dataclass
class Reply:
    """What a handler answers. ``body`` is JSON-serialisable, or bytes/str sent as is."""

    status: int = 200
    body: Any = None
    headers: dict = field(default_factory=dict)
    content_type: str = "application/json; charset=utf-8"


@dataclass
class RequestContext:
    method: str
    path: str
    query: dict  # name -> list of values
    headers: dict  # lower-case name -> value
    raw_body: bytes
    params: dict
    base_url: str

    def header(self, name: str) -> str | None:
        return self.headers.get(name.lower())

    def arg(self, name: str, default: str | None = None) -> str | None:
        values = self.query.get(name)
        return values[-1] if values else default

    def int_arg(self, name: str, default: int) -> int:
        value = self.arg(name)
        if value is None:
            return default
        try:
            return int(value)
        except ValueError:
            raise HostError(422, f"Invalid value for parameter '{name}'") from None

    def json(self, required: bool = True) -> Any:
        """The JSON body; the real API answers 400 'Problems parsing JSON' to broken JSON."""
        if not self.raw_body.strip():
            if required:
                raise HostError(400, "Problems parsing JSON")
            return None
        try:
            return json.loads(self.raw_body)
        except (ValueError, UnicodeDecodeError):
            raise HostError(400, "Problems parsing JSON") from None

    def form_or_json(self) -> dict:
        content_type = (self.header("content-type") or "").lower()
        if "json" in content_type:
            body = self.json(required=False) or {}
            return body if isinstance(body, dict) else {}
        parsed = parse_qs(self.raw_body.decode("utf-8", "replace"))
        merged = {k: v[-1] for k, v in self.query.items()}
        merged.update({k: v[-1] for k, v in parsed.items()})
        return merged


Handler = Callable[[RequestContext], Reply]


@dataclass
class Route:
    method: str
    template: str
    operation_id: str
    handler: Handler
    #: control routes are neither logged nor subject to faults.
    control: bool = False
    regex: re.Pattern = None  # type: ignore[assignment]

    def __post_init__(self):
        pattern = ""
        for literal, name, multi in re.findall(r"([^{]*)(?:\{(\w+)(\+?)\})?", self.template):
            pattern += re.escape(literal)
            if name:
                pattern += f"(?P<{name}>.+?)" if multi else f"(?P<{name}>[^/]+)"
        self.regex = re.compile("^" + pattern + "$")
        self.template = self.template.replace("+}", "}")


def route(method: str, template: str, operation_id: str | None = None):
    """Declare the method below as the handler of ``method template`` (write a
    multi-segment parameter as ``{name+}``); one method may declare several."""

    def declare(function):
        # Decorators apply bottom-up: insert first so the list reads as written.
        function.__dict__.setdefault("declared_routes", []).insert(0, (method, template, operation_id))
        return function

    return declare


def declared_routes(owner: object) -> Iterator[tuple[str, str, str | None, str]]:
    """(method, template, operationId, method name) of each ``@route`` of ``owner``'s
    class and its bases, in the order they are written (the router tries routes in order)."""
    for cls in type(owner).__mro__:
        for name, member in vars(cls).items():
            if isinstance(member, FunctionType):
                for method, template, operation_id in vars(member).get("declared_routes", ()):
                    yield method, template, operation_id, name


class Router:
    def __init__(self):
        self.routes: list[Route] = []

    def add(self, method: str, template: str, operation_id: str, handler: Handler, control: bool = False) -> None:
        """Register a route; write a multi-segment parameter as ``{name+}``."""
        self.routes.append(Route(method.upper(), template, operation_id, handler, control))

    def add_declared(self, owner: object) -> None:
        """Register the ``@route`` methods of ``owner`` as its handlers."""
        for method, template, operation_id, name in declared_routes(owner):
            self.add(method, template, operation_id, getattr(owner, name))

    def match(self, method: str, path: str) -> tuple[Route, dict] | None:
        for candidate in self.routes:
            if candidate.method != method.upper():
                continue
            found = candidate.regex.match(path)
            if found:
                return candidate, found.groupdict()
        return None

    def is_control_path(self, path: str) -> bool:
        return path.startswith("/_emulator/")

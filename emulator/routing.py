"""A small route table: (method, path template, operationId) -> handler.

The emulator keeps its own table instead of Falcon's router because faults and
the request log match requests by the real API's operationId and path template,
and because some templates hold a multi-segment parameter in the middle
(``/repos/{owner}/{repo}/commits/{ref}/check-runs`` with ``ref`` = ``heads/main``).
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Callable
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


class Router:
    def __init__(self):
        self.routes: list[Route] = []

    def add(self, method: str, template: str, operation_id: str, handler: Handler, control: bool = False) -> None:
        """Register a route; write a multi-segment parameter as ``{name+}``."""
        self.routes.append(Route(method.upper(), template, operation_id, handler, control))

    def match(self, method: str, path: str) -> tuple[Route, dict] | None:
        for route in self.routes:
            if route.method != method.upper():
                continue
            found = route.regex.match(path)
            if found:
                return route, found.groupdict()
        return None

    def is_control_path(self, path: str) -> bool:
        return path.startswith("/_emulator/")

"""Check HTTP bodies against the code host's own REST description.

The description (``rest-openapi-subset.json``, octokit's dereferenced OpenAPI 3.0
document) is a fixture of the repository, ``tests/fixtures/code-host/``. Tests
use this module twice: the emulator's tests validate what the emulator answers,
and the service's tests validate what the service's client sends, so both sides
are held to the real API rather than to each other.

OpenAPI 3.0 is not JSON Schema: ``nullable: true`` has no JSON Schema meaning,
so schemas are converted (``nullable`` becomes ``anyOf [null, schema]``) before
handing them to ``jsonschema``. Path templates may contain multi-segment
parameters (``x-multi-segment``, e.g. a ``{ref}`` such as ``heads/main``).

This module is for tests and tools only; the service never imports it.
"""
from __future__ import annotations

import json
import os
import re
from functools import lru_cache
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import jsonschema

#: Where the description lives in the repository.
DEFAULT_DESCRIPTION = (
    Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "code-host" / "rest-openapi-subset.json"
)
#: Overrides DEFAULT_DESCRIPTION, for a checkout laid out differently.
DESCRIPTION_ENV = "EMULATOR_OPENAPI_DESCRIPTION"

_SCHEMA_NOISE = {"description", "example", "examples", "externalDocs", "xml", "deprecated", "readOnly", "writeOnly"}
_METHODS = ("get", "put", "post", "delete", "patch", "head", "options")


class SchemaMismatch(AssertionError):
    """A body (or status) does not match the REST description. An AssertionError so pytest shows it well."""


class Operation:
    """One (method, path template) of the description with its compiled matcher."""

    def __init__(self, method: str, template: str, spec: dict):
        self.method = method.upper()
        self.template = template
        self.spec = spec
        self.operation_id: str = spec.get("operationId", "")
        multi = {
            p["name"]
            for p in spec.get("parameters", [])
            if p.get("in") == "path" and p.get("x-multi-segment")
        }
        pattern = ""
        for literal, name in re.findall(r"([^{]*)(?:\{(\w+)\})?", template):
            pattern += re.escape(literal)
            if name:
                pattern += f"(?P<{name}>.+?)" if name in multi else f"(?P<{name}>[^/]+)"
        self.regex = re.compile("^" + pattern + "$")
        # Literal characters first: /repos/{o}/{r}/check-runs beats a template with more parameters.
        self.specificity = (len(re.sub(r"\{\w+\}", "", template)), -template.count("{"))

    def match(self, path: str) -> dict | None:
        m = self.regex.match(path)
        return m.groupdict() if m else None


def to_json_schema(schema: Any) -> Any:
    """Convert an OpenAPI 3.0 schema object into an equivalent JSON Schema (draft 4 semantics)."""
    if isinstance(schema, list):
        return [to_json_schema(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    converted = {}
    for key, value in schema.items():
        if key in _SCHEMA_NOISE or key.startswith("x-") or key == "nullable":
            continue
        if key == "properties":
            converted[key] = {name: to_json_schema(sub) for name, sub in value.items()}
        else:
            converted[key] = to_json_schema(value)
    if schema.get("nullable") is True:
        return {"anyOf": [{"type": "null"}, converted]}
    return converted


class Description:
    """The loaded REST description: finds operations and validates bodies."""

    def __init__(self, document: dict):
        self.document = document
        self.operations = [
            Operation(method, template, spec)
            for template, item in document["paths"].items()
            for method, spec in item.items()
            if method in _METHODS
        ]
        self.operations.sort(key=lambda op: op.specificity, reverse=True)
        self._validators: dict[tuple, jsonschema.protocols.Validator] = {}

    def find(self, method: str, path: str) -> tuple[Operation, dict]:
        """Return the operation and path parameters for a method and a path (or full URL)."""
        path = urlsplit(path).path if "://" in path else path.split("?", 1)[0]
        for op in self.operations:
            if op.method != method.upper():
                continue
            params = op.match(path)
            if params is not None:
                return op, params
        raise SchemaMismatch(f"no operation in the REST description for {method.upper()} {path}")

    def operation_by_id(self, operation_id: str) -> Operation:
        for op in self.operations:
            if op.operation_id == operation_id:
                return op
        raise KeyError(operation_id)

    def _validator(self, key: tuple, schema: dict):
        if key not in self._validators:
            converted = to_json_schema(schema)
            jsonschema.Draft4Validator.check_schema(converted)
            self._validators[key] = jsonschema.Draft4Validator(converted)
        return self._validators[key]

    def _check(self, validator, body: Any, what: str) -> None:
        errors = sorted(validator.iter_errors(body), key=lambda e: list(e.absolute_path))
        if errors:
            lines = [f"{what}: {len(errors)} schema error(s)"]
            for error in errors[:20]:
                where = "/".join(str(p) for p in error.absolute_path) or "(root)"
                lines.append(f"  at {where}: {error.message[:300]}")
            raise SchemaMismatch("\n".join(lines))

    def validate_request(self, method: str, path: str, body: Any) -> Operation:
        """Check a request body against the operation's request body schema; returns the operation."""
        op, _ = self.find(method, path)
        request_body = op.spec.get("requestBody")
        what = f"request {op.method} {op.template} ({op.operation_id})"
        if not request_body:
            if body not in (None, b"", "", {}):
                raise SchemaMismatch(f"{what}: the operation takes no request body")
            return op
        if body is None:
            if request_body.get("required"):
                raise SchemaMismatch(f"{what}: a request body is required")
            return op
        schema = request_body.get("content", {}).get("application/json", {}).get("schema")
        if schema is None:
            raise SchemaMismatch(f"{what}: no application/json request body in the description")
        self._check(self._validator((op.method, op.template, "request"), schema), _as_json(body), what)
        return op

    def validate_response(self, method: str, path: str, status: int, body: Any) -> Operation:
        """Check a response status and body against the description; returns the operation."""
        op, _ = self.find(method, path)
        what = f"response {status} to {op.method} {op.template} ({op.operation_id})"
        responses = op.spec.get("responses", {})
        response = responses.get(str(status)) or responses.get("default")
        if response is None:
            raise SchemaMismatch(f"{what}: status {status} is not documented (documented: {sorted(responses)})")
        content = response.get("content") or {}
        schema = (content.get("application/json") or next(iter(content.values()), {})).get("schema")
        if schema is None:
            if body not in (None, b"", ""):
                raise SchemaMismatch(f"{what}: the description says no body, got {str(body)[:200]!r}")
            return op
        self._check(self._validator((op.method, op.template, str(status)), schema), _as_json(body), what)
        return op


def _as_json(body: Any) -> Any:
    if isinstance(body, (bytes, bytearray)):
        body = body.decode("utf-8")
    if isinstance(body, str):
        return json.loads(body)
    return body


def description_path() -> Path:
    return Path(os.environ.get(DESCRIPTION_ENV) or DEFAULT_DESCRIPTION)


@lru_cache(maxsize=4)
def load_description(path: str | None = None) -> Description:
    """Load (once) the REST description from ``path`` or the default location."""
    source = Path(path) if path else description_path()
    return Description(json.loads(source.read_text(encoding="utf-8")))


def find_operation(method: str, path: str) -> tuple[Operation, dict]:
    """The operation (``.operation_id``, ``.template``) and path parameters for a request."""
    return load_description().find(method, path)


def validate_request(method: str, path: str, body: Any) -> Operation:
    """Raise SchemaMismatch unless ``body`` is what the real API accepts for ``method path``."""
    return load_description().validate_request(method, path, body)


def validate_response(method: str, path: str, status: int, body: Any) -> Operation:
    """Raise SchemaMismatch unless ``status``/``body`` is what the real API describes for ``method path``."""
    return load_description().validate_response(method, path, status, body)

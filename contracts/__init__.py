"""Wire contracts shared by the service and the checker, written once as JSON Schema.

The service validates what it accepts and the checker validates what it emits
against the same documents, so the two can never drift apart silently.
"""
from __future__ import annotations

import json
from functools import cache

RUN_RESULT_SCHEMA_VERSION = 1


@cache
def load(name: str) -> dict:
    """Return a contract document (``run-result.schema.json``, ``openapi.json``) by file name."""
    from importlib import resources  # here: a checker run that imports this for the version reads no document

    return json.loads(resources.files(__package__).joinpath(name).read_text(encoding="utf-8"))


@cache
def run_result_validator():
    from jsonschema import Draft202012Validator

    schema = load("run-result.schema.json")
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)



def openapi_response_validator(path: str, method: str, status: int):
    """A validator for the JSON body of one documented response of openapi.json."""
    from jsonschema import Draft202012Validator
    from referencing import Registry, Resource
    from referencing.jsonschema import DRAFT202012

    doc = load("openapi.json")
    response = doc["paths"][path][method.lower()]["responses"][str(status)]
    if "$ref" in response:
        response = doc["components"]["responses"][response["$ref"].rsplit("/", 1)[1]]
    schema = response["content"]["application/json"]["schema"]
    # Resolve "#/components/..." references against the whole document.
    registry = Registry().with_resource("urn:openapi", Resource.from_contents(doc, default_specification=DRAFT202012))
    if "$ref" in schema:
        schema = {"$ref": "urn:openapi" + schema["$ref"]}
    return Draft202012Validator(schema, registry=registry)

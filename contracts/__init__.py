"""Wire contracts shared by the service and the checker, written once as JSON Schema.

The service validates what it accepts and the checker validates what it emits
against the same documents, so the two can never drift apart silently.
"""
from __future__ import annotations

import json
from functools import lru_cache
from importlib import resources

RUN_RESULT_SCHEMA_VERSION = 1


@lru_cache(maxsize=None)
def load(name: str) -> dict:
    """Return a contract document (``run-result.schema.json``, ``openapi.json``) by file name."""
    return json.loads(resources.files(__package__).joinpath(name).read_text(encoding="utf-8"))


@lru_cache(maxsize=None)
def run_result_validator():
    from jsonschema import Draft202012Validator

    schema = load("run-result.schema.json")
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)

"""The run-result wire contract at the service's edge: strip what the contract
does not know, refuse what it forbids with a code that names the field, and
compute the digest the workflow callback is bound to.

The contract is contracts/run-result.schema.json, the same document the
checker validates its output against.
"""
from __future__ import annotations

import hashlib
from functools import lru_cache

import rfc8785
from jsonschema import Draft202012Validator, validators

import contracts
from app.refusal import Refused

# JSON Schema counts 5.0 as an integer; the columns (integer) and the digest do
# not, so an integer must be written as one.
_STRICT_TYPES = Draft202012Validator.TYPE_CHECKER.redefine(
    "integer", lambda checker, value: type(value) is int)


class InvalidResult(Refused, ValueError):
    """A run result the contract refuses; `code` is the stable error code."""


def _schema() -> dict:
    return contracts.load("run-result.schema.json")


def strip_unknown(result: dict) -> dict:
    """A copy with only the contract's properties, at the top level and in each
    finding (consumers ignore unknown fields; nested ones are extensions)."""
    schema = _schema()
    known = schema["properties"].keys()
    finding_known = schema["$defs"]["finding"]["properties"].keys()
    stripped = {k: v for k, v in result.items() if k in known}
    findings = stripped.get("findings")
    if isinstance(findings, list):
        stripped["findings"] = [{k: v for k, v in f.items() if k in finding_known} if isinstance(f, dict) else f
                                for f in findings]
    return stripped


@lru_cache(maxsize=1)
def _validator():
    strict = validators.extend(Draft202012Validator, type_checker=_STRICT_TYPES)
    return strict(contracts.run_result_validator().schema)


def _describe(error) -> str:
    """Where and which rule, never the offending value (it may be large or hostile)."""
    where = "/".join(str(p) for p in error.absolute_path) or "(top level)"
    rule = error.validator
    limit = error.validator_value
    if isinstance(limit, (int, float, str)) and not isinstance(limit, bool) and len(str(limit)) <= 40:
        return f"{where}: fails {rule} {limit}"
    return f"{where}: fails {rule}"


def _enum_check(result: dict) -> None:
    schema = _schema()
    if "triggerKind" in result and result["triggerKind"] not in schema["properties"]["triggerKind"]["enum"]:
        raise InvalidResult("invalid_trigger_kind", "triggerKind is not one of " +
                            ", ".join(schema["properties"]["triggerKind"]["enum"]))
    severities = schema["$defs"]["finding"]["properties"]["severity"]["enum"]
    for index, finding in enumerate(result.get("findings") or []):
        if isinstance(finding, dict) and "severity" in finding and finding["severity"] not in severities:
            raise InvalidResult("invalid_finding_severity",
                                f"findings/{index}/severity is not one of " + ", ".join(severities))


def validate(result) -> dict:
    """The stripped, validated result; InvalidResult names the first problem."""
    if not isinstance(result, dict):
        raise InvalidResult("invalid_run_result", "the run result must be a JSON object")
    stripped = strip_unknown(result)
    _enum_check(stripped)
    error = next(iter(sorted(_validator().iter_errors(stripped),
                             key=lambda e: [str(p) for p in e.absolute_path])), None)
    if error is not None:
        raise InvalidResult("invalid_run_result", _describe(error))
    for index, finding in enumerate(stripped["findings"]):
        if "endLine" in finding and finding.get("startLine", finding["endLine"]) > finding["endLine"]:
            raise InvalidResult("invalid_run_result", f"findings/{index}: endLine is before startLine")
    return stripped


def digest(result: dict) -> str:
    """sha256:<hex> of the RFC 8785 canonical JSON of the result as sent."""
    return "sha256:" + hashlib.sha256(rfc8785.dumps(result)).hexdigest()

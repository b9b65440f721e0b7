"""The OpenAPI helper that both the emulator's and the service's tests rely on."""
import pytest

from emulator.openapi_check import SchemaMismatch, to_json_schema


def test_nullable_becomes_a_null_alternative():
    converted = to_json_schema({"type": "string", "nullable": True, "example": "x", "enum": ["a", None]})
    assert converted == {"anyOf": [{"type": "null"}, {"type": "string", "enum": ["a", None]}]}


def test_nested_nullable_objects_are_converted():
    schema = {"type": "object", "properties": {"user": {"type": "object", "nullable": True, "required": ["id"],
                                                         "properties": {"id": {"type": "integer"}}}}}
    converted = to_json_schema(schema)
    assert converted["properties"]["user"]["anyOf"][0] == {"type": "null"}


def test_finds_operations_by_path_template(description):
    op, params = description.find("GET", "/repos/o/r/actions/runs/12/attempts/2")
    assert op.operation_id == "actions/get-workflow-run-attempt"
    assert params == {"owner": "o", "repo": "r", "run_id": "12", "attempt_number": "2"}


def test_multi_segment_ref_and_full_urls(description):
    op, params = description.find("GET", "http://127.0.0.1:9/repos/o/r/commits/heads/main/check-runs?filter=all")
    assert op.operation_id == "checks/list-for-ref"
    assert params["ref"] == "heads/main"


def test_unknown_operation_is_a_mismatch(description):
    with pytest.raises(SchemaMismatch):
        description.find("GET", "/nowhere")


def test_request_bodies_are_checked(description):
    description.validate_request("POST", "/repos/o/r/check-runs", {"name": "readiness", "head_sha": "a" * 40})
    with pytest.raises(SchemaMismatch, match="head_sha"):
        description.validate_request("POST", "/repos/o/r/check-runs", {"name": "readiness"})
    with pytest.raises(SchemaMismatch, match="not valid under any"):
        description.validate_request("PATCH", "/repos/o/r/check-runs/1", {"status": "completed"})
    too_many = [{"path": "a", "start_line": 1, "end_line": 1, "annotation_level": "notice", "message": "m"}] * 51
    with pytest.raises(SchemaMismatch):
        description.validate_request("PATCH", "/repos/o/r/check-runs/1", {"output": {"summary": "s", "annotations": too_many}})


def test_response_status_and_body_are_checked(description):
    with pytest.raises(SchemaMismatch, match="not documented"):
        description.validate_response("GET", "/repos/o/r/actions/runs/1", 418, {})
    with pytest.raises(SchemaMismatch, match="required"):
        description.validate_response("GET", "/repos/o/r/actions/runs/1", 200, {"id": 1})
    description.validate_response("POST", "/repos/o/r/actions/workflows/x.yml/dispatches", 204, None)


def test_module_level_functions_use_the_default_description():
    from emulator import openapi_check

    op = openapi_check.validate_request("POST", "/repos/o/r/issues/3/comments", {"body": "hello"})
    assert op.operation_id == "issues/create-comment"
    with pytest.raises(SchemaMismatch):
        openapi_check.validate_request("POST", "/repos/o/r/issues/3/comments", {})

"""What contracts/openapi.json says of a request body's unknown properties is
what the served API does: a schema that forbids them (additionalProperties
false) belongs to a route that refuses them, and a route that ignores them has
a schema that allows them. Checked against the service with a valid body plus
an unknown property, on a route of each kind."""
from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from tests.helpers.access import bearer, create_token, seed_repository

ROOT = Path(__file__).resolve().parents[2]
DOCUMENT = json.loads((ROOT / "contracts" / "openapi.json").read_text(encoding="utf-8"))
REPO = 9001
#: The one JSON body the service refuses unknown properties in: the workflow's
#: signed callback envelope (app/web/runs.py, 400 unknown_property).
REFUSING = {("post", "/api/v1/runs/github-actions-result")}


def request_schema(method: str, path: str) -> dict:
    schema = DOCUMENT["paths"][path][method]["requestBody"]["content"]["application/json"]["schema"]
    while "$ref" in schema:
        node = DOCUMENT
        for part in schema["$ref"].lstrip("#/").split("/"):
            node = node[part]
        schema = node
    return schema


def json_request_operations() -> list[tuple[str, str]]:
    return sorted((method, path) for path, item in DOCUMENT["paths"].items() for method, operation in item.items()
                  if isinstance(operation, dict)
                  and "application/json" in operation.get("requestBody", {}).get("content", {})
                  and not path.startswith("/api/host/"))    # webhooks: the code host's payloads, taken as they come


@pytest.mark.parametrize("method, path", json_request_operations())
def test_a_schema_forbids_unknown_properties_exactly_where_the_route_refuses_them(method, path):
    forbids = request_schema(method, path).get("additionalProperties") is False
    assert forbids == ((method, path) in REFUSING), (method, path)


def test_a_route_that_ignores_unknown_properties_accepts_a_valid_body_with_one(client, owner, pool):
    seed_repository(owner, account_id=101, installation_id=501, repository_id=REPO, login="acme")
    admin, _ = create_token(pool, REPO, scopes=("admin",), name="bootstrap")
    body = {"repositoryId": str(REPO), "name": "ci runner", "comment": "not a property of the contract"}
    jsonschema.validate(body, request_schema("post", "/api/v1/tokens"))   # the contract takes it
    result = client.simulate_post("/api/v1/tokens", json=body, headers=bearer(admin))
    assert result.status_code == 201, result.json                        # and so does the service
    assert result.json["tokenRecord"]["name"] == "ci runner"

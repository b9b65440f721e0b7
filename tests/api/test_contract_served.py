"""GET /api/openapi.json answers the repository's document with a strong ETag."""
from __future__ import annotations

import hashlib
import json
from importlib import resources


def test_the_document_is_served_with_a_strong_etag(client):
    served = client.simulate_get("/api/openapi.json")
    assert served.status_code == 200
    assert served.headers["content-type"].startswith("application/json")
    on_disk = resources.files("contracts").joinpath("openapi.json").read_bytes()
    assert served.content == on_disk
    assert served.headers["etag"] == '"' + hashlib.sha256(on_disk).hexdigest() + '"'
    assert "/api/openapi.json" in json.loads(served.content)["paths"]


def test_revalidation_answers_304_without_a_body(client):
    etag = client.simulate_get("/api/openapi.json").headers["etag"]
    for header in (etag, f"W/{etag}", f'"other", {etag}', "*"):
        again = client.simulate_get("/api/openapi.json", headers={"If-None-Match": header})
        assert again.status_code == 304, header
        assert again.content == b""
    changed = client.simulate_get("/api/openapi.json", headers={"If-None-Match": '"stale"'})
    assert changed.status_code == 200 and changed.content


def test_no_credentials_needed(client):
    assert client.simulate_get("/api/openapi.json", headers={"Authorization": "Bearer nonsense"}).status_code == 200

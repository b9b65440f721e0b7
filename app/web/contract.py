"""GET /api/openapi.json: the API's contract, served as the repository holds it.

The document is read once per process; its ETag is a strong validator (the
SHA-256 of the exact bytes), so clients and caches revalidate with
If-None-Match and get 304 until a deployment changes the document.
"""
from __future__ import annotations

import hashlib
from importlib import resources

import falcon


class OpenApiDocument:
    auth = "none"

    def __init__(self):
        self.body = resources.files("contracts").joinpath("openapi.json").read_bytes()
        self.etag = '"' + hashlib.sha256(self.body).hexdigest() + '"'

    def on_get(self, req, resp):
        resp.set_header("ETag", self.etag)
        resp.set_header("Cache-Control", "no-cache")  # cache, but revalidate: the ETag makes that cheap
        if _matches(req.get_header("If-None-Match"), self.etag):
            resp.status = falcon.HTTP_304
            return
        resp.content_type = "application/json"
        resp.data = self.body

    on_head = on_get


def _matches(if_none_match: str | None, etag: str) -> bool:
    """If-None-Match compares weakly (RFC 9110 13.1.2): W/"x" matches "x"; `*` matches any."""
    if not if_none_match:
        return False
    tags = {tag.strip().removeprefix("W/") for tag in if_none_match.split(",")}
    return "*" in tags or etag in tags

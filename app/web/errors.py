"""Error responses: `{"ok": false, "code": "<stable_code>", "message": "..."}`.

Resources raise ApiError; the handler turns it into JSON. Messages are for
humans and never echo request content or internal errors.
"""
from __future__ import annotations

import falcon

from app.jsonlog import log


class ApiError(Exception):
    def __init__(self, status: int, code: str, message: str, headers: dict | None = None):
        super().__init__(code)
        self.status = status
        self.code = code
        self.message = message
        self.headers = headers or {}


def quoted_prefix(value: str, limit: int = 40) -> str:
    """A caller's string in a message: at most `limit` characters, escaped to
    printable ASCII, so that an answer never echoes more than a short prefix."""
    return ascii(value[:limit]) + ("..." if len(value) > limit else "")


def bad_request(code: str, message: str) -> ApiError:
    return ApiError(400, code, message)


def handle_api_error(req, resp, ex: ApiError, params):
    resp.status = falcon.code_to_http_status(ex.status)
    resp.media = {"ok": False, "code": ex.code, "message": ex.message}
    for name, value in ex.headers.items():
        resp.set_header(name, value)


def handle_falcon_error(req, resp, ex: falcon.HTTPError, params):
    # Falcon's own errors (404 route, 405 method, bad query types) in our envelope.
    code = {404: "not_found", 405: "method_not_allowed"}.get(ex.status_code, "bad_request")
    resp.status = ex.status
    resp.media = {"ok": False, "code": code, "message": ex.title or "request refused"}
    for name, value in (ex.headers or {}).items():
        resp.set_header(name, value)


def handle_unexpected(req, resp, ex: Exception, params):
    log("api.unhandled_error", level="error", path=req.path, method=req.method, errorClass=type(ex).__name__)
    resp.status = falcon.HTTP_500
    resp.media = {"ok": False, "code": "internal_error", "message": "internal error"}


def install(app: falcon.App) -> None:
    app.add_error_handler(Exception, handle_unexpected)
    app.add_error_handler(falcon.HTTPError, handle_falcon_error)
    app.add_error_handler(ApiError, handle_api_error)

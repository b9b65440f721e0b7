"""Rendering the review pages: jinja2 templates (app/templates, autoescape on),
the pages' security headers, and refusals as pages instead of JSON.

Every page is plain HTML and one stylesheet from this origin: no inline
script, nothing from another origin; the only script is the run page's board
drawing, a file from this origin (/static/board-view.js, docs/board-diff.md).
The headers say so (`default-src 'self'`), forbid framing and keep the
referrer on this site, so a run's URL never reaches the code host.
"""
from __future__ import annotations

import datetime as dt
import re
from pathlib import Path
from types import SimpleNamespace
from urllib.parse import quote

import falcon
import jinja2

from app.web import errors
from app.web.errors import ApiError
from app.web.session_auth import SessionActor, clear_cookie, session_cookie

TEMPLATES = Path(__file__).resolve().parents[2] / "templates"
PAGE_CSP = "default-src 'self'; frame-ancestors 'none'; form-action 'self'; base-uri 'none'"
# Paths that are the API's (JSON refusals); every other path is a page.
NOT_PAGES = ("/api/", "/auth/", "/health/", "/metrics")
PUBLIC_PAGES = ("/", "/sign-in")
SESSION_REFUSALS = ("session_required", "invalid_session", "session_expired")
RUN_FORM = re.compile(r"^(/release-runs/[0-9]{1,19})/")

_environment = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES), autoescape=True,
                                  undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)


def _when(value) -> str:
    if value is None:
        return ""
    moment = dt.datetime.fromisoformat(value) if isinstance(value, str) else value
    return moment.astimezone(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")


_environment.filters["when"] = _when
_environment.filters["short_sha"] = lambda sha: (sha or "")[:7]


def is_page(path: str) -> bool:
    return not path.startswith(NOT_PAGES)


def viewer_of(req) -> SessionActor | None:
    auth = getattr(req.context, "auth", None)
    return auth if isinstance(auth, SessionActor) else None


def render(req, resp, template: str, status=falcon.HTTP_200, **context) -> None:
    viewer = viewer_of(req)
    resp.status = status
    resp.content_type = falcon.MEDIA_HTML
    resp.text = _environment.get_template(template).render(
        viewer=viewer, csrf_token=viewer.csrf_token if viewer else "", path=req.relative_uri, **context)


def api_media(responder, req, *args) -> dict:
    """What a JSON endpoint answers to this request: the page shows the API's
    own representation, reached through the same responder, queries and checks."""
    answer = SimpleNamespace(media=None, status=None)
    responder(req, answer, *args)
    return answer.media


def sign_in_location(return_to: str) -> str:
    return "/sign-in?returnTo=" + quote(return_to, safe="/")


class PageHeaders:
    """Falcon middleware: the pages' headers on every answer that is not the API's.
    A route that sets its own Content-Security-Policy (the report artifacts) keeps it."""

    def process_response(self, req, resp, resource, req_succeeded):
        if not is_page(req.path) and not req.path.startswith("/auth/"):
            return
        if resp.get_header("Content-Security-Policy") is None:
            resp.set_header("Content-Security-Policy", PAGE_CSP)
        resp.set_header("X-Frame-Options", "DENY")
        resp.set_header("Referrer-Policy", "same-origin")


class PageErrors:
    """Refusals on pages are pages: sign in again, a 404 that names nothing, or
    what went wrong in words. The API's paths keep their JSON envelope."""

    def __init__(self, config):
        self.config = config

    def api_error(self, req, resp, ex: ApiError, params) -> None:
        if not is_page(req.path):
            return errors.handle_api_error(req, resp, ex, params)
        if ex.status == 401 and ex.code in SESSION_REFUSALS:
            # A stale cookie is dropped; the viewer comes back here after signing in.
            clear_cookie(resp, self.config, session_cookie(self.config))
            resp.status = falcon.HTTP_303
            resp.location = req.path if req.path in PUBLIC_PAGES else sign_in_location(_return_to(req))
            return
        if ex.status == 404:
            return render(req, resp, "not_found.html", status=falcon.HTTP_404)
        for name, value in ex.headers.items():
            resp.set_header(name, value)
        render(req, resp, "refused.html", status=falcon.code_to_http_status(ex.status), code=ex.code,
               message=ex.message)

    def http_error(self, req, resp, ex: falcon.HTTPError, params) -> None:
        if not is_page(req.path):
            return errors.handle_falcon_error(req, resp, ex, params)
        if ex.status_code == 404:
            return render(req, resp, "not_found.html", status=falcon.HTTP_404)
        render(req, resp, "refused.html", status=ex.status, code="bad_request", message=ex.title or "request refused")


def _return_to(req) -> str:
    """Where to come back after signing in: this page, or for a form the page it was on."""
    if req.method == "GET":
        return req.relative_uri
    form_page = RUN_FORM.match(req.path)
    return form_page.group(1) if form_page else "/runs"


def install(app: falcon.App, config) -> None:
    handlers = PageErrors(config)
    app.add_middleware(PageHeaders())
    app.add_error_handler(falcon.HTTPError, handlers.http_error)
    app.add_error_handler(ApiError, handlers.api_error)

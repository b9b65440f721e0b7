"""The public pages: what the service is (`/`), signing in (`/sign-in`) and the stylesheet."""
from __future__ import annotations

from pathlib import Path
from urllib.parse import quote

from app.web.pages.rendering import render
from app.web.sign_in import RETURN_TO

STYLESHEET = Path(__file__).resolve().parents[2] / "static" / "boardready.css"


class Home:
    auth = "none"
    session_methods = frozenset({"GET"})   # signed in: the header shows who, and sign-out

    def __init__(self, config):
        self.config = config

    def on_get(self, req, resp):
        render(req, resp, "home.html", title="Release readiness for KiCad boards")


class SignInPage:
    auth = "none"
    session_methods = frozenset({"GET"})

    def __init__(self, config):
        self.config = config

    def on_get(self, req, resp):
        return_to = req.get_param("returnTo") or "/runs"
        if not RETURN_TO.match(return_to):
            return_to = "/runs"   # never another host: the same rule as /auth/sign-in
        render(req, resp, "sign_in.html", title="Sign in", return_to=return_to,
               sign_in_href="/auth/sign-in?returnTo=" + quote(return_to, safe="/"),
               enabled=self.config.sign_in.enabled)


class Stylesheet:
    auth = "none"

    def __init__(self):
        self.css = STYLESHEET.read_bytes()

    def on_get(self, req, resp):
        resp.content_type = "text/css; charset=utf-8"
        resp.cache_control = ["public", "max-age=300"]
        resp.data = self.css

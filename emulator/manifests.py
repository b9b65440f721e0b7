"""The app manifest flow: registering an app in one step, as the code host does it.

1. A person's browser posts a form with a ``manifest`` field (JSON) to
   ``/settings/apps/new`` (or ``/organizations/{org}/settings/apps/new``).
   The real host shows a confirmation page; here, as with the OAuth authorize
   page, the person is taken to have confirmed at once: the app is registered
   with the manifest's permissions, events and callback URLs, and the browser
   is redirected to the manifest's ``redirect_url`` with ``code`` and the
   form's ``state``.
2. The tool that made the manifest converts the code with
   ``POST /app-manifests/{code}/conversions`` (no authentication) and gets the
   app with its ``pem`` (private key), ``webhook_secret``, ``client_id`` and
   ``client_secret``. A code works once and for one hour; a spent or unknown
   code is 404.

As on the host, an event needs the permission that carries it (a manifest
asking for ``pull_request`` events without a ``pull_requests`` permission is
refused), and the webhook deliveries of the new app go to the manifest's
``hook_attributes.url`` signed with the new secret.
"""
from __future__ import annotations

import html
import json
import re
import secrets
import threading
import time
from urllib.parse import urlencode, urlsplit

from emulator import shapes
from emulator.errors import HostError
from emulator.routing import Reply, RequestContext, route

CODE_LIFETIME_SECONDS = 3600
#: The permission an event needs (the host's own rule, for the events an app like ours asks for).
EVENT_PERMISSIONS = {
    "pull_request": "pull_requests", "pull_request_review": "pull_requests",
    "check_run": "checks", "check_suite": "checks",
    "workflow_run": "actions", "workflow_job": "actions",
    "issues": "issues", "issue_comment": "issues",
    "push": "contents", "create": "contents", "delete": "contents", "release": "contents",
    "organization": "members", "member": "members", "membership": "members", "team": "members",
}
PERMISSION_LEVELS = ("read", "write", "admin")


class ManifestRoutes:
    """Needs the controller (``register_app``, the webhook sender, the generated keys)."""

    def __init__(self, controller):
        self.controller = controller
        self._codes: dict[str, dict] = {}
        self._lock = threading.Lock()

    @route("POST", "/settings/apps/new", "web/app-manifest")
    @route("POST", "/organizations/{org}/settings/apps/new", "web/org-app-manifest")
    def new_app(self, ctx: RequestContext) -> Reply:
        form = ctx.form_or_json()
        try:
            manifest = json.loads(form.get("manifest") or "")
        except ValueError:
            return _page(422, "The manifest is not valid JSON.")
        problem = manifest_problem(manifest)
        if problem:
            return _page(422, problem)
        owner = ctx.params.get("org") or "boardready-dev"
        name = manifest.get("name") or "boardready"
        registered = self.controller.register_app(
            slug=re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "app", name=name,
            permissions=manifest.get("default_permissions") or {}, events=manifest.get("default_events") or [],
            owner_login=owner, callback_urls=list(manifest.get("callback_urls") or []))
        webhook_secret = secrets.token_hex(20)
        hook = manifest.get("hook_attributes") or {}
        if hook.get("url") and hook.get("active", True):
            self.controller.sender.configure("app", hook["url"], webhook_secret)
        code = secrets.token_hex(16)
        with self._lock:
            self._codes[code] = {"app_id": registered["id"], "pem": registered["private_key_pem"],
                                 "webhook_secret": webhook_secret, "expires": time.time() + CODE_LIFETIME_SECONDS}
        query = {"code": code}
        if form.get("state"):
            query["state"] = form["state"]
        target = manifest["redirect_url"]
        separator = "&" if urlsplit(target).query else "?"
        return Reply(302, b"", {"Location": target + separator + urlencode(query)}, content_type="text/html")

    @route("POST", "/app-manifests/{code}/conversions", "apps/create-from-manifest")
    def conversion(self, ctx: RequestContext) -> Reply:
        with self._lock:
            grant = self._codes.pop(ctx.params["code"], None)
        if grant is None or grant["expires"] < time.time():
            raise HostError(404, "Not Found")
        state = self.controller.state
        with state.lock:
            app = state.apps[grant["app_id"]]
            body = shapes.app_shape(ctx.base_url, app)
        body.update({"client_secret": app.client_secret, "webhook_secret": grant["webhook_secret"],
                     "pem": grant["pem"]})
        return Reply(201, body)


def manifest_problem(manifest) -> str | None:
    """Why the host would refuse this manifest, or None."""
    if not isinstance(manifest, dict):
        return "The manifest must be a JSON object."
    for name in ("url", "redirect_url"):
        value = manifest.get(name)
        if not isinstance(value, str) or not re.match(r"https?://[^\s/]+", value):
            return f"The manifest's {name} must be an http or https URL."
    hook = manifest.get("hook_attributes")
    if hook is not None and (not isinstance(hook, dict) or not re.match(r"https?://[^\s/]+", str(hook.get("url", "")))):
        return "hook_attributes.url must be an http or https URL."
    callbacks = manifest.get("callback_urls", [])
    if not isinstance(callbacks, list) or len(callbacks) > 10 or \
            not all(isinstance(u, str) and re.match(r"https?://[^\s/]+", u) for u in callbacks):
        return "callback_urls must be at most 10 http or https URLs."
    permissions = manifest.get("default_permissions", {})
    if not isinstance(permissions, dict) or not all(v in PERMISSION_LEVELS for v in permissions.values()):
        return "default_permissions must map permissions to read, write or admin."
    events = manifest.get("default_events", [])
    if not isinstance(events, list) or not all(isinstance(e, str) for e in events):
        return "default_events must be a list of event names."
    for event in events:
        needed = EVENT_PERMISSIONS.get(event)
        if needed and needed not in permissions:
            return f"Default events unsupported: {event} needs the {needed} permission."
    return None


def _page(status: int, message: str) -> Reply:
    return Reply(status, f"<!doctype html><title>App manifest</title><p>{html.escape(message)}</p>".encode(),
                 content_type="text/html; charset=utf-8")

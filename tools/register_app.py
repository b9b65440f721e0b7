"""bin/register-app: register the service as an app on the code host in one step.

    bin/register-app --public-url https://boardready.example.com --print
        prints the app manifest and exits
    bin/register-app --public-url https://boardready.example.com [--org ORG] --env-file /etc/boardready/app.env
        serves the manifest flow on 127.0.0.1: open the printed address in a
        browser signed in to the code host, confirm, and the code host sends the
        browser back here; the app's id, private key, webhook secret and OAuth
        client are then written to the env file (mode 0640, group of its folder,
        the key beside it); both are checked before the code host creates anything
    bin/register-app --public-url ... --code CODE --env-file ...
        converts a code obtained by hand (the flow's last step alone)

The manifest asks for exactly what the service uses (PERMISSIONS below, each
with its reason; the events are the subscribable ones the intake handles) and
never for repository contents: the readiness workflow checks the code out with
its own token. The webhook URL and the OAuth callback come from
SERVICE_PUBLIC_URL, as the service builds them.
"""
from __future__ import annotations

import argparse
import html
import json
import os
import re
import secrets
import sys
import threading
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, quote, urlsplit

from app.lifecycle_events import HANDLED_EVENTS
from app.web import membership

#: Permission -> (level, why the service needs it).
PERMISSIONS = {
    "checks": ("write", "create the check run of a release run and complete it with annotations"),
    "actions": ("write", "dispatch readiness-runner.yml and read its runs (reconciliation)"),
    "pull_requests": ("write", "read pull requests and post the one comment per pull request"),
    "metadata": ("read", "repositories, and a person's permission on a repository"),
}
#: Events every app receives without asking (the manifest may not list them).
ALWAYS_DELIVERED = {"installation", "installation_repositories", "ping", "meta"}
#: The permission that carries each event the intake may handle.
EVENT_PERMISSION = {
    "pull_request": "pull_requests",
    "organization": "members", "member": "members", "membership": "members", "team": "members",
}
WEBHOOK_PATH = "/api/host/webhook"
CALLBACK_PATH = "/auth/callback"
DEFAULT_WEB_URL = "https://github.com"
DEFAULT_API_URL = "https://api.github.com"


def events() -> list[str]:
    return sorted((set(HANDLED_EVENTS) | set(membership.EVENTS)) - ALWAYS_DELIVERED)


def permissions() -> dict[str, str]:
    granted = {name: level for name, (level, _) in PERMISSIONS.items()}
    for event in events():
        granted.setdefault(EVENT_PERMISSION[event], "read")
    return granted


def manifest(public_url: str, redirect_url: str, name: str = "boardready") -> dict:
    public_url = public_url.rstrip("/")
    return {
        "name": name,
        "url": public_url,
        "description": "KiCad release-readiness gate: checks pull requests of hardware repositories.",
        "hook_attributes": {"url": public_url + WEBHOOK_PATH, "active": True},
        "redirect_url": redirect_url,
        "callback_urls": [public_url + CALLBACK_PATH],
        "request_oauth_on_install": False,
        "setup_on_update": False,
        "public": False,
        "default_permissions": permissions(),
        "default_events": events(),
    }


def new_app_url(web_url: str, org: str | None) -> str:
    base = web_url.rstrip("/")
    return f"{base}/organizations/{quote(org, safe='')}/settings/apps/new" if org else f"{base}/settings/apps/new"


def convert(api_url: str, code: str, timeout: float = 30) -> dict:
    """POST /app-manifests/{code}/conversions: the app with pem, webhook_secret and client."""
    request = urllib.request.Request(
        f"{api_url.rstrip('/')}/app-manifests/{quote(code, safe='')}/conversions", data=b"", method="POST",
        headers={"Accept": "application/vnd.github+json", "X-GitHub-Api-Version": "2022-11-28",
                 "User-Agent": "boardready-register-app"})
    with urllib.request.urlopen(request, timeout=timeout) as response:
        body = json.load(response)
    return checked_app(body)


# What the env file may hold of the code host's answer: one line each, nothing
# that could end a line and start another setting.
SECRET_VALUE = re.compile(r"[\x21-\x7e]{1,512}")
SLUG = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")
PEM = re.compile(r"-----BEGIN [A-Z ]{1,40}-----\r?\n[A-Za-z0-9+/=\r\n]{1,16384}-----END [A-Z ]{1,40}-----\r?\n?")


def checked_app(body) -> dict:
    """The conversion's answer, each value the env file or the key file takes checked
    (ValueError otherwise): a value with a newline would write a setting of its own."""
    if not isinstance(body, dict):
        raise ValueError("the code host's answer is not an object")
    missing = [k for k in ("id", "pem", "webhook_secret", "client_id", "client_secret") if not body.get(k)]
    if missing:
        raise ValueError("the code host's answer lacks " + ", ".join(missing))
    if isinstance(body["id"], bool) or not isinstance(body["id"], int) or not 0 < body["id"] < 2**63:
        raise ValueError("the code host's answer has an id that is not a positive integer")
    for name in ("webhook_secret", "client_id", "client_secret"):
        if not isinstance(body[name], str) or not SECRET_VALUE.fullmatch(body[name]):
            raise ValueError(f"the code host's answer has a {name} that is not 1-512 visible ASCII characters")
    if not isinstance(body["pem"], str) or not PEM.fullmatch(body["pem"]):
        raise ValueError("the code host's answer has a pem that is not a PEM block")
    label = body.get("slug") or body.get("name")
    if label is not None and (not isinstance(label, str) or not SLUG.fullmatch(label)):
        raise ValueError("the code host's answer has a slug that is not a plain name")
    return body


def _write_secret(path: Path, text: str, replace: bool = False) -> None:
    """Create `path` with mode 0640, group the directory's (root:boardready
    /etc/boardready makes it readable by the service's group and no one else).
    Never replace an existing file unless `replace`: then a new file is renamed
    over it, so a reader sees the old or the new one, never half of either."""
    target = path if not replace else path.with_name(f".{path.name}.{secrets.token_hex(4)}.new")
    descriptor = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
            handle.write(text)
        group = path.parent.stat().st_gid
        if group != os.getegid():
            os.chown(target, -1, group)
        os.chmod(target, 0o640)   # whatever the umask was
        if replace:
            os.replace(target, path)
    except BaseException:
        if replace:
            target.unlink(missing_ok=True)
        raise


def key_file_for(env_file: Path) -> Path:
    return env_file.with_name(env_file.name + ".private-key.pem")


def check_outputs(env_file: Path, force: bool = False) -> None:
    """Refuse (OSError) before anything is created on the code host when the
    files could not be written: a one-time code spent on an app whose
    credentials are then lost leaves an orphan the code host will not let you
    register again under the same name."""
    folder = env_file.parent
    if not folder.is_dir():
        raise FileNotFoundError(f"{folder} does not exist: create it first (docs/deploy.md, section 1)")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise PermissionError(f"{folder} is not writable by this user")
    for path in (env_file, key_file_for(env_file)):
        if path.exists() and not force:
            raise FileExistsError(f"{path} exists; not replacing secrets (--force replaces them)")


def write_env_file(env_file: Path, app: dict, public_url: str, api_url: str, web_url: str,
                   force: bool = False) -> Path:
    """The app's part of the service's environment; the key goes to a file beside
    it (an env file holds one line per variable, a PEM has many)."""
    key_file = key_file_for(env_file)
    check_outputs(env_file, force)
    _write_secret(key_file, app["pem"], replace=force)
    lines = [
        f"# The code host app {app.get('slug') or app.get('name')} (id {app['id']}), written by bin/register-app.",
        "# The marketplace secret is new: enter it as the webhook secret of the marketplace listing.",
        f"HOST_APP_ID={app['id']}",
        f"HOST_APP_PRIVATE_KEY_FILE={key_file.resolve()}",
        f"HOST_WEBHOOK_SECRET={app['webhook_secret']}",
        f"HOST_MARKETPLACE_WEBHOOK_SECRET={secrets.token_hex(32)}",
        f"HOST_OAUTH_CLIENT_ID={app['client_id']}",
        f"HOST_OAUTH_CLIENT_SECRET={app['client_secret']}",
        f"HOST_API_URL={api_url.rstrip('/')}",
        f"HOST_WEB_URL={web_url.rstrip('/')}",
        f"SERVICE_PUBLIC_URL={public_url.rstrip('/')}",
        "",
    ]
    _write_secret(env_file, "\n".join(lines), replace=force)
    return key_file


class ManifestFlow:
    """The local end of the manifest flow: a page that posts the manifest to the
    code host, and the redirect target that converts the code. `done` is set
    once the env file is written (or the flow failed: `error`)."""

    def __init__(self, public_url: str, env_file: Path, web_url: str, api_url: str, org: str | None,
                 name: str, port: int = 0, force: bool = False):
        self.public_url, self.env_file, self.web_url, self.api_url = public_url, env_file, web_url, api_url
        self.force = force
        self.org, self.name = org, name
        self.state = secrets.token_urlsafe(24)
        self.done = threading.Event()
        self.app: dict | None = None
        self.error: str | None = None
        flow = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):       # the query holds the one-time code
                pass

            def do_GET(self):
                flow.handle(self)

        self.server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, name="register-app", daemon=True)

    def start(self) -> ManifestFlow:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def handle(self, request: BaseHTTPRequestHandler) -> None:
        # Only to its own address: a page elsewhere cannot read the form (and its
        # state) through a name it points at 127.0.0.1 (DNS rebinding).
        port = self.server.server_address[1]
        if request.headers.get("Host") not in (f"127.0.0.1:{port}", f"localhost:{port}"):
            return self._answer(request, 421, "This tool answers only at " + html.escape(self.url))
        parts = urlsplit(request.path)
        if parts.path == "/":
            document = manifest(self.public_url, self.url + "/callback", self.name)
            page = (
                "<!doctype html><meta charset=utf-8><title>Register boardready</title>"
                f"<form method=post action=\"{html.escape(new_app_url(self.web_url, self.org))}"
                f"?state={quote(self.state)}\">"
                f"<input type=hidden name=manifest value=\"{html.escape(json.dumps(document))}\">"
                f"<input type=hidden name=state value=\"{html.escape(self.state)}\">"
                "<p>Registers the app with these permissions and events:</p>"
                f"<pre>{html.escape(json.dumps(document, indent=2))}</pre>"
                "<button type=submit>Create the app on the code host</button></form>")
            return self._answer(request, 200, page)
        if parts.path != "/callback":
            return self._answer(request, 404, "not found")
        query = parse_qs(parts.query)
        if query.get("state", [""])[0] != self.state or not query.get("code"):
            return self._answer(request, 400, "This is not the answer to the form this tool showed.")
        try:
            check_outputs(self.env_file, self.force)
            self.app = convert(self.api_url, query["code"][0])
            write_env_file(self.env_file, self.app, self.public_url, self.api_url, self.web_url, self.force)
        except (OSError, ValueError, urllib.error.URLError) as exc:
            self.error = f"{type(exc).__name__}: {exc}"
            self._answer(request, 502, "Registering failed: " + html.escape(self.error))
        else:
            self._answer(request, 200, f"App {html.escape(str(self.app['id']))} registered; "
                                       f"its settings are in {html.escape(str(self.env_file))}. You may close this tab.")
        self.done.set()

    @staticmethod
    def _answer(request: BaseHTTPRequestHandler, status: int, page: str) -> None:
        data = page.encode()
        request.send_response(status)
        request.send_header("Content-Type", "text/html; charset=utf-8")
        request.send_header("Content-Length", str(len(data)))
        request.send_header("Cache-Control", "no-store")
        request.end_headers()
        request.wfile.write(data)


def _resolve(path: str, cwd: str | None) -> Path:
    candidate = Path(path)
    return candidate if candidate.is_absolute() or not cwd else Path(cwd) / candidate


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bin/register-app", description=__doc__.split("\n\n")[0])
    parser.add_argument("--public-url", default=os.environ.get("SERVICE_PUBLIC_URL"),
                        help="where the code host and people reach the service (default: $SERVICE_PUBLIC_URL)")
    parser.add_argument("--org", help="register the app under this organization (default: your account)")
    parser.add_argument("--name", default="boardready", help="the app's name on the code host")
    parser.add_argument("--web-url", default=os.environ.get("HOST_WEB_URL", DEFAULT_WEB_URL))
    parser.add_argument("--api-url", default=os.environ.get("HOST_API_URL", DEFAULT_API_URL))
    parser.add_argument("--env-file", help="where to write the app's settings (mode 0640, group of its folder)")
    parser.add_argument("--force", action="store_true", help="replace an existing env file and key")
    parser.add_argument("--port", type=int, default=0, help="local port of the flow (default: any free one)")
    parser.add_argument("--print", action="store_true", help="print the manifest and exit")
    parser.add_argument("--code", help="convert this manifest code instead of serving the flow")
    parser.add_argument("--cwd", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if not args.public_url or urlsplit(args.public_url).scheme not in ("http", "https"):
        parser.error("--public-url (or SERVICE_PUBLIC_URL) must be the service's http(s) address")
    if args.print:
        redirect = f"http://127.0.0.1:{args.port or 8765}/callback"
        print(json.dumps(manifest(args.public_url, redirect, args.name), indent=2))
        return 0
    if not args.env_file:
        parser.error("--env-file is needed to keep the app's credentials")
    env_file = _resolve(args.env_file, args.cwd)
    try:
        check_outputs(env_file, args.force)
    except OSError as exc:
        print(f"register-app: {type(exc).__name__}: {exc}; nothing was created on the code host", file=sys.stderr)
        return 1
    if args.code:
        try:
            app = convert(args.api_url, args.code)
            write_env_file(env_file, app, args.public_url, args.api_url, args.web_url, args.force)
        except (OSError, ValueError, urllib.error.URLError) as exc:
            print(f"register-app: {type(exc).__name__}: {exc}", file=sys.stderr)
            return 1
        print(f"app {app['id']} registered; settings written to {env_file}")
        return 0
    flow = ManifestFlow(args.public_url, env_file, args.web_url, args.api_url, args.org, args.name, args.port,
                        args.force).start()
    print(f"Open {flow.url}/ in a browser signed in to the code host, and confirm.", flush=True)
    try:
        flow.done.wait()
    except KeyboardInterrupt:
        return 130
    finally:
        flow.stop()
    if flow.error:
        print(f"register-app: {flow.error}", file=sys.stderr)
        return 1
    print(f"app {flow.app['id']} registered; settings written to {env_file}")
    print("Next: install the app on the repositories to check, and add "
          ".github/workflows/readiness-runner.yml to each (docs/deploy.md).")
    return 0


if __name__ == "__main__":
    sys.exit(main())

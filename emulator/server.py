"""The emulator as a real HTTP server, and ``start()``, the entry point of its Python API.

A Falcon WSGI app with a single sink dispatches through the emulator's route
table (``emulator.routing``) so that every request, whatever its route, goes
through the same steps: match the operation, apply a fault switch, call the
handler, answer in the real API's shape, record the request in the log.

The server is wsgiref's, one thread per connection. It speaks HTTP/1.0 (one
request per connection), which every client handles. A fault can drop the
connection: the app marks the request, and the server's handler closes the
socket without writing a byte.
"""
from __future__ import annotations

import json
import secrets
import shutil
import socket
import socketserver
import sys
import tempfile
import threading
import time
import traceback
from pathlib import Path
from wsgiref.simple_server import ServerHandler, WSGIRequestHandler, WSGIServer

import falcon

from emulator import shapes, webhooks
from emulator.control import Controller, register_control_routes
from emulator.errors import HostError
from emulator.faults import FaultSwitches
from emulator.identity import IdentityRoutes
from emulator.manifests import ManifestRoutes
from emulator.oidc import OidcIssuer
from emulator.provider import GRAPHQL_PATH, TOKEN_PATH, ProviderRoutes
from emulator.request_log import RequestLog, loggable_body, redact_headers
from emulator.rest import register_rest_routes
from emulator.routing import Reply, RequestContext, Router
from emulator.runs import RunEngine
from emulator.state import State

DROP_FLAG = "emulator.drop_connection"
MAX_REQUEST_BODY = 32 * 1024 * 1024


class _Handler(ServerHandler):
    """Honours the drop flag: close the connection without a response."""

    def finish_response(self):
        if self.environ.get(DROP_FLAG):
            sock = self.environ.get("emulator.socket")
            if sock is not None:
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
            self.close()
            return
        super().finish_response()

    def log_exception(self, exc_info):
        if not self.environ.get(DROP_FLAG):
            super().log_exception(exc_info)


class _RequestHandler(WSGIRequestHandler):
    quiet = True

    def handle(self):
        # wsgiref's handle(), with our ServerHandler and the socket in the environ.
        self.raw_requestline = self.rfile.readline(65537)
        if len(self.raw_requestline) > 65536:
            self.send_error(414)
            return
        if not self.parse_request():
            return
        environ = self.get_environ()
        environ["emulator.socket"] = self.connection
        handler = _Handler(self.rfile, self.wfile, self.get_stderr(), environ, multithread=True)
        handler.request_handler = self
        handler.run(self.server.get_app())

    def log_message(self, format, *args):
        # Quiet by default: paths can carry OAuth codes. --verbose prints method, path and status.
        if not self.quiet:
            sys.stderr.write(f"emulator: {(format % args).split('?', 1)[0]}\n")


class _ThreadingServer(socketserver.ThreadingMixIn, WSGIServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128


class Emulator(Controller):
    """A running emulator: ``.url``, ``.stop()``, and every Controller operation."""

    def __init__(self, port: int = 0, host: str = "127.0.0.1", state_dir: str | Path | None = None, verbose: bool = False):
        self._stopping = threading.Event()
        self._own_state_dir = state_dir is None
        self.state_dir = Path(state_dir) if state_dir else Path(tempfile.mkdtemp(prefix="emulator-"))
        self.state_dir.mkdir(parents=True, exist_ok=True)
        self.url = ""
        state = State()
        issuer = OidcIssuer(lambda: self.url)
        engine = RunEngine(state, lambda: self.url, self.state_dir, self._stopping)
        super().__init__(state, engine, issuer, FaultSwitches(), RequestLog(), webhooks.WebhookSender(), lambda: self.url)
        self.router = Router()
        register_control_routes(self.router, self)
        register_rest_routes(self.router, state, engine)
        self.router.add_declared(IdentityRoutes(state, issuer))
        self.provider = ProviderRoutes()   # the component provider's stand-in (emulator/provider.py)
        self.router.add_declared(ManifestRoutes(self))   # registering an app from a manifest
        self.router.add_declared(self.provider)
        app = falcon.App(media_type=falcon.MEDIA_JSON)
        app.req_options.strip_url_path_trailing_slash = True
        app.add_sink(self._dispatch, prefix="/")
        handler = type("Handler", (_RequestHandler,), {"quiet": not verbose})
        self._server = _ThreadingServer((host, port), handler)
        self._server.set_app(app)
        self.url = f"http://{host}:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.1},
                                        name="emulator-http", daemon=True)
        self._thread.start()

    @property
    def provider_url(self) -> str:
        return self.url + GRAPHQL_PATH

    @property
    def provider_token_url(self) -> str:
        return self.url + TOKEN_PATH

    @property
    def port(self) -> int:
        return self._server.server_address[1]

    def stop(self) -> None:
        """Stop serving, end runs in progress, remove the temporary state folder."""
        if self._stopping.is_set():
            return
        self._stopping.set()
        self._server.shutdown()
        self._server.server_close()
        self.engine.shutdown()
        if self._own_state_dir:
            shutil.rmtree(self.state_dir, ignore_errors=True)

    def __enter__(self) -> Emulator:
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    # ---- one request -----------------------------------------------------------------------

    def _dispatch(self, req: falcon.Request, resp: falcon.Response, **_):
        started = time.monotonic()
        raw = req.bounded_stream.read(MAX_REQUEST_BODY) if (req.content_length or 0) > 0 else b""
        headers = {name.lower(): value for name, value in req.headers.items()}
        path = req.path or "/"
        matched = self.router.match(req.method, path)
        route, params = matched if matched else (None, {})
        operation_id = route.operation_id if route else None
        control = bool(route and route.control) or self.router.is_control_path(path)
        entry = None
        if not control:
            entry = self.log.record(
                method=req.method, path=path, query=req.query_string or "", headers=redact_headers(headers),
                body=loggable_body(raw, req.content_type), operation_id=operation_id, status=None, fault_id=None,
            )
        fault = None if control else self.fault_switches.take(req.method, path, operation_id)
        reply: Reply | None = None
        if fault is not None:
            if fault.delay_ms and self._stopping.wait(fault.delay_ms / 1000.0):
                fault = None  # shutting down: just answer
            if fault is not None and fault.after:
                self._call(route, params, req, path, headers, raw)  # the host acts; its answer is lost or replaced
            if fault is not None and fault.drop:
                req.env[DROP_FLAG] = True
                self.log.update(entry, status=None, dropped=True, fault_id=fault.id,
                                duration_ms=round((time.monotonic() - started) * 1000, 1))
                return
            if fault is not None and fault.status:
                body = fault.body if fault.body is not None else shapes.error(fault.status, "Emulated fault")
                reply = Reply(fault.status, None if fault.status == 204 else body, dict(fault.headers))
        if reply is None:
            reply = self._call(route, params, req, path, headers, raw)
        self._write(resp, reply, control)
        if entry is not None:
            self.log.update(entry, status=reply.status, fault_id=fault.id if fault else None,
                            duration_ms=round((time.monotonic() - started) * 1000, 1))

    def _call(self, route, params, req, path, headers, raw) -> Reply:
        if route is None:
            return Reply(404, shapes.error(404, "Not Found"))
        ctx = RequestContext(method=req.method, path=path, query=_query_lists(req), headers=headers,
                             raw_body=raw, params=params, base_url=self.url)
        try:
            return route.handler(ctx)
        except HostError as exc:
            return Reply(exc.status, shapes.error(exc.status, exc.message, exc.errors), dict(exc.headers))
        except Exception:
            traceback.print_exc()
            return Reply(500, shapes.error(500, "Server Error"))

    def _write(self, resp: falcon.Response, reply: Reply, control: bool) -> None:
        resp.status = reply.status
        if not control:
            # Every real API answer carries rate-limit headers; clients read them.
            resp.set_header("X-RateLimit-Limit", "5000")
            resp.set_header("X-RateLimit-Remaining", "4999")
            resp.set_header("X-RateLimit-Used", "1")
            resp.set_header("X-RateLimit-Reset", str(int(time.time()) + 3600))
            resp.set_header("X-RateLimit-Resource", "core")
            resp.set_header("X-GitHub-Request-Id", secrets.token_hex(8).upper())
        content_type = reply.content_type
        for name, value in reply.headers.items():
            if name.lower() == "content-type":
                content_type = value
            else:
                resp.set_header(name, str(value))
        if reply.status in (204, 304) or reply.body is None:
            resp.data = b""
            if reply.status not in (204, 304):
                resp.content_type = content_type
            return
        if isinstance(reply.body, (bytes, bytearray)):
            resp.data = bytes(reply.body)
        elif isinstance(reply.body, str) and "json" not in content_type:
            resp.data = reply.body.encode()
        else:
            resp.data = json.dumps(reply.body).encode()
        resp.content_type = content_type


def _query_lists(req: falcon.Request) -> dict:
    from urllib.parse import parse_qs

    return parse_qs(req.query_string or "", keep_blank_values=True)


def start(port: int = 0, state_dir: str | Path | None = None, webhook_url: str | None = None,
          webhook_secret: str | None = None, marketplace_webhook_url: str | None = None,
          marketplace_webhook_secret: str | None = None, runner_command: str | list | None = None,
          runner_env: dict | None = None, run_mode: str | None = None, verbose: bool = False,
          host: str = "127.0.0.1") -> Emulator:
    """Start an emulator on 127.0.0.1 (``port=0``: a free port). Returns the running handle.

    ``runner_command`` makes ``execute`` the default run mode of new repositories
    (unless ``run_mode`` says otherwise); without it the default is ``manual``.
    """
    emulator = Emulator(port=port, host=host, state_dir=state_dir, verbose=verbose)
    emulator.configure_webhooks(webhook_url, webhook_secret, marketplace_webhook_url, marketplace_webhook_secret)
    mode = run_mode or ("execute" if runner_command else "manual")
    emulator.set_run_mode(None, mode=mode, runner_command=runner_command, runner_env=runner_env)
    return emulator

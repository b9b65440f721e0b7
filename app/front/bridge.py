"""An ASGI application that runs a WSGI application once its request is whole.

The body is buffered on the event loop, at most the route's cap (413 above it,
from Content-Length before reading or while reading a chunked body); only then
does a thread of a bounded pool run the WSGI application, with the body in
memory. A client that stops sending costs no thread: the protocol's read
deadline (app/front/protocol.py) answers it 408 and the application is never
called.

On routes whose credentials travel in headers (`authenticates_before_body`),
a request that carries a body is first run without it, to authenticate
(app/front/header_phase.py): a refused caller gets its answer before a byte of
the body is buffered, and an accepted one is asked for the body only then.

After a 413, or a refusal in the header phase, the connection stays open and
the rest of the body is read and dropped (within the same deadline), so the
client reads the answer instead of a connection reset.
"""
from __future__ import annotations

import asyncio
import io
import sys
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from app.front.header_phase import HEADER_PHASE, HEADERS_ACCEPTED
from app.front.responses import HARDENING_HEADERS, json_refusal
from app.jsonlog import log

DEFAULT_MAX_BODY_BYTES = 8 * 1024 * 1024


def _status_code(status: str) -> int:
    return int(status.split(" ", 1)[0])


class BufferedWsgi:
    """`max_body_bytes(path)` gives a route's cap, `authenticates_before_body(path)`
    whether the route's requests are authenticated before their body is read
    (app/front/header_phase.py). A WSGI application may carry its own as
    attributes of those names; else every route gets the default cap and no
    header phase (an application must know the header phase to take part)."""

    def __init__(self, wsgi_app, *, threads: int, max_body_bytes: Callable[[str], int] | None = None,
                 authenticates_before_body: Callable[[str], bool] | None = None):
        self.wsgi_app = wsgi_app
        self.max_body_bytes = max_body_bytes or getattr(wsgi_app, "max_body_bytes", None) or (
            lambda path: DEFAULT_MAX_BODY_BYTES)
        self.authenticates_before_body = authenticates_before_body or getattr(
            wsgi_app, "authenticates_before_body", None) or (lambda path: False)
        self.executor = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="wsgi")

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            return  # lifespan is off; websockets are not served
        limit = self.max_body_bytes(scope["path"])
        declared = _declared_length(scope)
        if declared is not None and declared > limit:
            return await _refuse(send, 413, "payload_too_large", f"body above {limit} bytes")
        loop = asyncio.get_running_loop()
        accepted = {}
        if _carries_body(scope, declared) and self.authenticates_before_body(scope["path"]):
            # The headers are whole and the body not yet asked for: the thread
            # runs for as long as the authentication takes, never at the client's pace.
            environ = _environ(scope, None, declared)
            environ[HEADER_PHASE] = True
            answer = await loop.run_in_executor(self.executor, self._run, environ)
            if HEADERS_ACCEPTED not in environ:
                return await _send(send, *answer)  # refused on its headers: the body is never read
            accepted[HEADERS_ACCEPTED] = environ[HEADERS_ACCEPTED]
        chunks, total = [], 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return  # gone, or cut off at the read deadline: the application never runs
            chunk = message.get("body", b"")
            total += len(chunk)
            if total > limit:
                return await _refuse(send, 413, "payload_too_large", f"body above {limit} bytes")
            if chunk:
                chunks.append(chunk)
            if not message.get("more_body", False):
                break
        environ = _environ(scope, b"".join(chunks))
        environ.update(accepted)
        await _send(send, *await loop.run_in_executor(self.executor, self._run, environ))

    def _run(self, environ: dict) -> tuple[int, list, bytes]:
        started: dict = {}

        def start_response(status, headers, exc_info=None):
            started["status"], started["headers"] = status, headers
            return lambda data: None  # the legacy write() callable; Falcon never uses it

        try:
            result = self.wsgi_app(environ, start_response)
            try:
                body = b"".join(result)
            finally:
                if hasattr(result, "close"):
                    result.close()
            headers = [(name.lower().encode("latin-1"), value.encode("latin-1"))
                       for name, value in started["headers"] if name.lower() != "content-length"]
            headers.append((b"content-length", str(len(body)).encode()))
            return _status_code(started["status"]), headers, body
        except Exception as exc:  # the application failed outside its own error handling
            log("front.application_error", level="error", path=environ.get("PATH_INFO"), errorClass=type(exc).__name__)
            body = json_refusal("internal_error", "internal error")
            return 500, HARDENING_HEADERS + [(b"content-type", b"application/json"),
                                             (b"content-length", str(len(body)).encode())], body


async def _send(send, status: int, headers: list, body: bytes) -> None:
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def _refuse(send, status: int, code: str, message: str) -> None:
    body = json_refusal(code, message)
    await _send(send, status, HARDENING_HEADERS + [
        (b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())], body)


def _declared_length(scope) -> int | None:
    for name, value in scope["headers"]:
        if name == b"content-length":
            return int(value) if value.isdigit() else None  # the parser refuses malformed lengths before this
    return None


def _carries_body(scope, declared: int | None) -> bool:
    """A request without Content-Length or Transfer-Encoding has no body (HTTP/1.1)."""
    if declared is not None:
        return declared > 0
    return any(name == b"transfer-encoding" for name, _ in scope["headers"])


class _BodyNotRead:
    """The header phase's wsgi.input (app/front/header_phase.py)."""

    def _refuse(self, *args, **kwargs):
        raise RuntimeError("the body is not read in the header phase: a check that needs it belongs to the body phase")

    read = readline = readlines = __iter__ = _refuse


def _environ(scope, body: bytes | None, declared: int | None = None) -> dict:
    """The WSGI environ of a request whose whole body is `body`, or, with
    body None, of its header phase (the declared length, a body not read)."""
    server = scope.get("server") or ("localhost", 80)
    client = scope.get("client") or ("", 0)
    environ = {
        "REQUEST_METHOD": scope["method"],
        "SCRIPT_NAME": "",
        # WSGI carries the decoded path as latin-1 code points of its UTF-8 bytes.
        "PATH_INFO": scope["path"].encode("utf-8").decode("latin-1"),
        "QUERY_STRING": scope["query_string"].decode("latin-1"),
        "SERVER_NAME": str(server[0]),
        "SERVER_PORT": str(server[1]),
        "SERVER_PROTOCOL": f"HTTP/{scope['http_version']}",
        "REMOTE_ADDR": client[0],
        "REMOTE_PORT": str(client[1]),
        "wsgi.version": (1, 0),
        "wsgi.url_scheme": scope.get("scheme", "http"),
        "wsgi.input": io.BytesIO(body) if body is not None else _BodyNotRead(),
        "wsgi.errors": sys.stderr,
        "wsgi.multithread": True,
        "wsgi.multiprocess": True,
        "wsgi.run_once": False,
    }
    if body is not None:
        environ["CONTENT_LENGTH"] = str(len(body))
    elif declared is not None:
        environ["CONTENT_LENGTH"] = str(declared)
    for raw_name, raw_value in scope["headers"]:
        name = raw_name.decode("latin-1")
        if "_" in name:
            # X_Forwarded_For would become HTTP_X_FORWARDED_FOR like the real
            # header: dropped, as gunicorn does, so no header can pose as another.
            continue
        if name in ("content-length", "transfer-encoding"):
            continue  # the body is whole (or not read yet): its length is CONTENT_LENGTH above
        value = raw_value.decode("latin-1")
        key = "CONTENT_TYPE" if name == "content-type" else "HTTP_" + name.upper().replace("-", "_")
        environ[key] = f"{environ[key]},{value}" if key in environ else value
    return environ

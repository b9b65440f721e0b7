"""Reading request bodies: one content type, a cap per route, authentication
before the body, and one parser that turns every body the database could not
store into a 400.

The cap of each route is what its contract can need (`max_body_bytes`); the
front (app/front/bridge.py) applies it before a thread runs, and `read_bounded`
again here so that the application is safe under any server.

Where a route's credentials travel in headers and its cap is large
(`authenticates_before_body`), the front runs the application's
authentication before it reads the body (app/front/header_phase.py;
`AuthenticateBeforeBody` is the application's side): a caller that is
refused never gets a byte of its body buffered. The webhooks are not among
them: their credential is an HMAC over the body. Routes capped at
SMALL_MAX_BYTES are not either: 16 KiB is less than the 64 KiB of headers any
client may send before a credential is looked at, so checking first would
bound nothing and cost a second pass.

`parse_json_object` is the one way a JSON body becomes a dict: strict JSON
(orjson: no NaN or Infinity, no byte order mark, no invalid UTF-8: 400
`malformed_json`), then one
pass over the tree that refuses what PostgreSQL or the canonical digest would
choke on later, deep inside a transaction: nesting past `max_depth` (400
`too_deep`), NUL or an unpaired surrogate in any key or string (400
`invalid_text`), numbers outside the interoperable integer range ±(2^53 - 1)
of RFC 7493 (400 `number_out_of_range`). A field's own range (a column's
type) is its reader's check (app/payload.py).
"""
from __future__ import annotations

import orjson

from app.config import WEBHOOK_MAX_BODY_BYTES
from app.front.header_phase import HEADER_PHASE, HEADERS_ACCEPTED
from app.payload import SAFE_INTEGER
from app.web.errors import ApiError

READ_CHUNK = 64 * 1024
MAX_DEPTH = 64
PARSER_MAX_DEPTH = 1024  # orjson's own limit: past it, it refuses the document

RESULT_MAX_BYTES = 8 * 1024 * 1024   # 10000 findings of a few hundred bytes each
SMALL_MAX_BYTES = 16 * 1024          # token requests, settings; routes without a body
IN_BODY, IN_HEADERS = "body", "headers"   # where a route's credential travels
# (path prefix, cap, credential). The first match wins; a route that is not
# listed takes no more than SMALL_MAX_BYTES, read before authentication.
ROUTE_BODIES = (
    ("/api/host/webhook", WEBHOOK_MAX_BODY_BYTES, IN_BODY),              # HMAC over the body
    ("/api/host/marketplace/webhook", WEBHOOK_MAX_BODY_BYTES, IN_BODY),
    # Bearer token (ingest, release result) or OIDC ID token (callback, report).
    ("/api/v1/runs", RESULT_MAX_BYTES, IN_HEADERS),
)


def _route(path: str) -> tuple[int, str] | None:
    for prefix, limit, credential in ROUTE_BODIES:
        if path == prefix or path.startswith(prefix + "/"):
            return limit, credential
    return None


def max_body_bytes(path: str) -> int:
    route = _route(path)
    return route[0] if route else SMALL_MAX_BYTES


def authenticates_before_body(path: str) -> bool:
    """Whether the front authenticates this route's requests before reading their body."""
    route = _route(path)
    return route is not None and route[1] == IN_HEADERS


class AuthenticateBeforeBody:
    """Falcon middleware, after BearerAuth: the application's side of the
    front's header phase (app/front/header_phase.py).

    A resource that authenticates its callers itself (`auth = "oidc"`) says
    how in `before_body(req)`: the checks that need only the headers, in the
    order the route answers them, returning the caller's identity. This
    middleware runs it for the methods the resource serves and puts the
    identity in `req.context.auth`, under any server, so that its responders
    find the caller where BearerAuth puts a bearer token's.

    In the header phase, once the caller is accepted (by BearerAuth or
    `before_body`), it hands the identity to the front and stops the request:
    no responder runs. In the body phase it puts that identity back before
    BearerAuth looks, so a token is looked up, and a failure counted and
    logged, once per request.
    """

    def process_request(self, req, resp):
        accepted = req.env.get(HEADERS_ACCEPTED)
        if accepted is not None:
            req.context.auth = accepted

    def process_resource(self, req, resp, resource, params):
        if resource is None:
            return
        check = getattr(resource, "before_body", None)
        serves = hasattr(resource, "on_" + req.method.lower())
        if check is not None and serves and getattr(req.context, "auth", None) is None:
            req.context.auth = check(req)
        if req.env.get(HEADER_PHASE):
            req.env[HEADERS_ACCEPTED] = getattr(req.context, "auth", None)
            resp.complete = True   # the front drops this answer and reads the body


def require_json_content_type(req) -> None:
    """application/json, with no parameter but an optional charset=utf-8 (415 otherwise)."""
    media_type, _, parameters = (req.content_type or "").partition(";")
    if media_type.strip().lower() != "application/json":
        raise ApiError(415, "invalid_content_type", "Content-Type must be application/json")
    for parameter in parameters.split(";"):
        name, _, value = parameter.partition("=")
        if not parameter.strip():
            continue
        if name.strip().lower() != "charset" or value.strip().strip('"').lower() not in ("utf-8", "utf8"):
            raise ApiError(415, "invalid_content_type", "the only Content-Type parameter accepted is charset=utf-8")


def read_bounded(req, limit: int) -> bytes:
    """The raw body; 413 past `limit`, judged from Content-Length before reading
    and enforced while reading (chunked bodies, a lying Content-Length): never
    more than limit + 1 bytes in memory."""
    declared = req.content_length
    if declared is not None:
        if declared > limit:
            raise ApiError(413, "payload_too_large", f"body above {limit} bytes")
        # Falcon's bounded stream ends at Content-Length: one read, at most `limit` bytes.
        return req.bounded_stream.read()
    # Without Content-Length (chunked transfer under a server that streams),
    # Falcon's bounded stream reads nothing; the raw input stream ends cleanly.
    stream = req.stream
    chunks, total = [], 0
    while True:
        chunk = stream.read(min(READ_CHUNK, limit + 1 - total))
        if not chunk:
            break
        chunks.append(chunk)
        total += len(chunk)
        if total > limit:
            raise ApiError(413, "payload_too_large", f"body above {limit} bytes")
    return b"".join(chunks)


def parse_json_object(raw: bytes, *, max_depth: int = MAX_DEPTH) -> dict:
    """The body as a dict, or a 400 with a stable code (see the module's docstring)."""
    body = parse_strict_json_object(raw)
    # orjson refuses raw control characters: a NUL can only come from the
    # escape \u0000, so without one in the bytes no string needs a look.
    _check_tree(body, max_depth, check_text=b"\\u0000" in raw)
    return body


def parse_strict_json_object(raw: bytes) -> dict:
    """Strict JSON that is an object, without parse_json_object's pass over
    the tree: for a body of which only a few fields are kept, each checked as
    it is read (the lifecycle webhook's field readers, app/payload.py).
    Nesting past PARSER_MAX_DEPTH is still `too_deep`."""
    try:
        body = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        reason = str(exc)
        if "surrogate" in reason and "UTF-8" not in reason:  # an escaped \ud800 without its pair
            raise ApiError(400, "invalid_text", "text must not contain unpaired surrogates") from None
        if "depth" in reason or "recursion" in reason:
            raise ApiError(400, "too_deep", f"JSON nested deeper than {PARSER_MAX_DEPTH} levels") from None
        raise ApiError(400, "malformed_json", "body is not valid JSON") from None
    if not isinstance(body, dict):
        raise ApiError(400, "malformed_json", "body must be a JSON object")
    return body


def _refuse_text() -> ApiError:
    return ApiError(400, "invalid_text", "text must not contain NUL characters")


def _check_tree(root: dict, max_depth: int, check_text: bool) -> None:
    """Depth, numbers and (when the bytes hold an escaped NUL) text, in one
    iterative pass: a deep document never reaches Python's recursion limit,
    and this pass is on the intake hot path, so it looks at types only."""
    stack = [(root, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > max_depth:
            raise ApiError(400, "too_deep", f"JSON nested deeper than {max_depth} levels")
        pairs = node.items() if type(node) is dict else zip((None,) * len(node), node)
        for key, value in pairs:
            kind = type(value)
            if kind is dict or kind is list:
                stack.append((value, depth + 1))
            elif (kind is int or kind is float) and (value > SAFE_INTEGER or value < -SAFE_INTEGER):
                # orjson reads integers past 64 bits as floats: both are refused.
                raise ApiError(400, "number_out_of_range", f"numbers must be within ±{SAFE_INTEGER}")
            elif check_text and kind is str and "\x00" in value:
                raise _refuse_text()
            if check_text and key is not None and "\x00" in key:
                raise _refuse_text()


def read_json_object(req, limit: int, **parse_options) -> dict:
    require_json_content_type(req)
    return parse_json_object(read_bounded(req, limit), **parse_options)

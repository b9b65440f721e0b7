"""Authentication before the body: what the front and the application agree on.

For a request that carries a body, on a route where the application's
`authenticates_before_body(path)` is true, the bridge (app/front/bridge.py)
runs the application twice, each time on a thread of its pool:

1. The header phase. The environ has HEADER_PHASE set, the request's headers
   and declared CONTENT_LENGTH, and no body: `wsgi.input` refuses to be read
   (a check that needs the body does not belong in this phase, and a loud 500
   is better than an answer judged on an empty body). The application runs
   what needs only the headers (its authentication, and the checks that come
   before it) and either answers, which is the final answer, the body never
   read, or accepts the headers by setting environ[HEADERS_ACCEPTED] to what
   it established (the caller's identity); its answer is then dropped.
2. The body phase. Only now does the bridge read the body, up to the route's
   cap (until then the client was not sent `100 Continue`, and what it sent
   unasked is held to the protocol's flow-control window), and it runs the
   application with the body and environ[HEADERS_ACCEPTED] as accepted, so that
   nothing is verified, looked up or counted twice.

No client can set these keys: request headers become HTTP_* keys, and the
bridge drops any header whose name would pose as another.
"""
from __future__ import annotations

HEADER_PHASE = "boardready.header_phase"
HEADERS_ACCEPTED = "boardready.headers_accepted"

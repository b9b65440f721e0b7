"""Falcon middleware for the habits of a hardened API.

- The configuration and the trusted proxies go into `req.context`, from which the client key
  (app/web/client_address.py) is computed the first time a limiter or a
  refusal's log line asks for it (`auth_throttle.client_key`): parsing the
  addresses cost every request, the webhook intake among them, which never
  needs the key, some 15 us of CPU.
- Every answer says `X-Content-Type-Options: nosniff`, and `Cache-Control:
  no-store` unless the route chose its own caching (the OpenAPI document):
  answers carry tenant data, token values or refusals, none of which a cache
  should keep.
- 401, 403 and 429 answers are logged as `api.access_refused` with the reason
  code, the route template, the method and a hash of the client key; never the
  credential, the address or the body.
"""
from __future__ import annotations

from app.jsonlog import log
from app.web import auth_throttle
from app.web.client_address import key_hash

REFUSALS_LOGGED = (401, 403, 429)


class Hardening:
    def __init__(self, config):
        self.config = config
        self.trusted_proxies = config.trusted_proxies

    def process_request(self, req, resp):
        req.context.trusted_proxies = self.trusted_proxies
        req.context.config = self.config  # the cursor key (app/web/keyset.py)

    def process_response(self, req, resp, resource, req_succeeded):
        resp.set_header("X-Content-Type-Options", "nosniff")
        if resp.get_header("Cache-Control") is None:
            resp.set_header("Cache-Control", "no-store")
        status = resp.status_code
        if status in REFUSALS_LOGGED:
            media = resp.media if isinstance(resp.media, dict) else {}
            log("api.access_refused", level="warning", status=status, code=media.get("code"),
                route=req.uri_template or req.path[:100], method=req.method,
                clientKeyHash=key_hash(auth_throttle.client_key(req)))

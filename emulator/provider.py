"""A stand-in for the component provider: the Nexar (Octopart) supply API.

Two routes with the real request and response shapes:

* ``POST /provider/connect/token``: OAuth2 client credentials (form-encoded
  ``grant_type=client_credentials``, ``client_id``, ``client_secret``,
  ``scope``) -> ``{access_token, expires_in, token_type}``; wrong credentials
  are 400 ``{"error": "invalid_client"}``.
* ``POST /provider/graphql``: ``{query, variables: {queries: [{reference, mpn,
  manufacturer?, limit?}]}}`` with ``Authorization: Bearer``; the query must
  use ``supMultiMatch``. Answers ``{"data": {"supMultiMatch": [{reference,
  hits, parts: [{id, mpn, manufacturer{name}, specs[{attribute{shortname},
  displayValue}], sellers[{company{name}, isAuthorized, offers[{inventoryLevel,
  prices[{quantity, price, currency}]}]}]}]}]}}``. A missing or unknown token
  is 401; a body that is not such a query is 400 with GraphQL ``errors``.

The catalogue below is a handful of real part numbers with made-up supply
data covering every case the service tells apart: active, NRND, EOL and
obsolete parts; authorized and marketplace sellers; price breaks in several
currencies; a part with no sellers; a seller without an authorization signal.
``add_part`` adds more. Faults (5xx, hangs, 429 with Retry-After, malformed
bodies) use the emulator's fault switches with operationId
``provider/graphql`` or ``provider/token``.
"""
from __future__ import annotations

import json
import secrets
import threading
from urllib.parse import parse_qs

from emulator.routing import Reply, RequestContext, route

CLIENT_ID = "emulator-supply-client"
CLIENT_SECRET = "emulator-supply-secret-0123456789"
TOKEN_PATH = "/provider/connect/token"
GRAPHQL_PATH = "/provider/graphql"


def _prices(*points):
    return [{"quantity": q, "price": p, "currency": c} for q, p, c in points]


def _seller(name, authorized, stock, prices):
    seller = {"company": {"name": name}, "offers": [{"inventoryLevel": stock, "prices": prices}]}
    if authorized is not None:
        seller["isAuthorized"] = authorized
    return seller


def default_catalogue() -> dict[str, dict]:
    parts = [
        ("1001", "RC0603FR-07330RL", "YAGEO", "Production (Last Updated: 2 months ago)", [
            _seller("Digi-Key", True, 512000, _prices((1, 0.10, "USD"), (100, 0.012, "USD"), (5000, 0.0021, "USD"))),
            _seller("Mouser", True, 230000, _prices((1, 0.09, "EUR"), (100, 0.011, "EUR"))),
            _seller("Broker Hub", False, 90000, _prices((1, 0.05, "USD")))]),
        ("1002", "NE555P", "Texas Instruments", "Production (Last Updated: 1 month ago)", [
            _seller("Mouser", True, 48000, _prices((1, 0.45, "USD"), (25, 0.38, "USD"), (100, 0.31, "GBP")))]),
        ("1003", "SN74LS00N", "Texas Instruments", "Obsolete (Last Updated: 3 years ago)", [
            _seller("Surplus Parts Market", False, 1200, _prices((1, 1.80, "USD"), (50, 1.20, "USD")))]),
        ("1004", "ATMEGA8-16PU", "Microchip", "NRND (Last Updated: 1 year ago)", [
            _seller("Farnell", True, 300, _prices((1, 3.10, "GBP"), (10, 2.85, "GBP")))]),
        ("1005", "LM2611BMF/NOPB", "Texas Instruments", "EOL (Last Updated: 5 months ago)", [
            _seller("Digi-Key", True, 0, _prices((1, 2.40, "USD")))]),
        ("1006", "APHB1608SGEC", "Kingbright", "Production (Last Updated: 4 months ago)", []),
        ("1007", "GRM188R61A226ME15D", "Murata", "Production (Last Updated: 3 weeks ago)", [
            _seller("Component Exchange", None, 40000, _prices((10, 0.04, "USD")))]),
        ("1008", "B2B-PH-K-S(LF)(SN)", "JST", "Production (Last Updated: 6 months ago)", [
            _seller("Digi-Key", True, 0, _prices((1, 0.17, "USD"))),
            _seller("Parts Bazaar", False, 7000, _prices((1, 0.09, "USD")))]),
    ]
    return {_normal(mpn): {"id": pid, "mpn": mpn, "manufacturer": {"name": maker},
                           "specs": [{"attribute": {"shortname": "lifecyclestatus"}, "displayValue": status}],
                           "sellers": sellers}
            for pid, mpn, maker, status, sellers in parts}


def _normal(mpn: str) -> str:
    return "".join(mpn.split()).upper()


def _graphql_error(status: int, message: str) -> Reply:
    return Reply(status, {"errors": [{"message": message}]})


class ProviderRoutes:
    def __init__(self):
        self._lock = threading.Lock()
        self.catalogue = default_catalogue()
        self._tokens: set[str] = set()

    def add_part(self, mpn: str, manufacturer: str, lifecycle: str, sellers: list, part_id: str | None = None) -> None:
        with self._lock:
            self.catalogue[_normal(mpn)] = {
                "id": part_id or str(2000 + len(self.catalogue)), "mpn": mpn, "manufacturer": {"name": manufacturer},
                "specs": [{"attribute": {"shortname": "lifecyclestatus"}, "displayValue": lifecycle}],
                "sellers": sellers}

    def reset(self) -> None:
        with self._lock:
            self.catalogue = default_catalogue()
            self._tokens.clear()

    @route("POST", TOKEN_PATH, "provider/token")
    def token(self, ctx: RequestContext) -> Reply:
        form = {k: v[-1] for k, v in parse_qs(ctx.raw_body.decode("utf-8", "replace")).items()}
        if form.get("grant_type") != "client_credentials":
            return Reply(400, {"error": "unsupported_grant_type"})
        if form.get("client_id") != CLIENT_ID or form.get("client_secret") != CLIENT_SECRET:
            return Reply(400, {"error": "invalid_client"})
        value = "nxr_" + secrets.token_urlsafe(24)
        with self._lock:
            self._tokens.add(value)
        return Reply(200, {"access_token": value, "expires_in": 86400, "token_type": "Bearer",
                           "scope": form.get("scope", "supply.domain")})

    @route("POST", GRAPHQL_PATH, "provider/graphql")
    def graphql(self, ctx: RequestContext) -> Reply:
        auth = ctx.header("authorization") or ""
        with self._lock:
            known = auth.startswith("Bearer ") and auth[7:] in self._tokens
        if not known:
            return _graphql_error(401, "The authorization token is missing or invalid")
        try:
            body = json.loads(ctx.raw_body or b"null")
        except ValueError:
            return _graphql_error(400, "Invalid JSON body")
        queries = ((body or {}).get("variables") or {}).get("queries") if isinstance(body, dict) else None
        if not isinstance(body, dict) or "supMultiMatch" not in str(body.get("query", "")) \
                or not isinstance(queries, list) or not all(isinstance(q, dict) and isinstance(q.get("mpn"), str)
                                                            for q in queries):
            return _graphql_error(400, "Expected a supMultiMatch query with variables.queries [{reference, mpn}]")
        results = []
        with self._lock:
            for query in queries:
                part = self.catalogue.get(_normal(query["mpn"]))
                results.append({"reference": query.get("reference"), "hits": 1 if part else 0,
                                "parts": [json.loads(json.dumps(part))] if part else []})
        return Reply(200, {"data": {"supMultiMatch": results}})

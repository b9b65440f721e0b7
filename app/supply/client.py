"""The component provider client: the Nexar (Octopart) supply GraphQL API.

OAuth2 client credentials (`grant_type=client_credentials`, scope
`supply.domain`) give a bearer token, cached until shortly before it expires.
Parts are looked up many at a time with `supMultiMatch`, one match query per
MPN (with its manufacturer when the BOM names one), as the field's tools
batch them. Every failure is a ProviderError with a stable `reason` (the
worker counts each one against the circuit breaker): unreachable, timeout,
status_5xx, rate_limited (with Retry-After), refused (4xx), malformed (not
the documented shape, GraphQL errors included). Nothing secret is logged.
"""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass

import httpx

from app.config import Secret

MAX_PARTS_PER_CALL = 20   # match queries per request
TOKEN_SCOPE = "supply.domain"

# Field names from the provider's published schema (SupPart, SupPartSeller, SupOffer, SupPricePoint).
MULTI_MATCH_QUERY = """
query SupplyMultiMatch($queries: [SupPartMatchQuery!]!) {
  supMultiMatch(queries: $queries) {
    reference
    hits
    parts {
      id
      mpn
      manufacturer { name }
      specs { attribute { shortname } displayValue }
      sellers(authorizedOnly: false) {
        company { name }
        isAuthorized
        offers { inventoryLevel prices { quantity price currency } }
      }
    }
  }
}
""".strip()


class ProviderError(Exception):
    def __init__(self, reason: str, message: str, retry_after_ms: int | None = None):
        super().__init__(message)
        self.reason = reason
        self.retry_after_ms = retry_after_ms


@dataclass(frozen=True)
class PartQuery:
    part_key: str
    manufacturer: str | None
    mpn: str


class ProviderClient:
    def __init__(self, settings, transport: httpx.BaseTransport | None = None):
        timeout = settings.timeout_ms / 1000
        self.settings = settings
        self.http = httpx.Client(transport=transport, timeout=httpx.Timeout(timeout, connect=min(timeout, 5.0)),
                                 headers={"User-Agent": "boardready", "Accept": "application/json"})
        self._token: tuple[Secret, float] | None = None
        self._lock = threading.Lock()

    def close(self) -> None:
        self.http.close()

    # -- transport ----------------------------------------------------------------
    def _post(self, url: str, **kwargs) -> httpx.Response:
        try:
            response = self.http.post(url, **kwargs)
        except httpx.TimeoutException as exc:
            raise ProviderError("timeout", f"no answer in time: {type(exc).__name__}") from None
        except httpx.HTTPError as exc:
            raise ProviderError("unreachable", f"connection failed: {type(exc).__name__}") from None
        if response.status_code == 429:
            raise ProviderError("rate_limited", "the provider asked to slow down",
                                retry_after_ms=_retry_after_ms(response.headers.get("Retry-After")))
        if response.status_code >= 500:
            raise ProviderError("status_5xx", f"the provider answered {response.status_code}")
        if response.status_code >= 400:
            if response.status_code == 401:
                self._token = None
            raise ProviderError("refused", f"the provider refused the call ({response.status_code})")
        return response

    def _json(self, response: httpx.Response) -> dict:
        try:
            body = response.json()
        except ValueError:
            raise ProviderError("malformed", "the answer is not JSON") from None
        if not isinstance(body, dict):
            raise ProviderError("malformed", "the answer is not a JSON object")
        return body

    def token(self) -> Secret:
        with self._lock:
            if self._token and self._token[1] > time.monotonic():
                return self._token[0]
            s = self.settings
            body = self._json(self._post(s.token_url, data={
                "grant_type": "client_credentials", "client_id": s.client_id,
                "client_secret": s.client_secret.reveal(), "scope": TOKEN_SCOPE}))
            value, expires_in = body.get("access_token"), body.get("expires_in")
            if not isinstance(value, str) or not value or not isinstance(expires_in, (int, float)):
                raise ProviderError("malformed", "the token answer has no access_token/expires_in")
            # Renewed a minute early, so a call never carries a token that expires on the way.
            self._token = (Secret(value), time.monotonic() + max(0.0, float(expires_in) - 60))
            return self._token[0]

    # -- the one call -----------------------------------------------------------------
    def match(self, parts: list[PartQuery]) -> list[dict]:
        """One supMultiMatch call for up to MAX_PARTS_PER_CALL parts: for each, in
        order, {partKey, manufacturer, mpn, matched, providerPartId, lifecycle, sellers}."""
        if not 0 < len(parts) <= MAX_PARTS_PER_CALL:
            raise ValueError("between 1 and 20 parts per call")
        queries = []
        for index, part in enumerate(parts):
            query = {"reference": f"q{index}", "mpn": part.mpn, "limit": 1}
            if part.manufacturer:
                query["manufacturer"] = part.manufacturer
            queries.append(query)
        token = self.token()
        body = self._json(self._post(self.settings.provider_url,
                                     json={"query": MULTI_MATCH_QUERY, "variables": {"queries": queries}},
                                     headers={"Authorization": f"Bearer {token.reveal()}"}))
        if body.get("errors"):
            raise ProviderError("malformed", "the provider answered GraphQL errors")
        results = (body.get("data") or {}).get("supMultiMatch") if isinstance(body.get("data"), dict) else None
        if not isinstance(results, list):
            raise ProviderError("malformed", "data.supMultiMatch is missing")
        by_reference = {r.get("reference"): r for r in results if isinstance(r, dict)}
        return [_observation(part, by_reference.get(f"q{index}")) for index, part in enumerate(parts)]


def _retry_after_ms(value: str | None) -> int | None:
    try:
        return max(0, int(float(value) * 1000)) if value is not None else None
    except ValueError:
        return None


def _observation(part: PartQuery, result: dict | None) -> dict:
    if result is None:
        raise ProviderError("malformed", "a match query has no result")
    found = result.get("parts")
    if found is None:
        found = []
    if not isinstance(found, list) or not all(isinstance(p, dict) for p in found):
        raise ProviderError("malformed", "parts is not a list of objects")
    base = {"partKey": part.part_key, "manufacturer": part.manufacturer, "mpn": part.mpn}
    if not found:
        return {**base, "matched": False, "providerPartId": None, "lifecycle": None, "sellers": None}
    match = found[0]
    lifecycle = None
    for spec in match.get("specs") or []:
        if isinstance(spec, dict) and (spec.get("attribute") or {}).get("shortname") == "lifecyclestatus":
            lifecycle = spec.get("displayValue") if isinstance(spec.get("displayValue"), str) else None
    sellers = match.get("sellers")
    if sellers is not None and (not isinstance(sellers, list) or not all(isinstance(s, dict) for s in sellers)):
        raise ProviderError("malformed", "sellers is not a list of objects")
    # What the SQL classification reads: the authorization signal and the offers (stock, prices).
    kept = None if sellers is None else [
        {"isAuthorized": s.get("isAuthorized"),
         "offers": [{"inventoryLevel": o.get("inventoryLevel"), "prices": o.get("prices")}
                    for o in (s.get("offers") or []) if isinstance(o, dict)]}
        for s in sellers]
    part_id = match.get("id")
    return {**base, "matched": True, "providerPartId": str(part_id) if part_id is not None else None,
            "lifecycle": lifecycle, "sellers": kept}

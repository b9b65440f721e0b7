"""The component provider's stand-in: OAuth2 client credentials and supMultiMatch shapes."""
from __future__ import annotations

import httpx

import emulator
from emulator import provider
from app.supply.client import MULTI_MATCH_QUERY


def _token(host, secret=provider.CLIENT_SECRET):
    return httpx.post(host.provider_token_url, data={"grant_type": "client_credentials", "client_id": provider.CLIENT_ID,
                                                     "client_secret": secret, "scope": "supply.domain"})


def test_token_and_multi_match_answer_in_the_providers_shapes():
    with emulator.start() as host:
        assert _token(host, "wrong").json() == {"error": "invalid_client"}
        token = _token(host).json()
        assert token["token_type"] == "Bearer" and token["expires_in"] > 0
        queries = [{"reference": "q0", "mpn": "SN74LS00N", "limit": 1}, {"reference": "q1", "mpn": "nope"}]
        unauthenticated = httpx.post(host.provider_url, json={"query": MULTI_MATCH_QUERY, "variables": {"queries": queries}})
        assert unauthenticated.status_code == 401 and "errors" in unauthenticated.json()
        answer = httpx.post(host.provider_url, json={"query": MULTI_MATCH_QUERY, "variables": {"queries": queries}},
                            headers={"Authorization": f"Bearer {token['access_token']}"}).json()
        first, second = answer["data"]["supMultiMatch"]
        assert first["reference"] == "q0" and first["hits"] == 1
        part = first["parts"][0]
        assert part["specs"][0]["attribute"]["shortname"] == "lifecyclestatus"
        assert part["specs"][0]["displayValue"].startswith("Obsolete")
        assert part["sellers"][0]["isAuthorized"] is False
        assert set(part["sellers"][0]["offers"][0]["prices"][0]) == {"quantity", "price", "currency"}
        assert second == {"reference": "q1", "hits": 0, "parts": []}
        refused = httpx.post(host.provider_url, json={"query": "{ supSearchMpn }"},
                             headers={"Authorization": f"Bearer {token['access_token']}"})
        assert refused.status_code == 400

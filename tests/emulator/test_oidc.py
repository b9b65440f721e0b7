"""The OIDC issuer: discovery, JWKS, the runner's token request, minting and rotation."""
import time

import httpx
import jwt
import pytest

AUDIENCE = "https://boardready.example/api"


def verify(emu, token, audience=AUDIENCE):
    """Verify the way a relying party does: discovery -> JWKS -> key by kid."""
    config = httpx.get(emu.oidc_issuer + "/.well-known/openid-configuration").json()
    keys = jwt.PyJWKClient(config["jwks_uri"], cache_jwk_set=False)
    key = keys.get_signing_key_from_jwt(token)
    return jwt.decode(token, key.key, algorithms=["RS256"], audience=audience, issuer=config["issuer"])


def dispatched_run(installed):
    response = installed.client.post(
        f"/repos/{installed.full_name}/actions/workflows/readiness-runner.yml/dispatches",
        json={"ref": "main", "return_run_details": True})
    return response.json()["workflow_run_id"]


def test_discovery_and_jwks(emu):
    config = httpx.get(emu.url + "/oidc/.well-known/openid-configuration").json()
    assert config["issuer"] == emu.url + "/oidc"
    assert config["id_token_signing_alg_values_supported"] == ["RS256"]
    jwks = httpx.get(config["jwks_uri"]).json()
    [key] = jwks["keys"]
    assert (key["kty"], key["alg"], key["use"]) == ("RSA", "RS256", "sig")
    assert key["kid"]


def test_runner_requests_a_token_for_its_audience(installed):
    emu = installed.emu
    run_id = dispatched_run(installed)
    attempt = emu.run(run_id)["attempts"][0]
    url, secret = attempt["id_token_request_url"], attempt["id_token_request_token"]
    # Not while queued, not without the request token.
    assert httpx.get(f"{url}&audience={AUDIENCE}", headers={"Authorization": f"Bearer {secret}"}).status_code == 401
    emu.start_run(run_id)
    assert httpx.get(f"{url}&audience={AUDIENCE}", headers={"Authorization": "Bearer wrong"}).status_code == 401
    answer = httpx.get(f"{url}&audience={AUDIENCE}", headers={"Authorization": f"Bearer {secret}"})
    assert answer.status_code == 200
    claims = verify(emu, answer.json()["value"])
    repo = installed.repo
    assert claims["sub"] == f"{installed.full_name}:ref:refs/heads/main".join(["repo:", ""])
    assert claims["repository"] == installed.full_name
    assert claims["repository_id"] == str(repo["id"])
    assert claims["repository_owner"] == "acme-boards"
    assert claims["run_id"] == str(run_id) and claims["run_attempt"] == "1"
    assert claims["sha"] == repo["head_sha"] and claims["ref"] == "refs/heads/main"
    assert claims["workflow_ref"] == f"{installed.full_name}/.github/workflows/readiness-runner.yml@refs/heads/main"
    assert claims["job_workflow_ref"] == claims["workflow_ref"]
    assert claims["event_name"] == "workflow_dispatch"
    assert {"jti", "iat", "nbf", "exp"} <= set(claims)
    emu.complete_run(run_id, "success")
    assert httpx.get(f"{url}&audience={AUDIENCE}", headers={"Authorization": f"Bearer {secret}"}).status_code == 401


def test_minted_tokens_for_negative_tests(installed):
    emu = installed.emu
    run_id = dispatched_run(installed)
    good = emu.mint_oidc_token(AUDIENCE, run_id=run_id)
    assert verify(emu, good)["run_id"] == str(run_id)
    with pytest.raises(jwt.InvalidAudienceError):
        verify(emu, emu.mint_oidc_token("https://elsewhere", run_id=run_id))
    with pytest.raises(jwt.ExpiredSignatureError):
        verify(emu, emu.mint_oidc_token(AUDIENCE, run_id=run_id, issued_at=int(time.time()) - 3600, lifetime_seconds=60))
    with pytest.raises(jwt.PyJWKClientError):
        verify(emu, emu.mint_oidc_token(AUDIENCE, run_id=run_id, kid="unknown-kid"))
    with pytest.raises(jwt.InvalidSignatureError):
        verify(emu, emu.mint_oidc_token(AUDIENCE, run_id=run_id, unpublished_key=True))
    other = emu.mint_oidc_token(AUDIENCE, run_id=run_id, claims={"repository": "mallory/evil", "jti": None})
    claims = verify(emu, other)
    assert claims["repository"] == "mallory/evil" and "jti" not in claims
    by_repo = verify(emu, emu.mint_oidc_token(AUDIENCE, repository=installed.full_name))
    assert by_repo["repository_id"] == str(installed.repo["id"])


def test_key_rotation_keeps_the_old_key_until_retired(installed):
    emu = installed.emu
    before = emu.mint_oidc_token(AUDIENCE, repository=installed.full_name)
    old_kid = jwt.get_unverified_header(before)["kid"]
    new_kid = emu.rotate_oidc_key()["kid"]
    after = emu.mint_oidc_token(AUDIENCE, repository=installed.full_name)
    assert jwt.get_unverified_header(after)["kid"] == new_kid != old_kid
    assert {k["kid"] for k in httpx.get(emu.url + "/oidc/.well-known/jwks").json()["keys"]} == {old_kid, new_kid}
    verify(emu, before)
    emu.retire_oidc_key(old_kid)
    with pytest.raises(jwt.PyJWKClientError):
        verify(emu, before)
    verify(emu, after)


def test_oidc_control_over_http(installed):
    base = installed.emu.url + "/_emulator/oidc"
    minted = httpx.post(base + "/tokens", json={"audience": AUDIENCE, "repository": installed.full_name})
    assert minted.status_code == 200
    verify(installed.emu, minted.json()["token"])
    rotated = httpx.post(base + "/rotate", json={"retire_previous": True}).json()["kid"]
    assert httpx.get(base).json()["current_kid"] == rotated
    with pytest.raises(jwt.PyJWKClientError):
        verify(installed.emu, minted.json()["token"])

"""The OIDC verifier against the emulator's issuer: keys from the discovery
document, cached, and fetched again on an unknown kid at most once a minute."""
from __future__ import annotations

import emulator
import pytest

from app.oidc import OidcRefused, OidcVerifier, workflow_file

AUDIENCE = "boardready-test"
REPOSITORY = "acme-hw/blinky-board"


class FakeClock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


@pytest.fixture
def host():
    with emulator.start() as handle:
        handle.register_app()
        installation = handle.create_installation("acme-hw")
        handle.create_repository(REPOSITORY, installation_id=installation["id"])
        yield handle


def jwks_fetches(host) -> int:
    return sum(1 for e in host.requests() if e["path"].endswith("/jwks") or "jwks" in e["path"])


def test_keys_are_cached_and_refetched_at_most_once_a_minute(host):
    clock = FakeClock()
    verifier = OidcVerifier(host.oidc_issuer, AUDIENCE, clock=clock)
    claims = verifier.verify(host.mint_oidc_token(AUDIENCE, repository=REPOSITORY))
    assert claims["repository"] == REPOSITORY and claims["aud"] == AUDIENCE
    verifier.verify(host.mint_oidc_token(AUDIENCE, repository=REPOSITORY))
    assert jwks_fetches(host) == 1

    # Forged kids within the minute cost no request to the issuer.
    for _ in range(5):
        with pytest.raises(OidcRefused) as refused:
            verifier.verify(host.mint_oidc_token(AUDIENCE, repository=REPOSITORY, kid="forged"))
        assert refused.value.code == "oidc_unknown_key"
    clock.now += 30
    assert jwks_fetches(host) == 1

    # The issuer rotates its key: the new kid is fetched once the minute has passed.
    host.rotate_oidc_key()
    rotated = host.mint_oidc_token(AUDIENCE, repository=REPOSITORY)
    with pytest.raises(OidcRefused):
        verifier.verify(rotated)
    clock.now += 31
    assert verifier.verify(rotated)["repository"] == REPOSITORY
    assert jwks_fetches(host) == 2


def test_leeway_and_required_claims(host):
    verifier = OidcVerifier(host.oidc_issuer, AUDIENCE)
    import time
    now = int(time.time())
    # Issued 30 s in the future (clock skew): within the 60 s leeway.
    verifier.verify(host.mint_oidc_token(AUDIENCE, repository=REPOSITORY, issued_at=now + 30))
    with pytest.raises(OidcRefused) as refused:
        verifier.verify(host.mint_oidc_token(AUDIENCE, repository=REPOSITORY, claims={"run_id": None}))
    assert refused.value.code == "oidc_missing_claim"
    with pytest.raises(OidcRefused) as refused:
        verifier.verify("not.a.jwt")
    assert refused.value.code == "oidc_malformed_token"


def test_workflow_file_is_read_from_the_tokens_own_repository():
    assert workflow_file({"repository": "a/b", "workflow_ref": "a/b/.github/workflows/readiness-runner.yml@refs/heads/main"}) \
        == ".github/workflows/readiness-runner.yml"
    assert workflow_file({"repository": "a/b", "workflow_ref": "evil/x/.github/workflows/readiness-runner.yml@main"}) is None
    assert workflow_file({"repository": "a/b"}) is None

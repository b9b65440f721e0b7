"""App authentication against the emulator: the JWT's claims, installation
tokens cached (whatever their length) and refreshed, never logged."""
from __future__ import annotations


import emulator
import jwt
import pytest
from falcon import testing

from app.host.app_auth import app_jwt
from app.web.wsgi import create_app
from tests.helpers.service import make_config, generated_app_private_key
from tests.helpers.host import REPOSITORY, make_hostkit


@pytest.fixture
def host():
    with emulator.start() as handle:
        yield handle


def test_app_jwt_claims():
    from app.config import Secret
    from cryptography.hazmat.primitives.serialization import load_pem_private_key

    now = 1_800_000_000
    token = app_jwt("4242", Secret(generated_app_private_key()), now=now)
    public = load_pem_private_key(generated_app_private_key().encode(), None).public_key()
    claims = jwt.decode(token, public, algorithms=["RS256"], options={"verify_exp": False, "verify_iat": False})
    assert claims["iss"] == "4242"
    assert claims["iat"] == now - 60
    assert claims["exp"] - claims["iat"] <= 600 and claims["exp"] > now
    assert jwt.get_unverified_header(token)["alg"] == "RS256"


def test_installation_tokens_are_cached_and_refreshed_when_expired(host, capfd):
    kit = make_hostkit(host)
    number = host.open_pull_request(REPOSITORY)["number"]
    client = kit.host_client()
    try:
        for _ in range(3):
            client.list_comments(kit.installation["id"], REPOSITORY, number)
        assert len(host.requests(operation_id="apps/create-installation-access-token")) == 1
        # The host revokes it early: the next call gets 401, drops the cached
        # token, and the retry (the outbox's backoff) gets a fresh one.
        host.expire_installation_tokens(kit.installation["id"])
        from app.host.errors import HostRetryable
        with pytest.raises(HostRetryable):
            client.list_comments(kit.installation["id"], REPOSITORY, number)
        client.list_comments(kit.installation["id"], REPOSITORY, number)
        assert len(host.requests(operation_id="apps/create-installation-access-token")) == 2
    finally:
        client.close()
    out, err = capfd.readouterr()
    assert "ghs_" not in out + err


def test_a_wrong_app_key_is_refused_by_the_host(host):
    kit = make_hostkit(host, HOST_APP_PRIVATE_KEY=generated_app_private_key())
    client = kit.host_client()
    from app.host.errors import HostRetryable
    try:
        with pytest.raises(HostRetryable) as refused:
            client.list_comments(kit.installation["id"], REPOSITORY, 1)
        assert refused.value.status == 401
    finally:
        client.close()


def test_missing_app_configuration_makes_readiness_name_it(pool):
    config = make_config(HOST_APP_ID=None, HOST_APP_PRIVATE_KEY="-----BEGIN PRIVATE KEY-----\nnot a key\n")
    result = testing.TestClient(create_app(config, pool)).simulate_get("/api/health/ready")
    assert result.status_code == 503
    assert result.json["missing"] == ["HOST_APP_ID", "HOST_APP_PRIVATE_KEY"]


def test_private_key_from_a_file(tmp_path):
    path = tmp_path / "app.pem"
    path.write_text(generated_app_private_key())
    config = make_config(HOST_APP_PRIVATE_KEY=None, HOST_APP_PRIVATE_KEY_FILE=str(path))
    assert config.missing == () and config.host_app_private_key is not None
    missing = make_config(HOST_APP_PRIVATE_KEY=None, HOST_APP_PRIVATE_KEY_FILE=str(tmp_path / "absent.pem"))
    assert missing.missing == ("HOST_APP_PRIVATE_KEY_FILE",)

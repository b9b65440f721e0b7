"""docs/configuration.md and .env.example (tools/config_docs.py): every
variable the service reads is documented, nothing documented is no longer
read, and the committed files are what the generator writes from the code."""
from __future__ import annotations

import re

import pytest

from app import config
from tools import config_docs
from tools.config_reference import variables

SECRET_NAME = re.compile(r".*_(SECRET|TOKEN|KEY)$")


@pytest.fixture(scope="module")
def facts():
    return config_docs.collect()


def test_every_variable_the_service_reads_is_documented(facts):
    read = config_docs.read_by_service(facts)
    assert read - set(variables()) == set(), "add them to tools/config_reference.py, then run python -m tools.config_docs"
    assert set(variables()) - read == set(), "documented but no longer read by the service"


def test_the_reader_is_recorded_with_its_ranges(facts):
    pool = facts.reads["SERVICE_DATABASE_POOL_MAX"].integer
    assert (pool["default"], pool["minimum"], pool["maximum"]) == (config.DEFAULT_POOL_MAX, 2, 50)
    assert {"HOST_WEBHOOK_SECRET", "HOST_APP_ID", "SERVICE_OIDC_AUDIENCE"} <= facts.required
    assert "HOST_APP_PRIVATE_KEY_FILE" in facts.reads            # the _FILE twin of a secret
    assert facts.invalid_effect["SERVICE_SESSION_TTL_HOURS"] == "not ready"
    assert facts.invalid_effect["SERVICE_WORKER_POLL_MS"] == "default used, reported"


def test_a_variable_read_outside_the_reader_is_found(tmp_path, monkeypatch):
    # A module that reads os.environ itself is caught by the source scan.
    module = tmp_path / "app" / "stray.py"
    module.parent.mkdir()
    module.write_text('import os\nTIMEOUT = os.environ.get("SERVICE_STRAY_TIMEOUT_MS")\n')
    monkeypatch.setattr(config_docs, "ROOT", tmp_path)
    monkeypatch.setattr(config_docs, "SERVICE_SOURCES", ("app",))
    assert config_docs.names_in_sources() == {"SERVICE_STRAY_TIMEOUT_MS"}


def test_secrets_are_marked_secret(facts):
    for name, variable in variables().items():
        if SECRET_NAME.fullmatch(name) or facts.reads.get(name, config_docs.Read()).as_secret:
            if not name.endswith("_FILE"):
                assert config_docs._is_secret(name, variable, facts), name


def test_committed_files_are_generated_from_the_code(facts):
    assert config_docs.DOC.read_text(encoding="utf-8") == config_docs.render_doc(facts), \
        "run python -m tools.config_docs"
    assert config_docs.ENV_EXAMPLE.read_text(encoding="utf-8") == config_docs.render_env_example(facts), \
        "run python -m tools.config_docs"


def test_env_example_names_every_variable_once_and_required_ones_uncommented(facts):
    lines = config_docs.ENV_EXAMPLE.read_text(encoding="utf-8").splitlines()
    assigned = [re.match(r"^(# )?([A-Z0-9_]+)=", line) for line in lines]
    names = [m.group(2) for m in assigned if m]
    assert sorted(names) == sorted(variables())
    uncommented = {m.group(2) for m in assigned if m and not m.group(1)}
    assert uncommented == facts.required


def test_the_env_example_is_a_working_start(facts, tmp_path):
    """Filled in as a person would (the required values), it makes a
    configuration with nothing missing."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048).private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()).decode()
    env = {}
    for line in config_docs.ENV_EXAMPLE.read_text(encoding="utf-8").splitlines():
        if line and not line.startswith("#"):
            name, _, value = line.partition("=")
            env[name] = value or {"HOST_APP_PRIVATE_KEY": key}.get(name, "a-secret-value-of-enough-length-0123456789")
    assert config.load(env).missing == ()

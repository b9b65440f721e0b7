"""GET /api/v1/attestation-keys: the JWKS boardready-verify takes, from SERVICE_ATTESTATION_KEY
(active first, retired after), public, and the record the active key signs verifies against it."""
from __future__ import annotations

import json

from cryptography.hazmat.primitives import serialization
from jsonschema import Draft202012Validator
from falcon import testing

from app import attestation
from app.web.wsgi import create_app
from checker.verify import main as boardready_verify
from contracts import load
from tests.helpers.service import make_config


def test_the_served_key_set_verifies_a_record_and_keeps_retired_keys(pool, tmp_path):
    retired = attestation.ensure_key(tmp_path / "old.pem")
    retired_public = tmp_path / "old.pub.pem"
    retired_public.write_bytes(retired.public_key().public_bytes(serialization.Encoding.PEM,
                                                                 serialization.PublicFormat.SubjectPublicKeyInfo))
    active = attestation.ensure_key(tmp_path / "active.pem")
    config = make_config(SERVICE_ATTESTATION_KEY=f"{tmp_path / 'active.pem'}:{retired_public}")
    answer = testing.TestClient(create_app(config, pool)).simulate_get("/api/v1/attestation-keys")
    assert answer.status_code == 200 and answer.headers["content-type"] == "application/jwk-set+json"
    keys = json.loads(answer.text)
    assert [k["kid"] for k in keys["keys"]] == [attestation.kid(active), attestation.kid(retired)]
    documented = load("openapi.json")["paths"]["/api/v1/attestation-keys"]["get"]["responses"]["200"]
    Draft202012Validator(documented["content"]["application/jwk-set+json"]["schema"]).validate(keys)
    (tmp_path / "keys.json").write_text(answer.text)
    for key in (active, retired):
        record = attestation.sign_release(key, None, {"verdict": "ready"}, {"decision": "PASS"})
        (tmp_path / "record.json").write_text(json.dumps(record))
        assert boardready_verify([str(tmp_path / "record.json"), "--keys", str(tmp_path / "keys.json")]) == 0


def test_without_a_key_the_set_is_empty(pool):
    answer = testing.TestClient(create_app(make_config(), pool)).simulate_get("/api/v1/attestation-keys")
    assert answer.status_code == 200 and json.loads(answer.text) == {"keys": []}

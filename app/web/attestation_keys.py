"""GET /api/v1/attestation-keys: the public halves of the keys that sign release
records (a JWKS, RFC 8037 OKP; `kid` = RFC 7638 thumbprint), for `boardready-verify
--keys`. Public: a verifier needs no account. The active key is listed first; retired
keys stay listed so the records they signed still verify (docs/release-record.md)."""
from __future__ import annotations

import json

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from app import attestation


def _public(path: str) -> Ed25519PublicKey:
    with open(path, "rb") as handle:
        data = handle.read()
    if b"PRIVATE KEY" in data:
        key = serialization.load_pem_private_key(data, password=None)
        if isinstance(key, Ed25519PrivateKey):
            return key.public_key()
    else:
        public = serialization.load_pem_public_key(data)
        if isinstance(public, Ed25519PublicKey):
            return public
    raise ValueError(f"{path}: not an Ed25519 key")


def key_set(paths: tuple[str, ...]) -> dict:
    keys, seen = [], set()
    for path in paths:
        jwk = attestation.jwk(_public(path))
        if jwk["kid"] not in seen:
            seen.add(jwk["kid"])
            keys.append(jwk)
    return {"keys": keys}


class AttestationKeys:
    auth = "none"

    def __init__(self, config):
        self.config = config

    def on_get(self, req, resp):
        resp.content_type = "application/jwk-set+json"
        resp.text = json.dumps(key_set(self.config.attestation_keys))
        resp.set_header("Cache-Control", "public, max-age=300")

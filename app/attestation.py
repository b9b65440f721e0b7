"""The service's attestation keys and the signing of release records (issue 38).

SERVICE_ATTESTATION_KEY names the active Ed25519 private key (PEM, PKCS#8); a
rotation keeps the earlier keys' public halves published so records they signed
still verify: `published_keys` takes the active key and the retired public keys.
The demo generates the key into the data folder (`ensure_key`). The JWKS is the
RFC 8037 OKP form; a key's `kid` is its RFC 7638 thumbprint, so it names the key
itself and never needs to be stored beside it. The envelope's shape and the
verification live in checker/release_record.py, shared with boardready-verify.
"""
from __future__ import annotations

import base64
import hashlib
import json
import os
from pathlib import Path

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from checker import release_record


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _raw(public: Ed25519PublicKey) -> bytes:
    return public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


def jwk(public: Ed25519PublicKey) -> dict:
    x = _b64url(_raw(public))
    # RFC 7638: the required members, lexicographic, no whitespace.
    thumbprint = json.dumps({"crv": "Ed25519", "kty": "OKP", "x": x}, sort_keys=True, separators=(",", ":"))
    return {"kty": "OKP", "crv": "Ed25519", "x": x, "alg": "EdDSA", "use": "sig",
            "kid": _b64url(hashlib.sha256(thumbprint.encode()).digest())}


def kid(private: Ed25519PrivateKey) -> str:
    return jwk(private.public_key())["kid"]


def load_private_key(path: str | os.PathLike) -> Ed25519PrivateKey:
    key = serialization.load_pem_private_key(Path(path).read_bytes(), password=None)
    if not isinstance(key, Ed25519PrivateKey):
        raise ValueError(f"{path}: not an Ed25519 private key")
    return key


def ensure_key(path: str | os.PathLike) -> Ed25519PrivateKey:
    """The key at ``path``, generated there (0600) when absent: the demo's."""
    file = Path(path)
    if not file.exists():
        file.parent.mkdir(parents=True, exist_ok=True)
        pem = Ed25519PrivateKey.generate().private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                                         serialization.NoEncryption())
        descriptor = os.open(file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(descriptor, "wb") as out:
            out.write(pem)
    return load_private_key(file)


def published_keys(active: Ed25519PrivateKey, retired: tuple[Ed25519PublicKey, ...] | list[Ed25519PublicKey] = ()) -> dict:
    """The JWKS at GET /api/v1/attestation-keys: the active key first, then the retired ones."""
    keys = [jwk(active.public_key())] + [jwk(public) for public in retired]
    seen, unique = set(), []
    for key in keys:
        if key["kid"] not in seen:
            seen.add(key["kid"])
            unique.append(key)
    return {"keys": unique}


def sign_release(private: Ed25519PrivateKey, package: Path | None, result_document: dict, predicate: dict) -> dict:
    """The DSSE envelope over the statement naming the package's files and the result document."""
    subjects = release_record.package_subjects(package) if package is not None else []
    statement = release_record.statement(subjects, result_document, predicate)
    return release_record.envelope(statement, kid(private), private.sign)


def release_predicate(*, repository: str, pull_request: int, head_commit: str, base_commit: str, decision: str,
                      conclusion: str, approvals: list[dict], waivers: list[dict], relaxed: list, checker_version: str,
                      kicad_version: str | None, decided_at: str) -> dict:
    """The predicate of https://boardready.dev/release-decision/v1. Approvals: {person, at};
    waivers: {fingerprint, reason, person, expires}; relaxed: the relaxed settings the result carries."""
    return {"repository": repository, "pullRequest": pull_request, "headCommit": head_commit,
            "baseCommit": base_commit, "decision": decision, "conclusion": conclusion,
            "approvals": [{"person": a["person"], "at": a["at"]} for a in approvals],
            "waivers": [{"fingerprint": w["fingerprint"], "reason": w["reason"], "person": w["person"],
                         "expires": w.get("expires")} for w in waivers],
            "relaxed": list(relaxed), "checkerVersion": checker_version, "kicadVersion": kicad_version,
            "decidedAt": decided_at}

"""The signed release record: an in-toto Statement v1 in a DSSE envelope (issue 38).

The service signs it (app/attestation.py) when a release run's decision becomes
PASS, or CONDITIONAL approved; anyone verifies it offline with the service's
published keys (GET /api/v1/attestation-keys, a JWKS) and `boardready-verify`
(checker/verify.py). This module is what both sides share and needs nothing of
the service: the statement's shape, DSSE's pre-authentication encoding (PAE),
the digests of the subjects, and the verification itself.

- envelope: {"payloadType": "application/vnd.in-toto+json", "payload": base64(statement),
  "signatures": [{"keyid": kid, "sig": base64(Ed25519 over PAE)}]}
- statement: {"_type": "https://in-toto.io/Statement/v1", "subject": [{"name", "digest": {"sha256"}}],
  "predicateType": PREDICATE_TYPE, "predicate": {...}}
- subjects: each file of the fab package by its path in the package, and the
  result document as `result.json`, its SHA-256 taken over its RFC 8785 canonical form.
"""
from __future__ import annotations

import base64
import hashlib
import json
from pathlib import Path

STATEMENT_TYPE = "https://in-toto.io/Statement/v1"
PAYLOAD_TYPE = "application/vnd.in-toto+json"
PREDICATE_TYPE = "https://boardready.dev/release-decision/v1"
RESULT_SUBJECT = "result.json"
MAX_RECORD_BYTES = 4 * 1024 * 1024   # a record names files by digest: megabytes would be hostile


def pae(payload_type: str, payload: bytes) -> bytes:
    """DSSE v1 pre-authentication encoding: what is signed, not the payload alone."""
    kind = payload_type.encode()
    return b"DSSEv1 %d %s %d %s" % (len(kind), kind, len(payload), payload)


def canonical_sha256(document) -> str:
    import rfc8785
    return hashlib.sha256(rfc8785.dumps(document)).hexdigest()


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def package_subjects(package: Path) -> list[dict]:
    """Every regular file under the package folder, by its path in it (sorted, '/'-separated)."""
    files = sorted(p for p in package.rglob("*") if p.is_file() and not p.is_symlink())
    return [{"name": p.relative_to(package).as_posix(), "digest": {"sha256": file_sha256(p)}} for p in files]


def statement(subjects: list[dict], result_document: dict, predicate: dict) -> dict:
    return {"_type": STATEMENT_TYPE,
            "subject": [*subjects, {"name": RESULT_SUBJECT, "digest": {"sha256": canonical_sha256(result_document)}}],
            "predicateType": PREDICATE_TYPE, "predicate": predicate}


def envelope(statement_document: dict, kid: str, sign) -> dict:
    """`sign(bytes) -> bytes` signs the PAE with the key named ``kid``."""
    payload = json.dumps(statement_document, sort_keys=True, separators=(",", ":")).encode()
    signature = sign(pae(PAYLOAD_TYPE, payload))
    return {"payloadType": PAYLOAD_TYPE, "payload": base64.b64encode(payload).decode(),
            "signatures": [{"keyid": kid, "sig": base64.b64encode(signature).decode()}]}


def _b64url(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _ed25519_keys(jwks: dict) -> dict:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
    keys = {}
    for jwk in jwks.get("keys", []) if isinstance(jwks, dict) else []:
        if isinstance(jwk, dict) and jwk.get("kty") == "OKP" and jwk.get("crv") == "Ed25519" and jwk.get("kid"):
            try:
                keys[jwk["kid"]] = Ed25519PublicKey.from_public_bytes(_b64url(jwk["x"]))
            except (KeyError, ValueError, TypeError):
                continue
    return keys


class RecordRefused(Exception):
    """The record is not a good signature over a statement of ours, or a file does not match."""


def verified_statement(record: dict, jwks: dict) -> tuple[dict, str]:
    """(the statement, the kid that signed it); RecordRefused unless a known key's signature is good."""
    from cryptography.exceptions import InvalidSignature
    if not isinstance(record, dict) or record.get("payloadType") != PAYLOAD_TYPE:
        raise RecordRefused("not a DSSE envelope of an in-toto statement")
    try:
        payload = base64.b64decode(record["payload"], validate=True)
    except (KeyError, ValueError, TypeError) as error:
        raise RecordRefused("the payload is not base64") from error
    keys = _ed25519_keys(jwks)
    signer = None
    for signature in record.get("signatures") or []:
        key = keys.get(signature.get("keyid")) if isinstance(signature, dict) else None
        if key is None:
            continue
        try:
            key.verify(base64.b64decode(signature.get("sig", ""), validate=True), pae(PAYLOAD_TYPE, payload))
        except (InvalidSignature, ValueError, TypeError):
            continue
        signer = signature["keyid"]
        break
    if signer is None:
        raise RecordRefused("no signature by a key in the key set verifies")
    try:
        document = json.loads(payload)
    except ValueError as error:
        raise RecordRefused("the signed payload is not JSON") from error
    if document.get("_type") != STATEMENT_TYPE or document.get("predicateType") != PREDICATE_TYPE:
        raise RecordRefused("the statement is not a boardready release decision")
    return document, signer


def mismatched_files(statement_document: dict, package: Path) -> list[str]:
    """What in the package folder differs from the statement's subjects: changed, missing or extra files."""
    named = {s["name"]: s["digest"]["sha256"] for s in statement_document.get("subject", [])
             if s.get("name") != RESULT_SUBJECT}
    present = {s["name"]: s["digest"]["sha256"] for s in package_subjects(package)}
    problems = [f"{name}: missing" for name in sorted(set(named) - set(present))]
    problems += [f"{name}: not in the record" for name in sorted(set(present) - set(named))]
    problems += [f"{name}: SHA-256 differs" for name in sorted(set(named) & set(present))
                 if named[name] != present[name]]
    return problems

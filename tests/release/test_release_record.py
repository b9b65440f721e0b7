"""The signed release record (checker/release_record.py, app/attestation.py, boardready-verify):
signed with the service's Ed25519 key, verified by securesystemslib's own DSSE code (the
in-toto ecosystem's library, so it is not only our code agreeing with itself) and by
boardready-verify; a tampered file, a tampered predicate and a foreign key are each refused."""
from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from securesystemslib.dsse import Envelope
from securesystemslib.exceptions import VerificationError
from securesystemslib.signer import SSlibKey

from app import attestation
from checker import release_record
from checker.verify import main as boardready_verify

RESULT = {"schemaVersion": "1", "verdict": "ready", "findings": [], "tool": {"name": "boardready-checker"}}


@pytest.fixture
def signed(tmp_path):
    key = attestation.ensure_key(tmp_path / "data" / "attestation-key.pem")
    package = tmp_path / "fab"
    (package / "gerbers").mkdir(parents=True)
    (package / "gerbers" / "board-F_Cu.gbr").write_text("%FSLAX46Y46*%\nM02*\n")
    (package / "board-PTH.drl").write_text("M48\nM30\n")
    (package / "fab-manifest.json").write_text("{}")
    predicate = attestation.release_predicate(
        repository="acme-hw/blinky-board", pull_request=7, head_commit="a" * 40, base_commit="b" * 40,
        decision="PASS", conclusion="success", approvals=[{"person": "alice", "at": "2026-12-02T03:00:00Z"}],
        waivers=[{"fingerprint": "f" * 16, "reason": "known", "person": "bob", "expires": None}],
        relaxed=[], checker_version="0.7.0", kicad_version="9.0.8", decided_at="2026-12-02T03:01:00Z")
    record = attestation.sign_release(key, package, RESULT, predicate)
    keys = attestation.published_keys(key)
    (tmp_path / "record.json").write_text(json.dumps(record))
    (tmp_path / "keys.json").write_text(json.dumps(keys))
    (tmp_path / "result.json").write_text(json.dumps(RESULT))
    return tmp_path, key, record, keys


def _sslib_key(jwk: dict) -> SSlibKey:
    raw = base64.urlsafe_b64decode(jwk["x"] + "=" * (-len(jwk["x"]) % 4))
    return SSlibKey(keyid=jwk["kid"], keytype="ed25519", scheme="ed25519", keyval={"public": raw.hex()})


def _verify(where: Path, package: bool = True) -> int:
    args = [str(where / "record.json"), "--keys", str(where / "keys.json"), "--result", str(where / "result.json")]
    return boardready_verify(args + (["--package", str(where / "fab")] if package else []))


def test_securesystemslib_verifies_the_envelope_and_the_statement_is_in_toto_v1(signed):
    where, key, record, keys = signed
    envelope = Envelope.from_dict(json.loads(json.dumps(record)))
    accepted = envelope.verify([_sslib_key(k) for k in keys["keys"]], 1)
    assert list(accepted) == [attestation.kid(key)]
    statement = json.loads(envelope.payload)
    assert statement["_type"] == "https://in-toto.io/Statement/v1"
    assert statement["predicateType"] == "https://boardready.dev/release-decision/v1"
    assert {s["name"] for s in statement["subject"]} == \
        {"gerbers/board-F_Cu.gbr", "board-PTH.drl", "fab-manifest.json", "result.json"}
    assert statement["predicate"]["approvals"] == [{"person": "alice", "at": "2026-12-02T03:00:00Z"}]


def test_boardready_verify_accepts_the_record_the_package_and_the_result(signed, capsys):
    where, key, _, _ = signed
    assert _verify(where) == 0
    out = capsys.readouterr().out
    assert f"signature good: key {attestation.kid(key)}" in out and "every file matches" in out


def test_a_tampered_file_is_refused(signed, capsys):
    where, *_ = signed
    (where / "fab" / "board-PTH.drl").write_text("M48\nT1C0.8\nM30\n")
    assert _verify(where) == 1
    assert "board-PTH.drl: SHA-256 differs" in capsys.readouterr().err
    (where / "fab" / "extra.gbr").write_text("M02*\n")
    assert _verify(where) == 1


def test_a_tampered_predicate_is_refused_by_both(signed, capsys):
    where, _, record, keys = signed
    statement = json.loads(base64.b64decode(record["payload"]))
    statement["predicate"]["decision"] = "PASS" if statement["predicate"]["decision"] != "PASS" else "FAIL"
    forged = {**record, "payload": base64.b64encode(json.dumps(statement).encode()).decode()}
    (where / "record.json").write_text(json.dumps(forged))
    assert _verify(where) == 1
    assert "no signature by a key in the key set verifies" in capsys.readouterr().err
    with pytest.raises(VerificationError):
        Envelope.from_dict(json.loads(json.dumps(forged))).verify([_sslib_key(k) for k in keys["keys"]], 1)


def test_a_foreign_key_is_refused_by_both(signed, capsys):
    where, _, record, _ = signed
    foreign = attestation.published_keys(Ed25519PrivateKey.generate())
    (where / "keys.json").write_text(json.dumps(foreign))
    assert _verify(where) == 1
    # A foreign key that claims the service's kid does not verify either.
    impostor = {"keys": [{**foreign["keys"][0], "kid": record["signatures"][0]["keyid"]}]}
    (where / "keys.json").write_text(json.dumps(impostor))
    assert _verify(where) == 1
    with pytest.raises(VerificationError):
        Envelope.from_dict(json.loads(json.dumps(record))).verify([_sslib_key(k) for k in impostor["keys"]], 1)


def test_a_rotated_key_set_still_verifies_records_the_retired_key_signed(signed):
    where, key, _, _ = signed
    rotated = attestation.published_keys(Ed25519PrivateKey.generate(), [key.public_key()])
    (where / "keys.json").write_text(json.dumps(rotated))
    assert len(rotated["keys"]) == 2 and _verify(where) == 0


def test_the_result_subject_is_the_sha256_of_its_rfc8785_form(signed):
    _, _, record, _ = signed
    statement = json.loads(base64.b64decode(record["payload"]))
    [result] = [s for s in statement["subject"] if s["name"] == "result.json"]
    import hashlib

    import rfc8785
    assert result["digest"]["sha256"] == hashlib.sha256(rfc8785.dumps(RESULT)).hexdigest()
    assert release_record.canonical_sha256({"b": 1, "a": [1.0]}) == release_record.canonical_sha256({"a": [1], "b": 1})

"""boardready-verify RECORD --keys KEYS.json [--package DIR] [--result RESULT.json]

Offline verification of a boardready release record (checker/release_record.py):
exit 0 only when a key of the key set (the service's JWKS, saved from
GET /api/v1/attestation-keys) signed the record and, when given, every file of
the package folder and the result document match the record's subjects.
Exit 1 when refused (the reason on stderr), 2 on usage.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from .release_record import (
    MAX_RECORD_BYTES,
    RESULT_SUBJECT,
    RecordRefused,
    canonical_sha256,
    mismatched_files,
    verified_statement,
)


def _json_file(path: str, what: str):
    file = Path(path)
    if not file.is_file() or file.stat().st_size > MAX_RECORD_BYTES:
        raise RecordRefused(f"{what} {path}: not a file, or larger than {MAX_RECORD_BYTES} bytes")
    try:
        return json.loads(file.read_bytes())
    except ValueError as error:
        raise RecordRefused(f"{what} {path}: not JSON") from error


def verify(record_path: str, keys_path: str, package: str | None = None, result: str | None = None) -> list[str]:
    """The lines to print; RecordRefused when the record does not verify."""
    statement, kid = verified_statement(_json_file(record_path, "record"), _json_file(keys_path, "key set"))
    lines = [f"signature good: key {kid}"]
    if package is not None:
        problems = mismatched_files(statement, Path(package))
        if problems:
            raise RecordRefused("the package differs from the record: " + "; ".join(problems))
        lines.append(f"package {package}: every file matches")
    if result is not None:
        [named] = [s["digest"]["sha256"] for s in statement["subject"] if s.get("name") == RESULT_SUBJECT] or [None]
        if named != canonical_sha256(_json_file(result, "result")):
            raise RecordRefused("the result document differs from the record")
        lines.append(f"result {result}: matches")
    predicate = statement.get("predicate") or {}
    lines.append(f"{predicate.get('repository')} pull request {predicate.get('pullRequest')} at "
                 f"{predicate.get('headCommit')}: {predicate.get('decision')}")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="boardready-verify", description=__doc__.split("\n\n")[1])
    parser.add_argument("record", help="the release record (DSSE envelope JSON)")
    parser.add_argument("--keys", required=True, help="the service's key set (JWKS JSON)")
    parser.add_argument("--package", help="the fabrication package folder to check against the record")
    parser.add_argument("--result", help="the result document to check against the record")
    args = parser.parse_args(argv)
    try:
        lines = verify(args.record, args.keys, args.package, args.result)
    except RecordRefused as refusal:
        print(f"boardready-verify: REFUSED: {refusal}", file=sys.stderr)
        return 1
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Paths and real inputs every test suite shares: the repository and its fixtures."""
from __future__ import annotations

import json
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
FIXTURES = REPO_ROOT / "tests" / "fixtures"
WEBHOOK_FIXTURES = FIXTURES / "webhooks"


def webhook_fixture(name: str) -> bytes:
    """The raw bytes of a real webhook payload from tests/fixtures/webhooks/."""
    return (WEBHOOK_FIXTURES / name).read_bytes()


def webhook_fixture_json(name: str) -> dict:
    return json.loads(webhook_fixture(name))

"""The webhook sender: signed deliveries in the real payload shapes."""
import hashlib
import hmac
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from tests.emulator.helpers import FIXTURES

SECRET = "whsec-test"
MARKET_SECRET = "market-secret"


class Receiver:
    """A tiny local webhook receiver that checks the signature like the service does."""

    def __init__(self, secret: str, answer: int = 202):
        self.secret, self.answer, self.received = secret, answer, []
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                raw = self.rfile.read(int(self.headers["Content-Length"]))
                expected = "sha256=" + hmac.new(receiver.secret.encode(), raw, hashlib.sha256).hexdigest()
                valid = hmac.compare_digest(expected, self.headers.get("X-Hub-Signature-256", ""))
                receiver.received.append({"headers": dict(self.headers), "body": json.loads(raw), "valid": valid})
                self.send_response(receiver.answer if valid else 401)
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def receivers(installed):
    app_receiver, market_receiver = Receiver(SECRET), Receiver(MARKET_SECRET)
    installed.emu.configure_webhooks(url=app_receiver.url, secret=SECRET,
                                     marketplace_url=market_receiver.url, marketplace_secret=MARKET_SECRET)
    yield app_receiver, market_receiver
    app_receiver.close()
    market_receiver.close()


def fixture(name):
    return json.loads((FIXTURES / "webhooks" / name).read_text())


#: objects whose keys are data (which permissions an app has), not shape.
DATA_MAPS = {"permissions"}


def assert_keys_cover(real: dict, ours: dict, where: str = ""):
    """Every key of the real payload is in ours, recursively through objects (lists: first item)."""
    missing = set(real) - set(ours)
    assert not missing, f"missing at {where or '(root)'}: {sorted(missing)}"
    for key, value in real.items():
        if key in DATA_MAPS:
            continue
        if isinstance(value, dict) and isinstance(ours.get(key), dict):
            assert_keys_cover(value, ours[key], f"{where}.{key}")
        elif isinstance(value, list) and value and isinstance(value[0], dict) and ours.get(key):
            assert_keys_cover(value[0], ours[key][0], f"{where}.{key}[]")


def test_installation_created_is_signed_and_shaped_like_the_real_one(installed, receivers):
    app_receiver, _ = receivers
    result = installed.emu.send_installation_event(installed.installation["id"], "created")
    assert result["status"] == 202 and result["error"] is None
    [got] = app_receiver.received
    assert got["valid"]
    headers = got["headers"]
    assert headers["X-GitHub-Event"] == "installation"
    assert headers["X-GitHub-Delivery"] == result["delivery_id"]
    assert headers["User-Agent"] == "GitHub-Hookshot/emulator"
    assert headers["Content-Type"] == "application/json"
    body = got["body"]
    assert body["installation"]["account"] == {**body["installation"]["account"], "login": "acme-boards", "type": "Organization"}
    assert body["repositories"] == [{"id": installed.repo["id"], "node_id": body["repositories"][0]["node_id"],
                                     "name": "widget", "full_name": installed.full_name, "private": True}]
    real = fixture("installation.created.1.json")
    real["installation"].pop("suspended_by")  # null in the fixture, so no shape to compare
    assert_keys_cover(real, body)


def test_installation_repositories_added_and_removed(installed, receivers):
    app_receiver, _ = receivers
    emu = installed.emu
    emu.create_repository("acme-boards/new-board", installation_id=installed.installation["id"], deliver=True)
    emu.remove_repository_from_installation("acme-boards/new-board", deliver=True)
    added, removed = (r["body"] for r in app_receiver.received)
    assert added["action"] == "added" and [r["full_name"] for r in added["repositories_added"]] == ["acme-boards/new-board"]
    assert removed["action"] == "removed" and [r["name"] for r in removed["repositories_removed"]] == ["new-board"]
    assert_keys_cover(fixture("installation_repositories.added.0.json"), added)
    real_removed = fixture("installation_repositories.removed.2.json")
    real_removed["installation"].pop("suspended_by")
    real_removed.pop("requester")
    assert_keys_cover(real_removed, removed)


def test_pull_request_opened_and_synchronize(installed, receivers):
    app_receiver, _ = receivers
    emu = installed.emu
    pr = emu.open_pull_request(installed.full_name, head_ref="rev-b", deliver=True)
    synced = emu.synchronize_pull_request(installed.full_name, pr["number"], deliver=True)
    opened, sync = (r["body"] for r in app_receiver.received)
    assert all(r["headers"]["X-GitHub-Event"] == "pull_request" for r in app_receiver.received)
    assert opened["action"] == "opened"
    assert opened["pull_request"]["head"] == {**opened["pull_request"]["head"], "sha": pr["head"]["sha"], "ref": "rev-b"}
    assert opened["pull_request"]["base"]["ref"] == "main"
    assert (opened["pull_request"]["state"], opened["pull_request"]["draft"]) == ("open", False)
    assert opened["repository"]["owner"]["login"] == "acme-boards"
    assert opened["installation"]["id"] == installed.installation["id"]
    assert sync["action"] == "synchronize"
    assert (sync["before"], sync["after"]) == (pr["head"]["sha"], synced["head"]["sha"])
    real = fixture("pull_request.synchronize.22.json")
    for nullable in ("assignee", "milestone", "merged_by", "auto_merge", "active_lock_reason"):
        real["pull_request"].pop(nullable, None)
    real["pull_request"].pop("labels")
    real["pull_request"].pop("assignees")
    real["pull_request"].pop("requested_reviewers")
    real["repository"].pop("license", None)
    assert_keys_cover(real, sync)
    assert_keys_cover(fixture("pull_request.opened.0.json")["pull_request"]["head"], opened["pull_request"]["head"])


def test_marketplace_purchase_goes_to_the_marketplace_receiver(installed, receivers):
    app_receiver, market_receiver = receivers
    result = installed.emu.send_marketplace_purchase("purchased", "acme-boards", account_type="Organization",
                                                     effective_date="2030-01-02T00:00:00+00:00")
    assert result["status"] == 202 and app_receiver.received == []
    [got] = market_receiver.received
    assert got["valid"] and got["headers"]["X-GitHub-Event"] == "marketplace_purchase"
    body = got["body"]
    assert body["effective_date"] == "2030-01-02T00:00:00+00:00"
    assert body["marketplace_purchase"]["account"]["login"] == "acme-boards"
    assert body["marketplace_purchase"]["plan"]["name"] == "Community"
    assert body["marketplace_purchase"]["plan"]["monthly_price_in_cents"] == 0
    assert_keys_cover(fixture("marketplace_purchase.purchased.0.json"), body)
    installed.emu.send_marketplace_purchase("changed", "acme-boards")
    assert_keys_cover(fixture("marketplace_purchase.changed.2.json"), market_receiver.received[-1]["body"])


def test_ping_to_both_targets(installed, receivers):
    app_receiver, market_receiver = receivers
    installed.emu.send_ping("app")
    installed.emu.send_ping("marketplace")
    for receiver in receivers:
        [got] = receiver.received
        assert got["valid"] and got["headers"]["X-GitHub-Event"] == "ping"
        assert {"zen", "hook_id", "hook"} <= set(got["body"])
        assert got["body"]["hook"]["app_id"] == installed.app["id"]


def test_wrong_secret_is_seen_by_the_receiver_and_redelivery_keeps_the_id(installed, receivers):
    app_receiver, _ = receivers
    installed.emu.configure_webhooks(secret="not-the-receivers-secret")
    first = installed.emu.send_installation_event(installed.installation["id"])
    assert first["status"] == 401
    installed.emu.configure_webhooks(secret=SECRET)
    again = installed.emu.redeliver(first["delivery_id"])
    assert again["status"] == 202 and again["attempts"] == 2
    ids = [r["headers"]["X-GitHub-Delivery"] for r in app_receiver.received]
    assert ids == [first["delivery_id"]] * 2


def test_any_payload_can_be_sent_and_failures_are_reported(installed, receivers):
    app_receiver, _ = receivers
    payload = fixture("pull_request.opened.0.json")
    result = installed.emu.send_webhook("pull_request", payload)
    assert result["status"] == 202 and app_receiver.received[0]["body"] == payload
    installed.emu.configure_webhooks(url="http://127.0.0.1:9/nothing-listens")
    failed = installed.emu.send_ping()
    assert failed["status"] is None and "ConnectError" in failed["error"]

"""`bin/demo`: the service end to end on one machine.

Starts the database (embedded unless SERVICE_DATABASE_URL is set), migrates,
starts the API and the workers, sends signed deliveries it builds itself
(an installation, repositories added, a pull request opened, a duplicate and
one with a bad signature), shows them flow through the inbox and the job
queue, then keeps serving until Ctrl-C (`--once` exits after the walkthrough).
"""
from __future__ import annotations

import argparse
import hashlib
import hmac
import json
import os
import secrets
import socket
import time
import uuid

import httpx
import psycopg
from psycopg.rows import dict_row

from app import config as config_module
from app import runtime
from app.serve import Service

DEMO_INSTALLATION = 7_340_001
DEMO_ACCOUNT = {"login": "acme-hw", "id": 9_100_001, "type": "Organization"}
DEMO_REPOS = [
    {"id": 880_001, "name": "blinky-board", "full_name": "acme-hw/blinky-board", "private": False},
    {"id": 880_002, "name": "power-module", "full_name": "acme-hw/power-module", "private": True},
]


def _port_free(bind: str) -> bool:
    host, port = bind.rsplit(":", 1)
    with socket.socket() as s:
        return s.connect_ex((host, int(port))) != 0


def _free_bind() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"127.0.0.1:{s.getsockname()[1]}"


def deliveries() -> list[tuple[str, str, dict]]:
    """(label, event, payload) in the shapes the code host sends."""
    installation = {"id": DEMO_INSTALLATION, "account": DEMO_ACCOUNT}
    head_sha = hashlib.sha1(uuid.uuid4().bytes).hexdigest()
    repo = DEMO_REPOS[0]
    return [
        ("app installed", "installation", {
            "action": "created", "installation": installation,
            "repositories": [{k: repo[k] for k in ("id", "name", "full_name", "private")}],
            "sender": {"login": "alice", "id": 1}}),
        ("repository added", "installation_repositories", {
            "action": "added", "installation": installation, "repository_selection": "selected",
            "repositories_added": [DEMO_REPOS[1]], "repositories_removed": [],
            "sender": {"login": "alice", "id": 1}}),
        ("pull request opened", "pull_request", {
            "action": "opened", "number": 12, "installation": {"id": DEMO_INSTALLATION},
            "repository": {**repo, "owner": {"login": DEMO_ACCOUNT["login"], "id": DEMO_ACCOUNT["id"]}},
            "pull_request": {"number": 12, "state": "open", "draft": False, "title": "Rev B: move USB-C connector",
                             "head": {"sha": head_sha, "ref": "rev-b"}, "base": {"ref": "main"}},
            "sender": {"login": "alice", "id": 1}}),
    ]


def send(client: httpx.Client, secret: str, event: str, payload: dict, delivery_id: str,
         tamper: bool = False) -> httpx.Response:
    body = json.dumps(payload).encode()
    signature = hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    if tamper:
        signature = signature[::-1]
    return client.post("/api/host/webhook", content=body, headers={
        "Content-Type": "application/json", "X-Hub-Signature-256": f"sha256={signature}",
        "X-GitHub-Delivery": delivery_id, "X-GitHub-Event": event})


def print_table(rows: list[dict], columns: list[str]) -> None:
    widths = {c: max(len(c), *(len(str(r[c])) for r in rows)) if rows else len(c) for c in columns}
    print("  " + "  ".join(c.ljust(widths[c]) for c in columns))
    print("  " + "  ".join("-" * widths[c] for c in columns))
    for row in rows:
        print("  " + "  ".join(str(row[c]).ljust(widths[c]) for c in columns))


def walkthrough(base_url: str, url: str, secret: str, delivery_ids: list[str]) -> None:
    with httpx.Client(base_url=base_url, timeout=10) as client:
        print(f"\n== sending signed deliveries to {base_url}/api/host/webhook")
        run = uuid.uuid4().hex[:8]
        for label, event, payload in deliveries():
            delivery_id = f"demo-{run}-{event}"
            delivery_ids.append(delivery_id)
            r = send(client, secret, event, payload, delivery_id)
            print(f"  {label:<24} {event:<26} -> {r.status_code} {r.json()['outcome']}")
        _, event, payload = deliveries()[2]
        r = send(client, secret, event, payload, delivery_ids[-1])
        print(f"  {'the same PR again':<24} {event:<26} -> {r.status_code} {r.json()['outcome']} (no second job)")
        r = send(client, secret, event, payload, f"demo-{run}-forged", tamper=True)
        print(f"  {'a forged signature':<24} {event:<26} -> {r.status_code} {r.json()['code']} (nothing stored)")

    with psycopg.connect(url, row_factory=dict_row) as conn:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            rows = conn.execute(
                "SELECT idempotency_key AS delivery, event, action, state AS inbox, job_id AS job, "
                "job_status AS job_status FROM ops.inbox WHERE idempotency_key = ANY(%s) ORDER BY id",
                (["host:" + d for d in delivery_ids],)).fetchall()
            if rows and all(r["inbox"] == "processed" for r in rows):
                break
            time.sleep(0.1)
        print("\n== inbox and jobs (psql: SELECT * FROM ops.inbox)")
        print_table(rows, ["delivery", "event", "action", "inbox", "job", "job_status"])
        print("\n== installations (ops.installations) and release runs (ops.release_runs)")
        print_table(conn.execute("SELECT id, account, status, repositories FROM ops.installations "
                                 "WHERE id = %s", (DEMO_INSTALLATION,)).fetchall(),
                    ["id", "account", "status", "repositories"])
        print()
        print_table(conn.execute("SELECT repository, pr_number, head_sha, status FROM ops.release_runs "
                                 "ORDER BY id DESC LIMIT 1").fetchall(),
                    ["repository", "pr_number", "head_sha", "status"])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="bin/demo", description=__doc__)
    parser.add_argument("--once", action="store_true", help="exit after the walkthrough")
    args = parser.parse_args(argv)

    env = {}
    for name in ("HOST_WEBHOOK_SECRET", "HOST_MARKETPLACE_WEBHOOK_SECRET"):
        if not os.environ.get(name):
            env[name] = secrets.token_urlsafe(24)  # demo-only secrets, never printed
    bind = os.environ.get("SERVICE_BIND") or "127.0.0.1:8000"
    if not _port_free(bind):
        bind = _free_bind()
    env["SERVICE_BIND"] = bind
    config = config_module.load({**os.environ, **env})

    url = runtime.database_url(config)
    runtime.migrate(url)
    log_path = os.path.join(config.data_dir, "demo-service.log")
    os.makedirs(config.data_dir, exist_ok=True)
    service = Service(config, url, extra_env=env, log_path=log_path).start()
    try:
        print(f"boardready listening on {service.base_url} (service logs: {log_path})")
        walkthrough(service.base_url, url, config.webhook_secret.reveal(), [])
        if args.once:
            return
        print(f"\nserving on {service.base_url} until Ctrl-C")
        try:
            service.wait()
        except KeyboardInterrupt:
            pass
    finally:
        service.stop()


if __name__ == "__main__":
    main()

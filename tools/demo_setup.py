"""bin/demo's set-up: each step says what it does and how long it took, a step
that takes a while says so every few seconds, and a wait says what it waits
for and, when its time is up, what is wrong.

Also what the demo keeps in its data folder between runs: its own artifact
signing key and operator token (so the run page links its report and /metrics
answers, with nothing to configure), and `--reset`, which empties the folder.
"""
from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import psycopg
from psycopg.rows import dict_row

from app import sql_api
from tools import named_queries as queries

HEARTBEAT_SECONDS = 5
OPERATOR_ACTOR = "demo"
# The actor the demo retires an earlier demo's waivers as (waivers.deleted_by).
DEMO_ACTOR = "operator:demo"


def say(line: str) -> None:
    print(line, flush=True)


@contextlib.contextmanager
def step(label: str, slow_note: str = ""):
    """`label ...` now, `done in N s` at the end; every HEARTBEAT_SECONDS in
    between a line saying it is still at it, so a first start is never silent."""
    say(f"-- {label} ...")
    started = time.monotonic()
    finished = threading.Event()

    def heartbeat():
        while not finished.wait(HEARTBEAT_SECONDS):
            say(f"   ... {label} ({time.monotonic() - started:.0f} s so far{slow_note})")

    beat = threading.Thread(target=heartbeat, daemon=True)
    beat.start()
    try:
        yield
    finally:
        finished.set()
        beat.join()
    say(f"   done in {time.monotonic() - started:.1f} s")


def wait_for(predicate, seconds: float, what: str, diagnose=None):
    """Poll `predicate` until it answers something true, for up to `seconds`.
    Says what it waits for when that takes a moment, and every few seconds
    after; past its time, `diagnose()` says what is wrong (else None is returned
    silently, as before)."""
    started = time.monotonic()
    deadline = started + seconds
    announced_at = None
    while True:
        value = predicate()
        if value:
            return value
        now = time.monotonic()
        if now >= deadline:
            break
        if announced_at is None and now - started >= 2:
            say(f"  ... waiting for {what} (up to {seconds:.0f} s)")
            announced_at = now
        elif announced_at is not None and now - announced_at >= HEARTBEAT_SECONDS * 2:
            say(f"  ... still waiting for {what} ({now - started:.0f} s)")
            announced_at = now
        time.sleep(0.2)
    if diagnose is not None:
        say(f"  gave up waiting for {what} after {seconds:.0f} s: {diagnose()}")
    return None


def reset(data_dir: str) -> None:
    """Empty the data folder (the embedded database, logs, the demo's keys)."""
    folder = Path(data_dir)
    if folder.exists():
        shutil.rmtree(folder)
    say(f"-- --reset: emptied {folder} (the next steps start from nothing)")


@dataclass(frozen=True)
class DemoSecrets:
    artifact_signing_key: str
    operator_token: str
    token_file: Path


def _kept(path: Path, make) -> str:
    """A secret kept in the data folder (mode 0600), made on the first run."""
    if path.exists():
        return path.read_text().strip()
    value = make()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as out:
        out.write(value + "\n")
    return value


def demo_secrets(data_dir: str) -> DemoSecrets:
    """The demo's artifact signing key and operator token: the environment's
    when set, else the ones kept in the data folder (made once)."""
    folder = Path(data_dir)
    folder.mkdir(parents=True, exist_ok=True)
    key = os.environ.get("SERVICE_ARTIFACT_SIGNING_KEY") or _kept(
        folder / "demo-artifact-signing-key", lambda: secrets.token_urlsafe(48))
    token_file = folder / "demo-operator-token"
    token = os.environ.get("SERVICE_OPERATOR_API_TOKEN") or _kept(token_file, lambda: secrets.token_urlsafe(48))
    return DemoSecrets(key, token, token_file)


def service_variables(kept: DemoSecrets) -> dict:
    """Report artifacts and the operator API (with /metrics) on, as in production."""
    return {"SERVICE_ARTIFACT_SIGNING_KEY": kept.artifact_signing_key,
            "SERVICE_OPERATOR_API_TOKEN": kept.operator_token,
            "SERVICE_OPERATOR_ACTOR_ID": os.environ.get("SERVICE_OPERATOR_ACTOR_ID") or OPERATOR_ACTOR}


def retire_earlier_waivers(url: str, repository: str) -> int:
    """Waivers a person made on an earlier demo's run pages cover the demo
    repository's findings in every later pull request (a waiver's scope is the
    finding in its repository, until revoked or expired). The demo revokes
    them through the SQL function the API's DELETE uses, so a rerun decides as
    the first run did. Returns how many were revoked."""
    with psycopg.connect(url, autocommit=True, row_factory=dict_row) as conn:
        standing = queries.fetch_all(conn, "demo_standing_waivers", full_name=repository)
        for waiver in standing:
            sql_api.waiver_delete(conn, repository_id=waiver["repository_id"],
                                  repository_ids=[waiver["repository_id"]], waiver_id=waiver["id"],
                                  actor=DEMO_ACTOR)
    for waiver in standing:
        say(f"   revoked waiver {waiver['id']} of {waiver['fingerprint'][:12]} by {waiver['created_by']}: "
            f"\"{waiver['reason'][:60]}\"")
    return len(standing)

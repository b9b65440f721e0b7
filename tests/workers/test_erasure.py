"""Account erasure with a driven clock: a cancellation, then erasure at due_at
(not a second before) of every table the account owns while another account
is untouched; legal holds that block it and releases that let the next sweep
erase; a worker killed between batches; two workers racing; the wake-up on a
cancellation that is already due."""
from __future__ import annotations

import datetime as dt
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

from app import sql_api
from app.config import RetentionSettings
from tests.helpers.access import marketplace_body, post_marketplace
from tests.helpers.service import make_config, race, wait_for
from tests.helpers.retention import (audit, cancel, census, erasure_request, place_hold, release_hold,
                                        seed_account)
from workers.queue_worker import QueueWorker
from workers.retention import RetentionWorker
from workers.schedules import ScheduleQueue

EFFECTIVE = "2024-05-01T00:00:00+00:00"
DUE = dt.datetime(2024, 5, 31, tzinfo=dt.timezone.utc)
A, B = 28_536_653, 28_536_654
REPO = Path(__file__).resolve().parents[2]


def accounts(owner, pool, client):
    a = seed_account(owner, pool, client, account_id=A, installation_id=601, repository_id=6_010_001)
    b = seed_account(owner, pool, client, account_id=B, installation_id=602, repository_id=6_020_001, login="other")
    return a, b


def worker(pool, batch_size: int = 10) -> RetentionWorker:
    return RetentionWorker(RetentionSettings(batch_size=batch_size), pool)


def present(counts: dict) -> dict:
    return {table: n for table, n in counts.items() if n}


def test_erasure_at_due_at_empties_every_table_and_spares_the_other_account(owner, pool, client):
    a, b = accounts(owner, pool, client)
    before_a, before_b = census(owner, a), census(owner, b)
    assert all(before_a.values()), before_a          # every table holds something of the account
    cancel(client, A, EFFECTIVE)
    assert erasure_request(owner, A)["due_at"] == DUE

    eraser = worker(pool)
    assert eraser.erasure_step(now=DUE - dt.timedelta(seconds=1))["outcome"] == "idle"   # not a second before
    assert census(owner, a) == before_a

    steps = []
    while (row := eraser.erasure_step(now=DUE))["outcome"] == "erasing":
        assert 0 < row["deleted_rows"] <= 10
        steps.append(row)
    assert row["outcome"] == "completed" and len(steps) > 1

    request = erasure_request(owner, A)
    assert (request["status"], request["completed_at"], request["batches"]) == ("completed", DUE, len(steps))
    assert request["deleted"] == present(before_a)   # counts per table: exactly what the account had
    assert not any(census(owner, a).values()), census(owner, a)
    assert census(owner, b) == before_b
    assert owner.execute("SELECT login FROM accounts WHERE id = %s", (A,)).fetchone()["login"] == "erased"
    assert owner.execute("SELECT login FROM accounts WHERE id = %s", (B,)).fetchone()["login"] == "other"

    [event] = audit(owner, "control_plane.account_erasure_completed")
    assert str(event["id"]) == str(request["audit_event_id"]) == str(row["audit_event_id"])
    assert (event["actor"], event["item_type"], event["item_id"]) == ("system", "erasure_request", str(request["id"]))
    assert event["details"] == {"erasureRequestId": request["id"], "accountId": A, "batches": len(steps),
                                "deleted": present(before_a), "deletedRows": sum(before_a.values())}
    # The account row still refuses a purchase with the cancellation's timestamp.
    kept = post_marketplace(client, marketplace_body("marketplace_purchase.purchased.0.json", account_id=A,
                                                     effective_date=EFFECTIVE))
    assert kept.json["outcome"] == "cancellation_kept"
    assert eraser.erasure_step(now=DUE + dt.timedelta(days=1))["outcome"] == "idle"


def test_a_hold_placed_before_due_blocks_and_its_release_lets_the_next_sweep_erase(owner, pool, client):
    a, b = accounts(owner, pool, client)
    before = census(owner, a)
    cancel(client, A, EFFECTIVE)
    first = place_hold(pool, A, "hold-1", now=DUE - dt.timedelta(days=5))
    second = place_hold(pool, A, "hold-2", now=DUE - dt.timedelta(days=4))
    assert first["outcome"] == second["outcome"] == "placed"

    eraser = worker(pool)
    assert eraser.sweep_once(now=DUE).erasures[0]["outcome"] == "blocked"
    request = erasure_request(owner, A)
    assert (request["status"], request["blocked_hold_id"], request["blocked_by_legal_hold"]) == (
        "blocked_legal_hold", first["hold_id"], True)
    assert census(owner, a) == before
    assert eraser.sweep_once(now=DUE + dt.timedelta(days=1)).erasures == []     # not looked at again
    [blocked] = audit(owner, "control_plane.account_erasure_blocked")
    assert blocked["details"] == {"erasureRequestId": request["id"], "accountId": A, "holdId": first["hold_id"],
                                  "batches": 0, "deletedRows": 0}

    still = release_hold(pool, A, first["hold_id"], "release-1", now=DUE + dt.timedelta(days=2))
    assert (still["outcome"], still["erasure_resumed"]) == ("released", False)    # another hold stands
    assert erasure_request(owner, A)["status"] == "blocked_legal_hold"
    last = release_hold(pool, A, second["hold_id"], "release-2", now=DUE + dt.timedelta(days=2))
    assert (last["outcome"], last["erasure_resumed"], last["erasure_request_id"]) == ("released", True, request["id"])
    assert erasure_request(owner, A)["status"] == "pending"

    report = eraser.sweep_once(now=DUE + dt.timedelta(days=2))
    assert report.erasures[-1]["outcome"] == "completed"
    assert erasure_request(owner, A)["deleted"] == present(before)
    assert not any(census(owner, a).values())


def test_a_hold_placed_during_an_erasure_stops_it_and_its_release_resumes_it(owner, pool, client):
    a, _ = accounts(owner, pool, client)
    before = census(owner, a)
    cancel(client, A, EFFECTIVE)
    eraser = worker(pool)
    for _ in range(3):
        assert eraser.erasure_step(now=DUE)["outcome"] == "erasing"
    hold = place_hold(pool, A, "mid-erasure", now=DUE)
    partial = census(owner, a)
    assert eraser.erasure_step(now=DUE)["outcome"] == "blocked"
    assert census(owner, a) == partial                                  # nothing more is deleted meanwhile
    request = erasure_request(owner, A)
    assert (request["status"], request["batches"], request["started_at"]) == ("blocked_legal_hold", 3, DUE)

    assert release_hold(pool, A, hold["hold_id"], "release", now=DUE)["erasure_resumed"] is True
    assert erasure_request(owner, A)["status"] == "erasing"             # carries on where it stopped
    assert eraser.sweep_once(now=DUE).erasures[-1]["outcome"] == "completed"
    assert erasure_request(owner, A)["deleted"] == present(before)
    assert not any(census(owner, a).values())


def test_a_newer_purchase_withdraws_an_erasure_under_way(owner, pool, client):
    a, _ = accounts(owner, pool, client)
    cancel(client, A, EFFECTIVE)
    eraser = worker(pool)
    assert eraser.erasure_step(now=DUE)["outcome"] == "erasing"
    partial = census(owner, a)
    bought = post_marketplace(client, marketplace_body("marketplace_purchase.purchased.0.json", account_id=A,
                                                       effective_date="2024-06-02T00:00:00+00:00"))
    assert bought.json["outcome"] == "applied"
    assert erasure_request(owner, A)["status"] == "withdrawn"
    assert eraser.erasure_step(now=DUE)["outcome"] == "idle"
    assert census(owner, a) == partial


DOOMED_WORKER = """
import sys, time, datetime as dt
from app import database, sql_api
pool = database.create_pool(sys.argv[1], max_size=1, name="doomed", open_wait_seconds=10)
while True:
    with database.connection(pool) as conn:
        row = sql_api.erasure_step(conn, batch_size=3, now=dt.datetime.fromisoformat(sys.argv[2]))
    print(row["outcome"], flush=True)
    time.sleep(0.2)
"""


def test_a_worker_killed_between_batches_resumes_and_completes(owner, pool, client, db_url):
    a, b = accounts(owner, pool, client)
    before, before_b = census(owner, a), census(owner, b)
    cancel(client, A, EFFECTIVE)
    doomed = subprocess.Popen([sys.executable, "-c", DOOMED_WORKER, db_url, DUE.isoformat()], cwd=REPO,
                              stdout=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": str(REPO)})
    try:
        seen = [doomed.stdout.readline().strip() for _ in range(4)]
        assert seen == ["erasing"] * 4, seen
    finally:
        doomed.send_signal(signal.SIGKILL)
        doomed.wait()
    wait_for(lambda: not owner.execute("SELECT count(*) AS n FROM pg_stat_activity "
                                       "WHERE application_name = 'boardready-doomed'").fetchone()["n"])

    request = erasure_request(owner, A)
    assert request["status"] == "erasing" and request["batches"] >= 4
    now = census(owner, a)
    # What the request recorded is exactly what is gone: every batch was one transaction.
    assert request["deleted"] == present({t: before[t] - now[t] for t in before})
    assert any(now.values())

    assert worker(pool).sweep_once(now=DUE).erasures[-1]["outcome"] == "completed"
    request = erasure_request(owner, A)
    assert (request["status"], request["deleted"]) == ("completed", present(before))
    assert not any(census(owner, a).values()) and census(owner, b) == before_b
    assert len(audit(owner, "control_plane.account_erasure_completed")) == 1


def test_two_workers_racing_erase_each_account_once(owner, pool, client, db_url):
    a, b = accounts(owner, pool, client)
    before = {A: census(owner, a), B: census(owner, b)}
    cancel(client, A, EFFECTIVE)
    cancel(client, B, EFFECTIVE)

    def erase(conn) -> list[dict]:
        rows = []
        while (row := sql_api.erasure_step(conn, batch_size=5, now=DUE))["outcome"] != "idle":
            rows.append(row)
        return rows

    outcomes = [row for rows in race(db_url, 2, erase) for row in rows]
    completed = [r for r in outcomes if r["outcome"] == "completed"]
    assert sorted(r["account_id"] for r in completed) == [A, B]
    for account, seeded in ((A, a), (B, b)):
        request = erasure_request(owner, account)
        assert (request["status"], request["deleted"]) == ("completed", present(before[account]))
        assert not any(census(owner, seeded).values())
    assert len(audit(owner, "control_plane.account_erasure_completed")) == 2


def test_a_cancellation_already_due_wakes_the_sweep(owner, pool, client, db_url):
    accounts(owner, pool, client)
    stop = threading.Event()
    # The retention_sweep schedule, due in ten minutes and polled as rarely:
    # only the NOTIFY can make it erase within the test.
    sweeper = RetentionWorker(RetentionSettings(interval_ms=600_000), pool, stop=stop)
    schedules = ScheduleQueue(make_config(), {"retention_sweep": (lambda pool, item: sweeper.sweep_once() and "swept",
                                                                  600_000)})
    owner.execute("UPDATE schedules SET run_after = now() + interval '10 minutes' WHERE name = 'retention_sweep'")
    thread = threading.Thread(target=QueueWorker(schedules, pool, db_url, concurrency=1, poll_ms=600_000,
                                                 stop=stop).run)
    thread.start()
    try:
        wait_for(lambda: owner.execute("SELECT count(*) AS n FROM pg_stat_activity "
                                       "WHERE query = 'LISTEN retention_sweep'").fetchone()["n"])
        long_ago = (dt.datetime.now(dt.timezone.utc) - dt.timedelta(days=40)).isoformat()
        cancel(client, A, long_ago)
        wait_for(lambda: erasure_request(owner, A)["status"] == "completed", seconds=30,
                 on_timeout=lambda: erasure_request(owner, A)["status"])
        assert erasure_request(owner, B) is None
    finally:
        stop.set()
        thread.join()

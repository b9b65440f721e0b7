"""Retention with a driven clock: run summaries at 31 days go, at 29 days stay,
a run under a legal hold stays; bounded batches; terminal inbox rows and jobs;
a batch killed mid-way; batches racing; a hold placed while a batch runs."""
from __future__ import annotations

import datetime as dt
import threading

import psycopg
import pytest
from psycopg.rows import dict_row

from app import sql_api
from app.config import RetentionSettings
from tests.helpers.access import seed_repository
from tests.helpers.service import make_config, make_lifecycle_jobs, race, wait_for
from tests.helpers.retention import (audit, call, deliver_pull_request, finished_run, ingest, place_hold)
from workers.retention import RetentionWorker

T0 = dt.datetime.now(dt.timezone.utc).replace(microsecond=0)
OLD, YOUNG = T0 - dt.timedelta(days=31), T0 - dt.timedelta(days=29)
MINE, HELD = (701, 7_010_001), (702, 7_020_001)   # (installation, repository)


@pytest.fixture
def runs(owner, pool):
    """Old and young runs, comments and ingested results of one account, and an old run of a held account."""
    seed_repository(owner, account_id=71, installation_id=MINE[0], repository_id=MINE[1])
    seed_repository(owner, account_id=72, installation_id=HELD[0], repository_id=HELD[1], login="held")
    made = {
        "old": finished_run(owner, pool, MINE[1], pr_number=1, started_at=OLD, comment_at=OLD),
        "young": finished_run(owner, pool, MINE[1], pr_number=2, started_at=YOUNG, comment_at=YOUNG),
        "held": finished_run(owner, pool, HELD[1], pr_number=1, started_at=OLD, comment_at=OLD),
        "old_ingested": ingest(pool, MINE[1], now=OLD),
        "young_ingested": ingest(pool, MINE[1], now=YOUNG),
        "held_ingested": ingest(pool, HELD[1], now=OLD),
    }
    assert place_hold(pool, 72, "hold-72", now=OLD)["outcome"] == "placed"
    return made


def run_rows(owner, release_run_id: int) -> dict:
    """What one run holds, table by table."""
    one = lambda q: owner.execute(q, (release_run_id,)).fetchone()["n"]
    return {
        "release_runs": one("SELECT count(*) AS n FROM release_runs WHERE id = %s"),
        "release_run_attempts": one("SELECT count(*) AS n FROM release_run_attempts WHERE release_run_id = %s"),
        "run_results": one("SELECT count(*) AS n FROM run_results WHERE release_run_id = %s"),
        "run_findings": one("SELECT count(*) AS n FROM run_findings f JOIN run_results r ON r.id = f.run_result_id "
                            "WHERE r.release_run_id = %s"),
        "reviews": one("SELECT count(*) AS n FROM reviews WHERE release_run_id = %s"),
        "outbox_items": one("SELECT count(*) AS n FROM outbox_items WHERE release_run_id = %s"),
        "pull_request_comments": one("SELECT count(*) AS n FROM pull_request_comments c JOIN release_runs rr "
                                     "ON (rr.repository_id, rr.pr_number) = (c.repository_id, c.pr_number) "
                                     "WHERE rr.id = %s"),
    }


def result_rows(owner, run_result_id: int) -> int:
    return owner.execute("SELECT (SELECT count(*) FROM run_results WHERE id = %(id)s) "
                         "+ (SELECT count(*) FROM run_findings WHERE run_result_id = %(id)s) AS n",
                         {"id": run_result_id}).fetchone()["n"]


def purge(pool, batch_size: int, now=T0, days: int = 30) -> list[dict]:
    """Batches until one finds nothing left; every batch within its bound."""
    sweeper = RetentionWorker(RetentionSettings(run_retention_days=days, batch_size=batch_size), pool)
    rows = []
    while (row := sweeper.retention_batch(now))["outcome"] == "purged":
        assert 0 < row["deleted_rows"] <= batch_size, row
        rows.append(row)
    assert row["outcome"] in ("completed", "idle"), row
    return rows + [row]


def totals(rows: list[dict]) -> dict:
    summed: dict = {}
    for row in rows:
        for table, n in row["deleted"].items():
            summed[table] = summed.get(table, 0) + n
    return summed


def test_runs_at_31_days_go_at_29_days_stay_and_a_held_run_stays(owner, pool, runs):
    old, young, held = (run_rows(owner, runs[k]["id"]) for k in ("old", "young", "held"))
    assert all(old.values()) and all(young.values()) and all(held.values())

    batches = purge(pool, batch_size=5)
    assert len(batches) > 3
    assert not any(run_rows(owner, runs["old"]["id"]).values())
    assert run_rows(owner, runs["young"]["id"]) == young
    assert run_rows(owner, runs["held"]["id"]) == held
    assert result_rows(owner, runs["old_ingested"]) == 0
    assert result_rows(owner, runs["young_ingested"]) == result_rows(owner, runs["held_ingested"]) == 3

    sweep = owner.execute("SELECT * FROM ops.retention_sweeps").fetchone()
    deleted = totals(batches)
    assert sweep["deleted"] == deleted and sweep["batches"] == len(batches) - 1
    assert deleted["release_runs"] == 1 and deleted["pull_request_comments"] == 1
    assert deleted["run_results"] == 2                          # the old run's and the old ingested one
    assert deleted["run_findings"] == old["run_findings"] + 2
    [event] = audit(owner, "control_plane.retention_purged")
    assert str(event["id"]) == str(sweep["audit_event_id"]) == str(batches[-1]["audit_event_id"])
    assert set(event["details"]) == {"sweepId", "retentionDays", "cutoff", "batches", "deleted"}
    assert event["details"]["deleted"] == deleted and event["details"]["retentionDays"] == 30
    # The run's own audit trail stays (ids and codes only).
    assert owner.execute("SELECT count(*) AS n FROM audit_events WHERE event_type = 'release_run.result_accepted'"
                         ).fetchone()["n"] == 3

    again = RetentionWorker(RetentionSettings(batch_size=5), pool).retention_batch(T0)
    assert again["outcome"] == "idle" and len(audit(owner, "control_plane.retention_purged")) == 1


def test_the_window_moves_with_the_clock_and_the_setting(owner, pool, runs):
    # Two days ago, the oldest was 29 days old: nothing to do.
    assert [r["outcome"] for r in purge(pool, batch_size=1000, now=T0 - dt.timedelta(days=2))] == ["idle"]
    assert run_rows(owner, runs["old"]["id"])["release_runs"] == 1
    purge(pool, batch_size=1000, days=28)                           # a shorter window takes the 29-day run too
    assert run_rows(owner, runs["young"]["id"])["release_runs"] == 0
    assert run_rows(owner, runs["held"]["id"])["release_runs"] == 1


def test_a_run_with_a_call_pending_waits(owner, pool, runs):
    owner.execute("UPDATE outbox_items SET status = 'accepted' WHERE release_run_id = %s AND kind = 'pr_comment'",
                  (runs["old"]["id"],))
    purge(pool, batch_size=1000)
    assert run_rows(owner, runs["old"]["id"])["release_runs"] == 1
    owner.execute("UPDATE outbox_items SET status = 'completed' WHERE release_run_id = %s", (runs["old"]["id"],))
    purge(pool, batch_size=1000)
    assert run_rows(owner, runs["old"]["id"])["release_runs"] == 0


def inbox(owner) -> dict[str, str | None]:
    return {r["delivery_id"]: r["job_status"] for r in owner.execute(
        "SELECT i.delivery_id, j.status AS job_status FROM webhook_inbox i LEFT JOIN lifecycle_jobs j "
        "ON j.inbox_id = i.id ORDER BY i.id").fetchall()}


def test_inbox_rows_and_jobs_past_the_window_go_once_terminal(owner, pool, client):
    seed_repository(owner, account_id=71, installation_id=MINE[0], repository_id=MINE[1])
    seed_repository(owner, account_id=72, installation_id=HELD[0], repository_id=HELD[1], login="held")
    for delivery in ("done", "pending", "dead", "leased"):
        deliver_pull_request(client, MINE[0], MINE[1], delivery)
    deliver_pull_request(client, HELD[0], HELD[1], "held-done")
    make_lifecycle_jobs(owner)
    owner.execute("UPDATE lifecycle_jobs SET status = 'completed', completed_at = now() "
                  "WHERE idempotency_key IN ('host:done', 'host:held-done')")
    owner.execute("UPDATE lifecycle_jobs SET status = 'dead_letter', failed_at = now(), reason_code = 'handler_error',"
                  " error_class = 'X' WHERE idempotency_key = 'host:dead'")
    owner.execute("UPDATE lifecycle_jobs SET status = 'leased', lease_token = gen_random_uuid(), "
                  "leased_until = now() + interval '1 minute' WHERE idempotency_key = 'host:leased'")
    # Evidence without a job: a delivery of an event no job handles.
    owner.execute("INSERT INTO webhook_inbox (provider, delivery_id, idempotency_key, event, installation_id, actions, "
                  "payload_sha256, payload_bytes, state, received_at, updated_at) VALUES ('host', 'evidence', "
                  "'host:evidence', 'push', %s, '{}', repeat('0', 64), 10, 'processed', now(), now())", (MINE[0],))
    place_hold(pool, 72, "hold-72")
    before = inbox(owner)

    purge(pool, batch_size=1000, now=T0 + dt.timedelta(days=29))
    assert inbox(owner) == before
    rows = purge(pool, batch_size=3, now=T0 + dt.timedelta(days=31))
    assert inbox(owner) == {"pending": "accepted", "leased": "leased", "held-done": "completed"}
    assert totals(rows) == {"lifecycle_jobs": 2, "webhook_inbox": 3}


def test_a_batch_killed_mid_way_changes_nothing_and_the_sweep_resumes(owner, pool, runs, db_url):
    old = run_rows(owner, runs["old"]["id"])
    first = purge_one(pool, T0, batch_size=4)
    assert first["outcome"] == "purged"
    doomed = psycopg.connect(db_url, row_factory=dict_row)
    doomed.execute("SET ROLE boardready_api")
    assert sql_api.retention_purge_batch(doomed, retention_days=30, batch_size=4,
                                         now=T0)["outcome"] == "purged"   # deleted, not committed: the process dies
    pid = doomed.info.backend_pid
    owner.execute("SELECT pg_terminate_backend(%s)", (pid,))
    with pytest.raises(psycopg.OperationalError):
        doomed.commit()
    doomed.close()
    wait_for(lambda: not owner.execute("SELECT count(*) AS n FROM pg_stat_activity WHERE pid = %s",
                                       (pid,)).fetchone()["n"])
    sweep = owner.execute("SELECT * FROM retention_sweeps").fetchone()
    assert (sweep["batches"], sweep["deleted"], sweep["completed_at"]) == (1, first["deleted"], None)

    rest = purge(pool, batch_size=4)
    assert totals([first, *rest])["run_findings"] == old["run_findings"] + 2
    assert not any(run_rows(owner, runs["old"]["id"]).values())
    sweep = owner.execute("SELECT * FROM retention_sweeps").fetchone()
    assert sweep["completed_at"] == T0 and sweep["deleted"] == totals([first, *rest])


def purge_one(pool, now, batch_size: int) -> dict:
    return call(pool, sql_api.retention_purge_batch, retention_days=30, batch_size=batch_size, now=now)


def test_a_second_batch_while_one_runs_is_busy(owner, pool, runs, db_url):
    with psycopg.connect(db_url, row_factory=dict_row) as first:   # a transaction left open
        first.execute("SET ROLE boardready_api")
        assert sql_api.retention_purge_batch(first, retention_days=30, batch_size=4, now=T0)["outcome"] == "purged"
        assert purge_one(pool, T0, 4)["outcome"] == "busy"
        first.commit()
    assert purge_one(pool, T0, 4)["outcome"] == "purged"


def test_batches_racing_delete_each_row_once(owner, pool, runs, db_url):
    old = run_rows(owner, runs["old"]["id"])

    def sweep(conn) -> list[dict]:
        rows = []
        for _ in range(500):
            rows.append(sql_api.retention_purge_batch(conn, retention_days=30, batch_size=3, now=T0))
            if rows[-1]["outcome"] in ("completed", "idle"):
                return rows
        return rows

    rows = [row for batch in race(db_url, 3, sweep) for row in batch]
    done = totals([r for r in rows if r["outcome"] == "purged"])
    assert done["release_runs"] == 1 and done["run_findings"] == old["run_findings"] + 2
    assert not any(run_rows(owner, runs["old"]["id"]).values())
    assert owner.execute("SELECT deleted FROM retention_sweeps").fetchone()["deleted"] == done
    assert len(audit(owner, "control_plane.retention_purged")) == 1


def test_a_hold_placed_while_a_batch_runs_waits_for_it_and_binds_the_next(owner, pool, runs, db_url):
    seed_repository(owner, account_id=73, installation_id=703, repository_id=7_030_001, login="late")
    late = finished_run(owner, pool, 7_030_001, started_at=OLD, comment_at=OLD)
    placed = {}
    with psycopg.connect(db_url, row_factory=dict_row) as batch:   # a batch in flight, not committed
        batch.execute("SET ROLE boardready_api")
        sql_api.retention_purge_batch(batch, retention_days=30, batch_size=1, now=T0)
        placing = threading.Thread(target=lambda: placed.update(place_hold(pool, 73, "late-hold")))
        placing.start()
        wait_for(lambda: owner.execute("SELECT count(*) AS n FROM pg_locks WHERE locktype = 'advisory' "
                                       "AND NOT granted").fetchone()["n"])
        assert placed == {}                                          # waits for the batch
        batch.commit()
    placing.join()
    assert placed["outcome"] == "placed"
    purge(pool, batch_size=1000)
    assert run_rows(owner, late["id"])["release_runs"] == 1


def test_a_failing_erasure_does_not_stop_retention(owner, pool, runs):
    class BrokenEraser(RetentionWorker):
        def erasure_step(self, now=None):
            raise psycopg.errors.RaiseException("erasure_incomplete")

    report = BrokenEraser(RetentionSettings(batch_size=1000), pool).sweep_once(T0)
    assert [type(e).__name__ for e in report.errors] == ["RaiseException"]
    assert report.retention[-1]["outcome"] == "completed"
    assert run_rows(owner, runs["old"]["id"])["release_runs"] == 0


def test_settings_are_read_and_bounded():
    config = make_config()
    assert config.retention == RetentionSettings(run_retention_days=30, batch_size=1000, interval_ms=60_000)
    tuned = make_config(SERVICE_RUN_RETENTION_DAYS="7", SERVICE_RETENTION_BATCH_SIZE="50",
                        SERVICE_RETENTION_INTERVAL_MS="100")
    assert tuned.retention == RetentionSettings(run_retention_days=7, batch_size=50, interval_ms=100)
    wrong = make_config(SERVICE_RUN_RETENTION_DAYS="31", SERVICE_RETENTION_BATCH_SIZE="0",
                        SERVICE_RETENTION_INTERVAL_MS="99")
    assert wrong.retention == RetentionSettings()                   # never longer than the plan's 30 days
    assert set(wrong.invalid) >= {"SERVICE_RUN_RETENTION_DAYS", "SERVICE_RETENTION_BATCH_SIZE",
                                  "SERVICE_RETENTION_INTERVAL_MS"}
    assert not set(wrong.missing) & {"SERVICE_RUN_RETENTION_DAYS"}  # a tuning knob: readiness is not affected

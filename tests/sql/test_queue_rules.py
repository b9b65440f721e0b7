"""The queue rules as the service calls them, through the API role (which may
only EXECUTE): every public function runs as the owner, and the schedules'
rules (queue.sql.j2 rendered for boardready.schedules) let one replica run a
due tick, another take it over only when its lease has run out, and the
holder whose lease was taken over no longer complete, release or renew it."""
from __future__ import annotations

import datetime as dt

import psycopg

from app import sql_api

T0 = dt.datetime.now(dt.timezone.utc) + dt.timedelta(hours=1)   # every schedule is due by then
LEASE = 60


def claim(pool, worker: str, now: dt.datetime, names=("slo_evaluate",), due_now=()) -> list[dict]:
    with pool.connection() as conn:
        return sql_api.schedule_claim(conn, names=list(names), worker=worker, lease_seconds=LEASE, now=now,
                                      due_now=list(due_now))


def schedule(owner, name: str = "slo_evaluate") -> dict:
    return owner.execute("SELECT * FROM boardready.schedules WHERE name = %s", (name,)).fetchone()


def test_every_public_function_runs_as_the_owner_with_a_fixed_search_path(pg_server, template_db):
    """One that ran as its caller would fail for the API role at its first
    table or private helper (job_complete and queue_complete once did)."""
    with psycopg.connect(pg_server.url(template_db)) as conn:
        as_caller = conn.execute(
            "SELECT p.proname FROM pg_proc p WHERE p.pronamespace = 'boardready'::regnamespace "
            "AND NOT (p.prosecdef AND 'search_path=boardready, pg_temp' = ANY (p.proconfig)) ORDER BY 1").fetchall()
    assert as_caller == []


def test_a_tick_is_taken_over_only_after_its_lease_ran_out(pool, owner):
    [first] = claim(pool, "a", T0)
    assert (first["name"], first["attempts"]) == ("slo_evaluate", 1)
    assert claim(pool, "b", T0 + dt.timedelta(seconds=LEASE - 1)) == []
    later = T0 + dt.timedelta(seconds=LEASE + 1)
    [second] = claim(pool, "b", later)
    assert second["schedule_id"] == first["schedule_id"] and second["lease_token"] != first["lease_token"]
    assert second["attempts"] == 2
    with pool.connection() as conn:
        assert sql_api.schedule_complete(conn, schedule_id=first["schedule_id"], lease_token=first["lease_token"],
                                         interval_ms=30_000, outcome="evaluated", now=later) is False
        assert sql_api.schedule_release(conn, schedule_id=first["schedule_id"], lease_token=first["lease_token"],
                                        now=later)["outcome"] == "lease_lost"
        assert sql_api.schedule_renew_leases(conn, ids=[first["schedule_id"]], lease_tokens=[first["lease_token"]],
                                             lease_seconds=LEASE, now=later) == []
        assert sql_api.schedule_complete(conn, schedule_id=second["schedule_id"], lease_token=second["lease_token"],
                                         interval_ms=30_000, outcome="evaluated", now=later) is True
    row = schedule(owner)
    assert (row["status"], row["attempts"], row["outcome"], row["leased_by"]) == ("accepted", 0, "evaluated", None)
    assert row["run_after"] == later + dt.timedelta(seconds=30)
    assert claim(pool, "c", later + dt.timedelta(seconds=29)) == []


def test_a_released_tick_is_due_at_once_and_its_attempt_not_counted(pool, owner):
    [held] = claim(pool, "a", T0)
    with pool.connection() as conn:
        assert sql_api.schedule_renew_leases(conn, ids=[held["schedule_id"]], lease_tokens=[held["lease_token"]],
                                             lease_seconds=LEASE * 10, now=T0) == [held["schedule_id"]]
        assert sql_api.schedule_release(conn, schedule_id=held["schedule_id"], lease_token=held["lease_token"],
                                        now=T0)["outcome"] == "released"
    assert (schedule(owner)["status"], schedule(owner)["attempts"]) == ("accepted", 0)
    [again] = claim(pool, "b", T0)
    assert again["attempts"] == 1


def test_a_tick_asked_for_now_is_brought_forward(pool, owner):
    owner.execute("UPDATE boardready.schedules SET run_after = %s WHERE name = 'retention_sweep'",
                  (T0 + dt.timedelta(hours=1),))
    names = ("retention_sweep", "slo_evaluate")
    assert [row["name"] for row in claim(pool, "a", T0, names=names)] == ["slo_evaluate"]
    assert [row["name"] for row in claim(pool, "a", T0, names=names, due_now=["retention_sweep"])] == \
        ["retention_sweep"]


def test_a_supply_item_its_apply_left_open_is_completed_by_the_one_completion_rule(pool, owner):
    """supply_work_complete completes what supply_check_apply did not (a check
    no longer pending) with work_complete, lease checked and ended."""
    owner.execute("INSERT INTO boardready.work_items (kind, subject_id, status, run_after, created_at, updated_at) "
                  "VALUES ('supply_check', 987654, 'accepted', %s, %s, %s)", (T0, T0, T0))
    with pool.connection() as conn:
        [item] = sql_api.work_claim(conn, kinds=["supply_check"], worker="a", limit=1, lease_seconds=LEASE,
                                    max_attempts=3, now=T0)
        done = sql_api.supply_work_complete(conn, item_id=item["item_id"], lease_token=item["lease_token"], now=T0)
        assert done["outcome"] == "not_pending"
        again = sql_api.supply_work_complete(conn, item_id=item["item_id"], lease_token=item["lease_token"], now=T0)
        assert again["outcome"] == "lease_lost"
    row = owner.execute("SELECT * FROM boardready.work_items WHERE id = %s", (item["item_id"],)).fetchone()
    assert (row["status"], row["outcome"], row["lease_token"], row["leased_by"], row["completed_at"]) == \
        ("completed", "not_pending", None, None, T0)

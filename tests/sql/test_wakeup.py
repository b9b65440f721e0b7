"""The API's waker (app/wakeup.py): a poke reaches a listener as a NOTIFY, and a
stream of pokes costs at most one NOTIFY per interval, not one each."""
from __future__ import annotations

import time

import psycopg

from app.wakeup import Waker


def listen(db_url: str, channel: str) -> psycopg.Connection:
    conn = psycopg.connect(db_url, autocommit=True)
    conn.execute(f"LISTEN {channel}")
    return conn


def received(listener: psycopg.Connection, seconds: float) -> int:
    """How many notifications arrive within `seconds`."""
    return sum(1 for _ in listener.notifies(timeout=seconds))


def test_a_poke_after_a_quiet_spell_notifies_the_listener(db_url, pool):
    with listen(db_url, "wake_test_single") as listener:
        Waker(pool, "wake_test_single").poke()
        assert next(listener.notifies(timeout=10, stop_after=1)).channel == "wake_test_single"


def test_a_stream_of_pokes_sends_at_most_one_notify_per_interval(db_url, pool):
    with listen(db_url, "wake_test_stream") as listener:
        waker = Waker(pool, "wake_test_stream")
        started = time.monotonic()
        while time.monotonic() - started < 0.3:  # a delivery every half millisecond
            waker.poke()
            time.sleep(0.0005)
        count = received(listener, seconds=1)
        elapsed = time.monotonic() - started
    # The waker pauses MIN_INTERVAL_SECONDS after each NOTIFY, so however the
    # machine schedules it, no more than this many fit in the time that
    # passed; one NOTIFY per poke would be hundreds.
    assert 2 <= count <= elapsed / Waker.MIN_INTERVAL_SECONDS + 1


def test_a_poke_after_the_pause_is_not_lost(db_url, pool):
    with listen(db_url, "wake_test_later") as listener:
        waker = Waker(pool, "wake_test_later")
        waker.poke()
        assert received(listener, seconds=1) == 1
        waker.poke()  # well after the first NOTIFY's pause ended
        assert next(listener.notifies(timeout=10, stop_after=1)).channel == "wake_test_later"

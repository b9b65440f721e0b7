"""database.call()'s cursor: one per connection, handed to whichever thread
checks the connection out of the pool, and never shared by two threads that
use one connection at once."""
from __future__ import annotations

import threading

import psycopg

from app import database


def cursor_used_by_a_call(conn) -> psycopg.Cursor:
    database.call(conn, "health_probe")
    return conn._boardready_call_cursor[1]


def in_thread(work):
    result = []
    thread = threading.Thread(target=lambda: result.append(work()))
    thread.start()
    thread.join()
    return result[0]


def test_a_pooled_connection_keeps_its_cursor_from_one_thread_to_the_next(db_url):
    pool = database.create_pool(db_url, max_size=1, name="cursor-test", open_wait_seconds=10)
    try:
        def checkout_and_call():
            with database.connection(pool) as conn:
                return cursor_used_by_a_call(conn)

        first, second = in_thread(checkout_and_call), in_thread(checkout_and_call)
        assert first is second
    finally:
        pool.close()


def test_threads_sharing_a_connection_outside_a_checkout_get_their_own_cursors(db_url):
    with psycopg.connect(db_url, autocommit=True) as conn:
        conn.execute("SET search_path = boardready, public")
        mine = cursor_used_by_a_call(conn)
        theirs = in_thread(lambda: cursor_used_by_a_call(conn))
        assert theirs is not mine

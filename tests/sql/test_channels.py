"""The NOTIFY channels are named once, in app/channels.py: every channel a
function body notifies and every channel a queue listens on is one of them,
and each one named is notified by something and listened on by something."""
from __future__ import annotations

import re

from app import channels, migrations
from app.host.outbox import OutboxQueue
from workers.lifecycle import LifecycleQueue
from workers.reconcilers import ReconciliationQueue
from workers.schedules import ScheduleQueue
from workers.supply import SupplyQueue


def notified_in_sql() -> set[str]:
    """The channels sql/functions notifies (the queue template rendered):
    pg_notify('<literal>', ...), a released row's channel (RETURNING '<literal>'
    INTO v_channel) and the literals work_channel chooses among."""
    text = "\n".join(sql for _, sql in migrations.function_sources())
    named = set(re.findall(r"pg_notify\('([a-z_]+)'", text)) | set(re.findall(r"RETURNING '([a-z_]+)' INTO v_channel", text))
    work_channel = re.search(r"FUNCTION boardready_private\.work_channel.*?\$\$(.*?)\$\$", text, re.S)
    assert work_channel, "work_channel is where a work item's channel is chosen"
    return named | set(re.findall(r"(?:THEN|ELSE) '([a-z_]+)'", work_channel.group(1)))


def listened() -> set[str]:
    found = set()
    for queue in (OutboxQueue, LifecycleQueue, ReconciliationQueue, ScheduleQueue, SupplyQueue):
        found.update(getattr(queue, "channels", None) or (queue.channel,))
    return found


def test_every_channel_is_named_once():
    assert sorted(notified_in_sql() - set(channels.ALL)) == [], "a function notifies a channel app/channels.py lacks"
    assert sorted(listened() - set(channels.ALL)) == [], "a queue listens on a channel app/channels.py lacks"


def test_every_named_channel_is_used_both_ways():
    assert sorted(set(channels.ALL) - listened()) == [], "nobody listens"
    assert sorted(set(channels.ALL) - notified_in_sql()) == [], "nothing notifies"

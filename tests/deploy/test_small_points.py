"""Smaller deployment points of issue 39: the operator's audit name is not
doubled, and supply tracking switched off is quiet."""
from __future__ import annotations

import threading

from app import config as config_module
from workers import registry


def test_an_operator_id_written_with_its_prefix_is_audited_once():
    for written, audited in (("operator:alice", "alice"), ("alice", "alice"), ("ops:alice", "ops:alice")):
        assert config_module.load({"SERVICE_OPERATOR_ACTOR_ID": written}).operator_actor_id == audited


def test_supply_tracking_off_comes_round_once_a_day(config, pool, db_url):
    """Not every poll interval (a second by default), each time only to log supply_disabled."""
    assert not config.supply.enabled
    queues = registry.build_queues(config, db_url, pool, threading.Event())
    assert queues.schedules.intervals["board_refresh"] == 86_400_000
    assert queues.schedules.poll_ms < 86_400_000           # the others keep their pace

"""Supply work: fetches part-lifecycle observations from the component
provider for pull request supply checks (first: a check run waits for them)
and for the watched boards' daily refresh.

The work is work_items (kinds supply_check and board_refresh), run by the one
worker loop with queue.sql.j2's rules: a lease token checked on completion
(supply_work_complete), renewal while a fetch runs, backoff and dead letters
on failure, operator replay (item type `supply`). The board_refresh schedule
enqueues the boards due (workers/schedules.py).

Every provider call asks SQL first (component_provider_acquire: the
installation's per-minute budget and its circuit breaker, shared by every
replica) and reports its outcome after (component_provider_record). Work over
the budget, or behind another replica's half-open trial, waits: the item is
deferred to when the budget allows (not an attempt). A failed call defers the
item a moment and counts against the breaker, so retries stop when the
breaker opens; with the breaker open a pull request's check is applied with
what is known and one info finding saying supply data was unavailable (the
decision never waits on an outage), and a board's refresh waits for the cooldown.

Events: worker.supply_fetched, worker.supply_call_failed (reason only),
worker.supply_check_applied, worker.supply_board_refreshed.
"""
from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import TypeVar

from psycopg.types.json import Jsonb

from app import channels, database, sql_api
from app.jsonlog import log
from app.queueing import LeaseLost, SqlQueue
from app.supply.client import MAX_PARTS_PER_CALL, PartQuery, ProviderClient, ProviderError

FAILURE_RETRY_MS = 1000          # a failed call: try again soon, the breaker bounds the retries
REFRESH_EVERY = dt.timedelta(days=1)
T = TypeVar("T")


def _utcnow() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


class SupplyQueue(SqlQueue):
    name = "supply"
    channel = channels.SUPPLY
    table = "work_items"
    work_queue = "supply"
    id_field = "item_id"

    def __init__(self, settings, pool=None, *, lease_seconds: int = 60, max_attempts: int = 5,
                 client: ProviderClient | None = None, now: Callable[[], dt.datetime] = _utcnow):
        self.settings = settings
        self.pool = pool  # for tick(); the worker loop passes its pool to each handler
        self.lease_seconds, self.max_attempts = lease_seconds, max_attempts
        self.client = client or ProviderClient(settings)
        self.now = now
        self.handlers = {"supply_check": self._check, "board_refresh": self._board}

    @staticmethod
    def _call(pool, function: Callable[..., T], **params) -> T:
        """`function` (app/sql_api.py's) on a connection of its own."""
        with database.connection(pool) as conn:
            return function(conn, **params)

    def claim(self, conn, worker_id: str, limit: int) -> list[dict]:
        return sql_api.supply_work_claim_v2(conn, worker=worker_id, limit=limit, lease_seconds=self.lease_seconds,
                                            max_attempts=self.max_attempts,
                                            max_age_hours=self.settings.observation_max_age_hours, now=self.now())

    def fail(self, conn, item: dict, exc: BaseException, **facts) -> dict:
        """work_fail at this queue's clock (tests drive it): backoff, then a dead letter."""
        return super().fail(conn, item, exc, now=self.now(), **facts)

    # -- the handlers ---------------------------------------------------------
    def _fetch_all(self, pool, item: dict) -> tuple[str, object]:
        """("fetched", None), ("wait", ms) or ("unavailable", reason) for the item's parts."""
        parts = [PartQuery(p["partKey"], p.get("manufacturer"), p["mpn"]) for p in item["parts"]]
        for start in range(0, len(parts), MAX_PARTS_PER_CALL):
            outcome, value = self.fetch(pool, item["installation_id"], parts[start:start + MAX_PARTS_PER_CALL])
            if outcome != "fetched":
                return outcome, value
        return "fetched", None

    def _complete(self, pool, item: dict, **report) -> dict:
        row = self._call(pool, sql_api.supply_work_complete, item_id=item["item_id"], lease_token=item["lease_token"],
                         now=self.now(), **report)
        if row["outcome"] == "lease_lost":
            raise LeaseLost()
        return row

    def _defer(self, pool, item: dict, wait_ms) -> str:
        row = self._call(pool, sql_api.work_defer, item_id=item["item_id"], lease_token=item["lease_token"],
                         run_after=self.now() + dt.timedelta(milliseconds=wait_ms), now=self.now())
        if row["outcome"] == "lease_lost":
            raise LeaseLost()
        return row["outcome"]

    def _check(self, pool, item: dict) -> str:
        outcome, value = self._fetch_all(pool, item)
        if outcome == "wait":
            return self._defer(pool, item, value)
        row = self._complete(pool, item, unavailable_reason=value if outcome == "unavailable" else None)
        log("worker.supply_check_applied", runResultId=item["subject_id"], outcome=row["outcome"],
            findings=row["findings_added"])
        return row["outcome"]

    def _board(self, pool, item: dict) -> str:
        outcome, value = self._fetch_all(pool, item)
        if outcome == "wait":
            return self._defer(pool, item, value)
        if outcome == "unavailable":
            cooldown = dt.timedelta(milliseconds=self.settings.breaker_cooldown_ms)
            return self._complete(pool, item, refreshed=False, next_after=self.now() + cooldown)["outcome"]
        row = self._complete(pool, item, refreshed=True, next_after=self.now() + REFRESH_EVERY)
        log("worker.supply_board_refreshed", boardId=item["subject_id"], parts=len(item["parts"]))
        return row["outcome"]

    def fetch(self, pool, installation_id: int, batch: list[PartQuery]) -> tuple[str, object]:
        """("fetched", n), ("wait", ms) or ("unavailable", reason) for one provider call."""
        s = self.settings
        grant = self._call(pool, sql_api.component_provider_acquire, installation_id=installation_id,
                           limit_per_minute=s.rate_limit_per_minute, cooldown_ms=s.breaker_cooldown_ms,
                           now=self.now())
        if grant["outcome"] in ("rate_limited", "trial_in_flight"):
            return "wait", grant["retry_after_ms"]
        if grant["outcome"] == "breaker_open":
            return "unavailable", "breaker_open"
        try:
            observed = self.client.match(batch)
        except ProviderError as exc:
            self._call(pool, sql_api.component_provider_record, installation_id=installation_id, success=False,
                       trial_token=grant["trial_token"], threshold=s.breaker_threshold, now=self.now())
            log("worker.supply_call_failed", level="warning", installationId=installation_id, reason=exc.reason)
            return "wait", exc.retry_after_ms or FAILURE_RETRY_MS
        with database.connection(pool) as conn, conn.transaction():
            # The observations and the breaker's success are one transaction.
            sql_api.supply_observations_record(conn, installation_id=installation_id, parts=Jsonb(observed),
                                               now=self.now())
            sql_api.component_provider_record(conn, installation_id=installation_id, success=True,
                                              trial_token=grant["trial_token"], threshold=s.breaker_threshold,
                                              now=self.now())
        log("worker.supply_fetched", installationId=installation_id, parts=len(batch))
        return "fetched", len(observed)

"""The supply worker: fetches part-lifecycle observations from the component
provider for pull request supply checks (first: a check run waits for them)
and for the watched boards' daily refresh.

Every provider call asks SQL first (component_provider_acquire: the
installation's per-minute budget and its circuit breaker, shared by every
replica) and reports its outcome after (component_provider_record). Work over
the budget, or behind another replica's half-open trial, waits: the item is
deferred to when the budget allows. A failed call defers the item a moment
and counts against the breaker, so retries stop when the breaker opens; with
the breaker open a pull request's check is applied with what is known and one
info finding saying supply data was unavailable (the decision never waits on
an outage), and a board's refresh waits for the cooldown.

Events: worker.supply_fetched, worker.supply_call_failed (reason only),
worker.supply_check_applied, worker.supply_board_refreshed, worker.supply_failed.
"""
from __future__ import annotations

import datetime as dt
import threading
from typing import Callable

import psycopg
from psycopg.types.json import Jsonb

from app import database
from app.jsonlog import log
from app.supply.client import MAX_PARTS_PER_CALL, PartQuery, ProviderClient, ProviderError

LEASE_SECONDS = 120
FAILURE_RETRY_MS = 1000          # a failed call: try again soon, the breaker bounds the retries
REFRESH_EVERY = dt.timedelta(days=1)


def _utcnow() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc)


class SupplyWorker:
    name = "supply"

    def __init__(self, settings, pool, stop: threading.Event | None = None, client: ProviderClient | None = None,
                 now: Callable[[], dt.datetime] = _utcnow):
        self.settings = settings
        self.pool = pool
        self.stop = stop or threading.Event()
        self.client = client or ProviderClient(settings)
        self.now = now

    def run(self) -> None:
        while not self.stop.is_set():
            try:
                busy = self.tick()
            except psycopg.Error as exc:
                log("worker.supply_failed", level="error", errorClass=type(exc).__name__)
                busy = False
            if not busy:
                self.stop.wait(self.settings.poll_ms / 1000)

    def _call(self, function: str, **params) -> dict | None:
        with database.connection(self.pool) as conn:
            rows = database.call(conn, function, **params)
        return rows[0] if rows else None

    def tick(self) -> bool:
        """One item of work, if any is due. Returns whether there was one."""
        item = self._call("supply_work_claim", p_lease_seconds=LEASE_SECONDS,
                          p_max_age_hours=self.settings.observation_max_age_hours, p_now=self.now())
        if item is None:
            return False
        parts = [PartQuery(p["partKey"], p.get("manufacturer"), p["mpn"]) for p in item["parts"]]
        unavailable = None
        for start in range(0, len(parts), MAX_PARTS_PER_CALL):
            outcome, value = self.fetch(item["installation_id"], parts[start:start + MAX_PARTS_PER_CALL])
            if outcome == "wait":
                self._call("supply_work_defer", p_kind=item["kind"], p_item_id=item["item_id"],
                           p_run_after=self.now() + dt.timedelta(milliseconds=value))
                return True
            if outcome == "unavailable":
                unavailable = value
                break
        if unavailable and item["kind"] == "board":
            self._call("supply_board_refreshed", p_board_id=item["item_id"], p_refreshed=False,
                       p_next_after=self.now() + dt.timedelta(milliseconds=self.settings.breaker_cooldown_ms),
                       p_now=self.now())
        elif item["kind"] == "board":
            self._call("supply_board_refreshed", p_board_id=item["item_id"], p_refreshed=True,
                       p_next_after=self.now() + REFRESH_EVERY, p_now=self.now())
            log("worker.supply_board_refreshed", boardId=item["item_id"], parts=len(parts))
        else:
            row = self._call("supply_check_apply", p_run_result_id=item["item_id"],
                             p_unavailable_reason=unavailable, p_now=self.now())
            log("worker.supply_check_applied", runResultId=item["item_id"], outcome=row["outcome"],
                findings=row["findings_added"])
        return True

    def fetch(self, installation_id: int, batch: list[PartQuery]) -> tuple[str, object]:
        """("fetched", n), ("wait", ms) or ("unavailable", reason) for one provider call."""
        s = self.settings
        grant = self._call("component_provider_acquire", p_installation_id=installation_id,
                           p_limit_per_minute=s.rate_limit_per_minute, p_cooldown_ms=s.breaker_cooldown_ms,
                           p_now=self.now())
        if grant["outcome"] in ("rate_limited", "trial_in_flight"):
            return "wait", grant["retry_after_ms"]
        if grant["outcome"] == "breaker_open":
            return "unavailable", "breaker_open"
        try:
            observed = self.client.match(batch)
        except ProviderError as exc:
            self._call("component_provider_record", p_installation_id=installation_id, p_success=False,
                       p_trial_token=grant["trial_token"], p_threshold=s.breaker_threshold, p_now=self.now())
            log("worker.supply_call_failed", level="warning", installationId=installation_id, reason=exc.reason)
            return "wait", exc.retry_after_ms or FAILURE_RETRY_MS
        with database.connection(self.pool) as conn, conn.transaction():
            # The observations and the breaker's success are one transaction.
            database.call(conn, "supply_observations_record", p_installation_id=installation_id,
                          p_parts=Jsonb(observed), p_now=self.now())
            database.call(conn, "component_provider_record", p_installation_id=installation_id, p_success=True,
                          p_trial_token=grant["trial_token"], p_threshold=s.breaker_threshold, p_now=self.now())
        log("worker.supply_fetched", installationId=installation_id, parts=len(batch))
        return "fetched", len(observed)


def build_supply_worker(pool, stop: threading.Event, settings=None):
    """The supply worker, or None when no provider client is configured."""
    from app.supply import settings as supply_settings

    settings = settings or supply_settings.load()
    if not settings.enabled:
        log("worker.supply_disabled", level="info", reason="component provider credentials not configured")
        return None
    return SupplyWorker(settings, pool, stop)

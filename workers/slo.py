"""The SLO policy host-cloud-ga-v1: aggregate snapshots, five triggers, events.

Every SERVICE_SLO_SNAPSHOT_INTERVAL_MS (the `slo_evaluate` schedule: one
replica at a time, workers/schedules.py) the worker takes one aggregate SLI
snapshot (boardready.slo_snapshot: counts, ages and percentiles, no tenant
data) on a connection of its own with a statement timeout, so that SLI
collection never competes with queue processing or readiness; a failure is
logged (`worker.control_plane_slo_failed`, errorClass only) and skipped.

Triggers, each with its gate:

| signal                   | unhealthy when                                           | gate                     |
|--------------------------|----------------------------------------------------------|--------------------------|
| webhook_acceptance_p95   | p95 of webhook acceptance above 1000 ms                  | held for 5 minutes       |
| queue_lag                | lifecycle queue age or outbox lag above 60 s             | held for 5 minutes       |
| reconciliation_backlog   | open items above 20, or increasing for three snapshots   | at once                  |
| stale_attempts           | stale attempts above zero                                | two snapshots in a row   |
| terminal_failure_rate    | above 500 basis points with at least 20 terminal runs    | volume (20 runs)         |

`worker.control_plane_slo_evaluation` follows every successful snapshot (policy
version, aggregate health, active signal names); `_firing` is logged once when
a signal first passes its gate, `_recovered` once when an active signal is
healthy again. The debounce state lives in the process that ran the tick: a
restart, or the schedule's next tick taken by another replica, starts from
healthy and is not a recovery.
"""
from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import psycopg
from psycopg.rows import dict_row

from app import sql_api
from app.jsonlog import log

POLICY_VERSION = "host-cloud-ga-v1"
HOLD_SECONDS = 300
ACCEPTANCE_P95_LIMIT_MS = 1000
QUEUE_LAG_LIMIT_SECONDS = 60
BACKLOG_LIMIT = 20
BACKLOG_TREND_SNAPSHOTS = 3
STALE_SNAPSHOTS = 2
FAILURE_RATE_LIMIT_BP = 500
FAILURE_RATE_MIN_RUNS = 20


@dataclass
class SignalState:
    active: bool = False
    breach_since: float | None = None   # first snapshot of the current unhealthy streak
    streak: int = 0                     # unhealthy snapshots in a row
    history: list = field(default_factory=list)


@dataclass(frozen=True)
class Signal:
    name: str
    value: Callable[[dict], float]
    unhealthy: Callable[[dict, SignalState], bool]
    gate: Callable[[SignalState, float], bool]
    threshold: str


def _hold(seconds: float):
    return lambda state, now: state.breach_since is not None and now - state.breach_since >= seconds


def _snapshots(count: int):
    return lambda state, now: state.streak >= count


def _at_once(state, now) -> bool:
    return state.streak >= 1


def _backlog_unhealthy(snapshot: dict, state: SignalState) -> bool:
    recent = state.history[-BACKLOG_TREND_SNAPSHOTS:]
    increasing = len(recent) == BACKLOG_TREND_SNAPSHOTS and all(a < b for a, b in zip(recent, recent[1:]))
    return snapshot["reconciliation_backlog"] > BACKLOG_LIMIT or increasing


SIGNALS = (
    Signal("webhook_acceptance_p95", lambda s: s["webhook_acceptance_p95_ms"] or 0,
           lambda s, _: (s["webhook_acceptance_p95_ms"] or 0) > ACCEPTANCE_P95_LIMIT_MS,
           _hold(HOLD_SECONDS), f"> {ACCEPTANCE_P95_LIMIT_MS} ms for {HOLD_SECONDS} s"),
    Signal("queue_lag", lambda s: max(s["lifecycle_queue_age_seconds"], s["outbox_lag_seconds"]),
           lambda s, _: max(s["lifecycle_queue_age_seconds"], s["outbox_lag_seconds"]) > QUEUE_LAG_LIMIT_SECONDS,
           _hold(HOLD_SECONDS), f"> {QUEUE_LAG_LIMIT_SECONDS} s for {HOLD_SECONDS} s"),
    Signal("reconciliation_backlog", lambda s: s["reconciliation_backlog"], _backlog_unhealthy, _at_once,
           f"> {BACKLOG_LIMIT} or increasing for {BACKLOG_TREND_SNAPSHOTS} snapshots"),
    Signal("stale_attempts", lambda s: s["stale_attempts"], lambda s, _: s["stale_attempts"] > 0,
           _snapshots(STALE_SNAPSHOTS), f"> 0 for {STALE_SNAPSHOTS} snapshots"),
    Signal("terminal_failure_rate", lambda s: s["terminal_failure_rate_bp"],
           lambda s, _: s["terminal_runs"] >= FAILURE_RATE_MIN_RUNS
           and s["terminal_failure_rate_bp"] > FAILURE_RATE_LIMIT_BP,
           _at_once, f"> {FAILURE_RATE_LIMIT_BP} bp with >= {FAILURE_RATE_MIN_RUNS} terminal runs"),
)


@dataclass(frozen=True)
class Evaluation:
    health: str                   # healthy | unhealthy
    active: tuple[str, ...]
    fired: tuple[str, ...]
    recovered: tuple[str, ...]


class SloPolicy:
    """The triggers' debounce state, fed one snapshot at a time; `now` is any
    monotonic clock in seconds (tests drive it)."""

    def __init__(self, signals=SIGNALS):
        self.signals = signals
        self.states = {s.name: SignalState() for s in signals}

    def evaluate(self, snapshot: dict, now: float) -> Evaluation:
        fired, recovered = [], []
        for signal in self.signals:
            state = self.states[signal.name]
            state.history = (state.history + [signal.value(snapshot)])[-BACKLOG_TREND_SNAPSHOTS:]
            unhealthy = signal.unhealthy(snapshot, state)
            if unhealthy:
                state.streak += 1
                state.breach_since = now if state.breach_since is None else state.breach_since
                if not state.active and signal.gate(state, now):
                    state.active = True
                    fired.append(signal.name)
            else:
                state.streak, state.breach_since = 0, None
                if state.active:
                    state.active = False
                    recovered.append(signal.name)
        active = tuple(s.name for s in self.signals if self.states[s.name].active)
        return Evaluation("unhealthy" if active else "healthy", active, tuple(fired), tuple(recovered))


def take_snapshot(conn, deadline_seconds: int) -> dict:
    return sql_api.slo_snapshot(conn, deadline_seconds=deadline_seconds)


def log_evaluation(policy: SloPolicy, snapshot: dict, evaluation: Evaluation) -> None:
    by_name = {s.name: s for s in policy.signals}
    for name in evaluation.fired:
        log("worker.control_plane_slo_firing", level="warning", policyVersion=POLICY_VERSION, signal=name,
            value=by_name[name].value(snapshot), threshold=by_name[name].threshold)
    for name in evaluation.recovered:
        log("worker.control_plane_slo_recovered", policyVersion=POLICY_VERSION, signal=name,
            value=by_name[name].value(snapshot))
    log("worker.control_plane_slo_evaluation", policyVersion=POLICY_VERSION, health=evaluation.health,
        activeSignals=list(evaluation.active))


class SloWorker:
    name = "slo"

    def __init__(self, config, url: str, stop: threading.Event | None = None,
                 clock: Callable[[], float] = time.monotonic):
        self.interval = config.slo_snapshot_interval_ms / 1000
        self.deadline_seconds = config.reconciliation.deadline_seconds
        self.url = url
        self.stop = stop or threading.Event()
        self.clock = clock
        self.policy = SloPolicy()
        self._conn: psycopg.Connection | None = None

    def _connection(self) -> psycopg.Connection:
        """Its own connection, never the workers' pool; at most one interval per snapshot."""
        if self._conn is None or self._conn.closed:
            timeout_ms = max(100, min(5000, int(self.interval * 1000)))
            self._conn = psycopg.connect(self.url, autocommit=True, row_factory=dict_row, connect_timeout=5,
                                         application_name="boardready-slo",
                                         options=f"-c statement_timeout={timeout_ms}")
        return self._conn

    def evaluate_once(self) -> Evaluation | None:
        try:
            snapshot = take_snapshot(self._connection(), self.deadline_seconds)
            evaluation = self.policy.evaluate(snapshot, self.clock())
        except Exception as exc:  # logged and skipped: the next interval tries again
            log("worker.control_plane_slo_failed", level="warning", errorClass=type(exc).__name__)
            if self._conn is not None:
                self._conn.close()
            self._conn = None
            return None
        log_evaluation(self.policy, snapshot, evaluation)
        return evaluation

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

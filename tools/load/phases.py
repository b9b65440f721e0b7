"""The phases of a round, each measured, each followed by the audit.

1. intake: signed `pull_request` deliveries (labels, assignees, reviewers,
   edits: recorded, no release run) in the code host's own payload shape,
   unique and duplicate, POSTed to /api/host/webhook. Latency: each answer.
2. lifecycle: the intake's jobs; latency from a delivery's acceptance to its
   job's completion, read from the database.
3. release runs: pull requests opened on the code host and delivered by it;
   the service creates check runs and dispatches the workflow, the runner
   stand-in (runner.py) sends signed results, the service completes the check
   runs and comments. Latency: from the delivery until the run is done
   (check run completed and comment posted); ops/s: runs done per second.
4. dashboard: a signed-in viewer's GET /api/v1/runs pages, following
   nextCursor (as many requests as unique deliveries).

A fault (profiles.py) is injected once half the phase's operations are done;
the phase then waits until what was in flight when the fault ended has
converged, and records the recovery.
"""
from __future__ import annotations

import asyncio
import hashlib
import hmac
import random
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import aiohttp
import orjson
import psycopg
from psycopg.rows import dict_row

from app.web.session_auth import SESSION_COOKIE
from tools import named_queries as queries
from tools.load import audit as audit_module
from tools.load.runner import WorkflowRunner
from tools.load.settings import LoadSettings
from tools.load.stack import OIDC_AUDIENCE, Stack
from tools.load.traffic import Outcome, Sample, Window, closed_loop, figures, split_by_faults

#: Actions a pull request delivery of the intake phase carries: recorded, never a release run.
INTAKE_ACTIONS = ("labeled", "unlabeled", "assigned", "unassigned", "review_requested", "edited")
DRAIN_TIMEOUT_S = 120.0
#: A settled audit first lets stragglers finish; the phase has already waited for its own work.
AUDIT_DRAIN_S = 30.0
PAGE_SIZE = 25


@dataclass
class Limit:
    name: str
    limit: float
    value: float | None
    at_most: bool = True  # else at least

    @property
    def passed(self) -> bool:
        if self.value is None:
            return False
        return self.value <= self.limit if self.at_most else self.value >= self.limit

    def to_dict(self) -> dict:
        return {"name": self.name, "limit": self.limit, "value": self.value,
                "kind": "at most" if self.at_most else "at least", "passed": self.passed}


@dataclass
class PhaseResult:
    name: str
    round: int
    operations: int = 0
    elapsed_s: float = 0.0
    latency_ms: dict = field(default_factory=dict)
    during_faults_ms: dict | None = None
    limits: list[Limit] = field(default_factory=list)
    checks: dict[str, bool] = field(default_factory=dict)   # the phase's own end conditions
    counts: dict = field(default_factory=dict)
    fault: dict | None = None
    audit: audit_module.AuditResult | None = None

    down_s: float = 0.0  # the fault's window inside the phase: not part of its steady throughput

    @property
    def throughput(self) -> float:
        steady = self.elapsed_s - self.down_s
        return self.operations / steady if steady > 0 else 0.0

    @property
    def passed(self) -> bool:
        return (all(limit.passed for limit in self.limits) and all(self.checks.values())
                and (self.fault is None or self.fault["passed"]) and (self.audit is None or self.audit.passed))

    def to_dict(self) -> dict:
        return {"round": self.round, "name": self.name, "passed": self.passed, "operations": self.operations,
                "elapsed_s": round(self.elapsed_s, 3), "throughput_per_s": round(self.throughput, 1),
                "fault_window_s": round(self.down_s, 3),
                "throughput_with_fault_per_s": round(self.operations / self.elapsed_s, 1) if self.elapsed_s > 0 else 0,
                "latency_ms": self.latency_ms, "during_faults_ms": self.during_faults_ms,
                "limits": [limit.to_dict() for limit in self.limits], "checks": self.checks, "counts": self.counts,
                "fault": self.fault, "audit": self.audit.to_dict() if self.audit else None}


def sign(body: bytes, secret: str) -> str:
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


class LoadRun:
    """One run of bin/load against a started stack: rounds of phases, faults, audits."""

    def __init__(self, settings: LoadSettings, stack: Stack, progress):
        self.settings, self.stack, self.progress = settings, stack, progress
        self.executor = ThreadPoolExecutor(max_workers=settings.concurrency + 8, thread_name_prefix="load")
        self.windows: list[Window] = []
        self.phases: list[PhaseResult] = []
        self.acknowledged: set[str] = set()  # ids of our deliveries the service answered 2xx
        self.templates: dict[str, dict] = {}  # repository -> a pull request delivery the code host made
        self.repository_ids = {r["full_name"]: r["id"] for r in stack.repositories}
        self.runner: WorkflowRunner | None = None
        self._runner_stop = asyncio.Event()
        self.began = time.time()
        self._runner_task: asyncio.Task | None = None

    # -- plumbing -----------------------------------------------------------------
    async def blocking(self, function, *args, **kwargs):
        return await asyncio.get_running_loop().run_in_executor(self.executor, lambda: function(*args, **kwargs))

    @staticmethod
    @audit_module.patiently
    def _read(url: str, name: str, params: dict) -> list[dict]:
        with psycopg.connect(url, row_factory=dict_row, connect_timeout=5) as conn:
            return [dict(row) for row in queries.fetch_all(conn, name, **params)]

    def query(self, name: str, **params) -> list[dict]:
        """A named read (tools/queries/), waiting out a database restart."""
        return self._read(self.stack.url, name, params)

    async def start(self) -> None:
        """Payload templates: one real pull request delivery per repository, sent by the code host."""
        host = self.stack.host
        for repo in self.stack.repositories:
            pull = await self.blocking(host.open_pull_request, repo["full_name"], title="Intake load")
            delivery = await self.blocking(host.send_pull_request_event, repo["full_name"], pull["number"], "labeled")
            if self.stack.delivered(delivery) not in (200, 202):
                raise RuntimeError(f"the service refused a pull request delivery: {delivery['status']}")
            self.templates[repo["full_name"]] = delivery["payload"]
        self.runner = WorkflowRunner(host, self.stack.base_url, OIDC_AUDIENCE, self.settings.concurrency,
                                     self.executor)
        self._runner_task = asyncio.create_task(self.runner.run(self._runner_stop))

    async def stop(self) -> None:
        self._runner_stop.set()
        if self._runner_task is not None:
            await self._runner_task
        self.executor.shutdown(wait=True)

    def accepted_deliveries(self) -> list[str]:
        """Every delivery id the service acknowledged: ours and the code host's."""
        return sorted(self.acknowledged | self.stack.acknowledged)

    async def audit(self, phase: PhaseResult, settled: bool) -> None:
        if settled:
            marks = await self.blocking(audit_module.marks, self.stack.url)
            await self.blocking(audit_module.wait_until_drained, self.stack.url, marks, AUDIT_DRAIN_S)
        view = await self.blocking(audit_module.host_view, self.stack.host, self.repository_ids)
        phase.audit = await self.blocking(audit_module.run_audit, self.stack.url, self.accepted_deliveries(), view,
                                          settled)

    # -- faults -------------------------------------------------------------------------
    async def _with_fault(self, fault, halfway: asyncio.Event, phase: PhaseResult) -> dict | None:
        """Inject `fault` once half the phase's operations are done; return the recovery record
        (without the first success after it, which the phase adds from its samples)."""
        if fault is None:
            return None
        await halfway.wait()
        window, detail = await fault.inject(self)
        self.windows.append(window)
        marks = await self.blocking(audit_module.marks, self.stack.url)
        drained = await self.blocking(audit_module.wait_until_drained, self.stack.url, marks, DRAIN_TIMEOUT_S)
        return {"kind": fault.kind, "phase": phase.name, "round": phase.round,
                "started_s": window.started, "ended_s": window.ended,
                "fault_ms": round((window.ended - window.started) * 1000, 1),
                "drained_ms": round((drained - window.ended) * 1000, 1) if drained else None, **detail}

    async def _settle(self, fault_task: asyncio.Task, halfway: asyncio.Event, fault) -> dict | None:
        """The fault's record; a phase that never got halfway never had its fault, and fails."""
        if fault is not None and not halfway.is_set():
            fault_task.cancel()
            return {"kind": fault.kind, "phase": fault.phase, "not_injected": "the phase never got halfway",
                    "started_s": time.time(), "ended_s": time.time(), "fault_ms": 0, "drained_ms": None}
        return await fault_task

    def _finish_fault(self, phase: PhaseResult, record: dict | None, outcome_samples: list[Sample]) -> None:
        if record is None:
            return
        record.setdefault("round", phase.round)
        ended = record["ended_s"]
        phase.down_s = min(ended - record["started_s"], phase.elapsed_s)
        first = min((s.ended for s in outcome_samples if s.started >= ended and s.status is not None
                     and s.status < 400), default=None)
        record["service_back_ms"] = round((first - ended) * 1000, 1) if first else None
        waits = [v for v in (record["drained_ms"], record["service_back_ms"]) if v is not None]
        record["convergence_ms"] = max(waits) if record["drained_ms"] is not None else None
        record["limit_ms"] = self.settings.recovery_convergence_ms
        record["passed"] = (record["convergence_ms"] is not None
                            and record["convergence_ms"] <= self.settings.recovery_convergence_ms)
        # When, in seconds since the run began (no wall-clock times in the report).
        record["started_s"] = round(record["started_s"] - self.began, 3)
        record["ended_s"] = round(record["ended_s"] - self.began, 3)
        phase.fault = record

    def _latency(self, phase: PhaseResult, samples: list[Sample]) -> list[float]:
        steady, faulted = split_by_faults(samples, self.windows)
        phase.latency_ms = figures([s.ms for s in steady])
        if faulted:
            phase.during_faults_ms = figures([s.ms for s in faulted])
        return [s.ms for s in steady]

    async def _close(self, phase: PhaseResult, settled: bool) -> None:
        """What ends every phase: its throughput limit, the SQL audit, and its place in the report."""
        phase.limits.append(Limit("min_throughput_per_s", self.settings.min_throughput, round(phase.throughput, 1),
                                  at_most=False))
        await self.audit(phase, settled)
        self.phases.append(phase)

    def _halfway(self, total: int, task_advance) -> tuple[asyncio.Event, callable]:
        event, done = asyncio.Event(), [0]

        def advance() -> None:
            done[0] += 1
            task_advance()
            if done[0] * 2 >= total:
                event.set()
        return event, advance

    async def _deliver(self, requests: list[tuple[str, bytes, str]], advance, sent_at: dict | None = None) -> Outcome:
        """POST signed `pull_request` deliveries (id, body, signature) in a closed loop; a delivery
        answered 503 or not at all goes again with the same id."""
        connector = aiohttp.TCPConnector(limit=self.settings.concurrency)
        async with aiohttp.ClientSession(base_url=self.stack.base_url, connector=connector,
                                         timeout=aiohttp.ClientTimeout(total=30)) as http:
            async def send(item) -> int | None:
                delivery_id, body, signature = item
                if sent_at is not None:
                    sent_at.setdefault(delivery_id, time.time())
                async with http.post("/api/host/webhook", data=body, headers={
                        "Content-Type": "application/json", "X-Hub-Signature-256": signature,
                        "X-GitHub-Delivery": delivery_id, "X-GitHub-Event": "pull_request"}) as response:
                    await response.read()
                    if response.status in (200, 202):
                        self.acknowledged.add(delivery_id)
                    return response.status

            return await closed_loop(requests, self.settings.concurrency, send, lambda s: s in (200, 202), advance)

    def _signed(self, payload: dict) -> tuple[str, bytes, str]:
        body = orjson.dumps(payload)
        return str(uuid.uuid4()), body, sign(body, self.stack.webhook_secret)

    # -- 1. intake ------------------------------------------------------------------------
    def _intake_requests(self, round_number: int) -> tuple[list[str], list[tuple[str, bytes, str]]]:
        rng = random.Random(f"load-{round_number}")
        uniques = []
        for index in range(self.settings.unique_deliveries):
            payload = dict(list(self.templates.values())[index % len(self.templates)])
            payload["action"] = INTAKE_ACTIONS[index % len(INTAKE_ACTIONS)]
            uniques.append(self._signed(payload))
        requests = uniques + rng.sample(uniques, self.settings.duplicate_deliveries)
        rng.shuffle(requests)
        return [u[0] for u in uniques], requests

    async def intake(self, round_number: int, fault=None) -> tuple[PhaseResult, list[str]]:
        phase = PhaseResult("intake", round_number)
        ids, requests = self._intake_requests(round_number)
        halfway, advance = self._halfway(len(requests), self.progress.task(f"round {round_number} intake",
                                                                           len(requests)))
        fault_task = asyncio.create_task(self._with_fault(fault, halfway, phase))
        outcome = await self._deliver(requests, advance)
        record = await self._settle(fault_task, halfway, fault)
        phase.operations, phase.elapsed_s = len(requests), outcome.ended - outcome.started
        self._latency(phase, outcome.samples)
        phase.counts = {"unique": len(ids), "duplicates": len(requests) - len(ids), "statuses": outcome.statuses(),
                        "retries": outcome.retries}
        phase.limits.append(Limit("intake_p95_ms", self.settings.intake_p95_ms, phase.latency_ms["p95"]))
        phase.checks["every_delivery_acknowledged"] = all(i in self.acknowledged for i in ids)
        self._finish_fault(phase, record, outcome.samples)
        await self._close(phase, settled=False)
        return phase, ids

    # -- 2. lifecycle ---------------------------------------------------------------------
    async def lifecycle(self, round_number: int, delivery_ids: list[str]) -> PhaseResult:
        phase = PhaseResult("lifecycle", round_number)
        keys = [f"host:{d}" for d in delivery_ids]
        advance = self.progress.task(f"round {round_number} lifecycle", len(keys))
        deadline, seen = time.monotonic() + DRAIN_TIMEOUT_S, 0
        while True:
            rows = await self.blocking(self.query, "load_lifecycle_latency", keys=keys)
            completed = [r for r in rows if r["status"] == "completed"]
            for _ in range(len(completed) - seen):
                advance()
            seen = len(completed)
            if len(completed) == len(keys) or time.monotonic() > deadline:
                break
            await asyncio.sleep(0.1)
        samples = [Sample(r["received"], r["completed"], 200) for r in completed]
        phase.operations = len(completed)
        if completed:
            phase.elapsed_s = max(r["completed"] for r in completed) - min(r["received"] for r in completed)
        self._latency(phase, samples)
        phase.counts = {"jobs": len(rows), "completed": len(completed),
                        "dead_letter": sum(1 for r in rows if r["status"] == "dead_letter")}
        phase.checks["every_job_completed"] = len(completed) == len(keys)
        phase.limits.append(Limit("lifecycle_p95_ms", self.settings.lifecycle_p95_ms, phase.latency_ms["p95"]))
        await self._close(phase, settled=True)
        return phase

    # -- 3. release runs -------------------------------------------------------------------
    async def release_runs(self, round_number: int, fault=None) -> PhaseResult:
        phase = PhaseResult("release_runs", round_number)
        host = self.stack.host
        names = [repo["full_name"] for repo in self.stack.repositories for _ in range(self.settings.runs_per_repository)]
        pulls = await asyncio.gather(*(self.blocking(host.open_pull_request, name, title="Layout update")
                                       for name in names))
        requests, head_of = [], {}
        for name, pull in zip(names, pulls):
            request = self._signed(opened_payload(self.templates[name], pull))
            requests.append(request)
            head_of[request[0]] = pull["head"]["sha"]
        random.Random(f"runs-{round_number}").shuffle(requests)
        heads = list(head_of.values())
        halfway, advance_done = self._halfway(len(requests),
                                              self.progress.task(f"round {round_number} release runs", len(requests)))
        sent_at: dict[str, float] = {}
        fault_task = asyncio.create_task(self._with_fault(fault, halfway, phase))
        runner_samples_before, runner_retries_before = len(self.runner.samples), self.runner.retries
        answered_before = dict(self.runner.answered)
        outcome = await self._deliver(requests, lambda: None, sent_at)
        rows, done_count, deadline = [], 0, time.monotonic() + DRAIN_TIMEOUT_S
        while time.monotonic() < deadline:
            rows = await self.blocking(self.query, "load_release_progress", heads=heads)
            done = sum(1 for r in rows if r["done"])
            for _ in range(done - done_count):
                advance_done()
            done_count = done
            if done == len(requests):
                break
            await asyncio.sleep(0.1)
        record = await self._settle(fault_task, halfway, fault)
        finished = [r for r in rows if r["done"]]
        end = max((r["done_at"] for r in finished if r["done_at"]), default=time.time())
        phase.operations = len(finished)
        phase.elapsed_s = end - outcome.started
        sent_of_head = {head_of[delivery_id]: moment for delivery_id, moment in sent_at.items()}
        run_samples = [Sample(sent_of_head[r["head_sha"]], r["done_at"], 200) for r in finished if r["done_at"]]
        self._latency(phase, run_samples)
        callbacks = self.runner.samples[runner_samples_before:]
        steady, _ = split_by_faults(callbacks, self.windows)
        phase.counts = {"runs": len(requests), "done": len(finished), "delivery_statuses": outcome.statuses(),
                        "delivery_retries": outcome.retries, "result_callbacks_ms": figures([s.ms for s in steady]),
                        "result_callback_retries": self.runner.retries - runner_retries_before,
                        "result_callback_outcomes": {code: n - answered_before.get(code, 0)
                                                     for code, n in sorted(self.runner.answered.items())
                                                     if n > answered_before.get(code, 0)},
                        "runs_by_status": _count(r["status"] for r in rows)}
        phase.checks["every_delivery_acknowledged"] = all(s in (200, 202) for s in outcome.final)
        phase.checks["every_run_done"] = len(finished) == len(requests)
        self._finish_fault(phase, record, outcome.samples + callbacks)
        await self._close(phase, settled=True)
        return phase

    # -- 4. dashboard ---------------------------------------------------------------------
    async def dashboard(self, round_number: int, fault=None) -> PhaseResult:
        phase = PhaseResult("dashboard", round_number)
        total = self.settings.unique_deliveries
        halfway, advance = self._halfway(total, self.progress.task(f"round {round_number} dashboard", total))
        cursors: list[str] = []
        pages = {"items": 0, "walks_finished": 0}
        connector = aiohttp.TCPConnector(limit=self.settings.concurrency)
        async with aiohttp.ClientSession(base_url=self.stack.base_url, connector=connector,
                                         cookies={SESSION_COOKIE: self.stack.session_cookie},
                                         timeout=aiohttp.ClientTimeout(total=30)) as http:
            async def send(_item) -> int | None:
                params = {"limit": str(PAGE_SIZE)}
                if cursors:
                    params["cursor"] = cursors.pop()
                async with http.get("/api/v1/runs", params=params) as response:
                    body = await response.read()
                    if response.status == 200:
                        answer = orjson.loads(body)
                        pages["items"] += len(answer["items"])
                        if answer["nextCursor"]:
                            cursors.append(answer["nextCursor"])
                        else:
                            pages["walks_finished"] += 1
                    return response.status

            fault_task = asyncio.create_task(self._with_fault(fault, halfway, phase))
            outcome = await closed_loop(list(range(total)), self.settings.concurrency, send, lambda s: s == 200,
                                        advance)
            record = await self._settle(fault_task, halfway, fault)
        phase.operations, phase.elapsed_s = total, outcome.ended - outcome.started
        self._latency(phase, outcome.samples)
        phase.counts = {"pages": total, "runs_listed": pages["items"], "walks_to_the_end": pages["walks_finished"],
                        "statuses": outcome.statuses(), "retries": outcome.retries}
        phase.checks["every_page_answered"] = all(s == 200 for s in outcome.final)
        phase.checks["runs_listed"] = pages["items"] > 0
        phase.limits.append(Limit("dashboard_p95_ms", self.settings.dashboard_p95_ms, phase.latency_ms["p95"]))
        self._finish_fault(phase, record, outcome.samples)
        await self._close(phase, settled=True)
        return phase


    # -- soak-recovery: after each round, back to idle --------------------------------------
    async def idle(self, round_number: int) -> dict:
        """After a round's load: how long until nothing is pending and readiness answers 200;
        then an idle pause as long as the convergence limit."""
        ended = time.time()
        marks = await self.blocking(audit_module.marks, self.stack.url)
        drained = await self.blocking(audit_module.wait_until_drained, self.stack.url, marks, DRAIN_TIMEOUT_S)
        ready = None
        async with aiohttp.ClientSession(base_url=self.stack.base_url,
                                         timeout=aiohttp.ClientTimeout(total=5)) as http:
            deadline = time.monotonic() + DRAIN_TIMEOUT_S
            while ready is None and time.monotonic() < deadline:
                try:
                    async with http.get("/api/health/ready") as response:
                        await response.read()
                        if response.status == 200:
                            ready = time.time()
                except (TimeoutError, aiohttp.ClientError, OSError):
                    await asyncio.sleep(0.05)
        drained_ms = round((drained - ended) * 1000, 1) if drained else None
        ready_ms = round((ready - ended) * 1000, 1) if ready else None
        convergence = max(drained_ms, ready_ms) if drained_ms is not None and ready_ms is not None else None
        record = {"kind": "load burst, then idle", "phase": "idle", "round": round_number, "drained_ms": drained_ms,
                  "service_back_ms": ready_ms, "convergence_ms": convergence,
                  "limit_ms": self.settings.recovery_convergence_ms,
                  "passed": convergence is not None and convergence <= self.settings.recovery_convergence_ms,
                  "idle_s": self.settings.recovery_convergence_ms / 1000}
        await asyncio.sleep(self.settings.recovery_convergence_ms / 1000)
        return record


def opened_payload(template: dict, pull: dict) -> dict:
    """The code host's `pull_request` `opened` delivery for `pull` (as the emulator's control API
    returns it), in the shape of a delivery the code host made for the same repository: the
    load generator sends these itself, since the emulator's sender, one new HTTP client per
    delivery in one process, cannot keep up with many senders at once."""
    old = template["pull_request"]
    new = dict(old, number=pull["number"], id=pull["id"], title="Layout update", state="open", draft=False)
    for key, value in old.items():
        if isinstance(value, str) and key.endswith("url"):
            new[key] = (value.replace(f"/pulls/{old['number']}", f"/pulls/{pull['number']}")
                        .replace(f"/pull/{old['number']}", f"/pull/{pull['number']}")
                        .replace(f"/issues/{old['number']}", f"/issues/{pull['number']}")
                        .replace(old["head"]["sha"], pull["head"]["sha"]))
    new["head"] = dict(old["head"], ref=pull["head"]["ref"], sha=pull["head"]["sha"],
                       label=f"{old['head']['label'].split(':')[0]}:{pull['head']['ref']}")
    new["base"] = dict(old["base"], ref=pull["base"]["ref"], sha=pull["base"]["sha"])
    return dict(template, action="opened", number=pull["number"], pull_request=new)


def _count(values) -> dict[str, int]:
    out: dict[str, int] = {}
    for value in values:
        out[value] = out.get(value, 0) + 1
    return out

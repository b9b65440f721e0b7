"""The readiness workflow's stand-in: it answers every dispatched run the
code host (the emulator) shows, as `bin/check --runner` would.

For each queued run of readiness-runner.yml: start it, get an ID token for it
from the code host's OIDC issuer (audience = the service's), send the signed
result for the dispatched attempt (`POST /api/v1/runs/github-actions-result`:
attemptId, result, digest), then complete the run. The checker itself does
not run: a load validation measures the service, and 600 checker processes
would measure the checker on two cores. Results cycle through ready, at-risk
and blocked with a few findings, some with a file and line (annotations).

A refusal that may clear is retried with a pause: 503 and no answer, and
for a few seconds 403 `run_id_mismatch` (the stand-in starts the moment the
run exists, possibly before the service has recorded the dispatch's answer;
a real runner takes seconds to start). Anything else is final and counted,
as is a mismatch that lasts: the attempt is bound to another run (a dispatch
sent twice), and a real runner would fail the same way.
"""
from __future__ import annotations

import asyncio
import hashlib
import time
from concurrent.futures import ThreadPoolExecutor

import aiohttp
import orjson

from app.run_results import digest
from tools.load.traffic import RETRY_BUDGET_S, RETRY_PAUSE_S, Sample

CALLBACK = "/api/v1/runs/github-actions-result"
READINESS = ("ready", "at-risk", "blocked")
SCORES = {"ready": 96, "at-risk": 71, "blocked": 22}
POLL_S = 0.1
MISMATCH_BUDGET_S = 5.0


def result_for(repository: str, head_sha: str, index: int) -> dict:
    readiness = READINESS[index % 3]
    findings = []
    for n in range(index % 4):
        severity = {"ready": "info", "at-risk": "medium", "blocked": "error"}[readiness]
        finding = {"ruleId": "drc.track-width", "severity": severity, "message": f"Track {n} is 0.09 mm wide",
                   "fingerprint": hashlib.sha256(f"{head_sha}-{n}".encode()).hexdigest()[:32]}
        if n % 2 == 0:
            finding.update(path="board/board.kicad_pcb", startLine=10 + n, endLine=10 + n)
        findings.append(finding)
    return {"schemaVersion": 1, "triggerKind": "pull_request", "repository": repository, "headSha": head_sha,
            "readiness": readiness, "score": SCORES[readiness],
            "tool": {"name": "boardready-check", "version": "0.1.0"}, "kicadVersion": "9", "findings": findings}


class WorkflowRunner:
    def __init__(self, host, base_url: str, audience: str, concurrency: int, executor: ThreadPoolExecutor):
        self.host, self.base_url, self.audience = host, base_url, audience
        self.executor = executor
        self.semaphore = asyncio.Semaphore(concurrency)
        self.handled: set[int] = set()
        self.samples: list[Sample] = []
        self.answered: dict[str, int] = {}   # final status per outcome code
        self.retries = 0
        self.tasks: set[asyncio.Task] = set()

    async def _call(self, function, *args, **kwargs):
        return await asyncio.get_running_loop().run_in_executor(self.executor, lambda: function(*args, **kwargs))

    async def run(self, stop: asyncio.Event) -> None:
        """Answer runs until `stop` is set and every run seen has been answered."""
        timeout = aiohttp.ClientTimeout(total=30)
        async with aiohttp.ClientSession(base_url=self.base_url, timeout=timeout,
                                         connector=aiohttp.TCPConnector(limit=0)) as http:
            while not stop.is_set():
                for run in await self._call(self.host.runs):
                    if run["status"] == "queued" and run["id"] not in self.handled:
                        self.handled.add(run["id"])
                        task = asyncio.create_task(self._answer(http, run, len(self.handled)))
                        self.tasks.add(task)
                        task.add_done_callback(self.tasks.discard)
                # The code host lists every run each time: look less often as they pile up
                # (0.1 s up to 500 runs, 0.3 s at 1500), so that listing does not crowd out the service.
                try:
                    await asyncio.wait_for(stop.wait(), max(POLL_S, len(self.handled) / 5000))
                except TimeoutError:
                    pass
            if self.tasks:
                await asyncio.gather(*list(self.tasks))

    async def _answer(self, http: aiohttp.ClientSession, run: dict, index: int) -> None:
        async with self.semaphore:
            inputs = run.get("inputs") or {}
            await self._call(self.host.start_run, run["id"])
            result = result_for(run["repository"], str(inputs.get("head_sha", "")), index)
            body = orjson.dumps({"attemptId": inputs.get("attempt_id"), "result": result, "digest": digest(result)})
            first = time.monotonic()
            while True:
                token = await self._call(self.host.mint_oidc_token, self.audience, run_id=run["id"])
                started = time.time()
                status, code = None, "no_answer"
                try:
                    async with http.post(CALLBACK, data=body, headers={
                            "Authorization": f"Bearer {token}", "Content-Type": "application/json"}) as response:
                        answer = await response.read()
                        status = response.status
                        code = _code(answer) or str(status)
                except (TimeoutError, aiohttp.ClientError, OSError):
                    pass
                self.samples.append(Sample(started, time.time(), status))
                waited = time.monotonic() - first
                retry = (status in (None, 502, 503, 504) and waited < RETRY_BUDGET_S) or \
                    (code == "run_id_mismatch" and waited < MISMATCH_BUDGET_S)
                if not retry:
                    break
                self.retries += 1
                await asyncio.sleep(RETRY_PAUSE_S)
            self.answered[code] = self.answered.get(code, 0) + 1
            await self._call(self.host.complete_run, run["id"], "success" if status == 200 else "failure")


def _code(answer: bytes) -> str | None:
    try:
        body = orjson.loads(answer)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(body, dict):
        return None
    return body.get("outcome") or body.get("code")

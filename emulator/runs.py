"""Simulated workflow runs: queued -> in_progress -> completed.

Per repository (``RunSettings.mode``):

* ``manual``: the run stays queued until the control API starts or completes it;
* ``auto``: it starts, then completes with ``auto_conclusion`` after ``auto_delay_seconds``;
* ``execute``: the runner command runs in a fresh copy of the repository's content
  folder with the environment a real runner gets; exit status 0 concludes
  ``success``, anything else ``failure``, the timeout ``timed_out``.

Runs progress on background threads so the server keeps answering meanwhile.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path

from emulator import shapes
from emulator.auth import issue_installation_token
from emulator.state import (
    Account,
    Repository,
    RunAttempt,
    State,
    Workflow,
    WorkflowRun,
    utcnow,
)

OUTPUT_TAIL_BYTES = 16 * 1024
RUN_NAME_LINE = re.compile(r"^run-name:[ \t]*(.+?)[ \t]*$", re.MULTILINE)
EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")
CONCLUSIONS = ("success", "failure", "neutral", "cancelled", "skipped", "timed_out", "action_required")


class RunEngine:
    def __init__(self, state: State, base_url: Callable[[], str], work_dir: Path, stopping: threading.Event):
        self.state = state
        self.base_url = base_url
        self.work_dir = work_dir
        self.stopping = stopping
        self._processes: dict[tuple[int, int], subprocess.Popen] = {}
        self._threads: list[threading.Thread] = []

    # ---- creation --------------------------------------------------------------------------

    def dispatch(
        self, repo: Repository, workflow: Workflow, branch: str | None, sha: str, ref: str, inputs: dict, actor: Account
    ) -> WorkflowRun:
        with self.state.lock:
            number = 1 + sum(
                1 for r in self.state.runs.values() if r.repository_id == repo.id and r.workflow_id == workflow.id
            )
            run = WorkflowRun(
                id=self.state.next_id("run"),
                repository_id=repo.id,
                workflow_id=workflow.id,
                workflow_file=workflow.file_name,
                run_number=number,
                head_branch=branch,
                head_sha=sha,
                ref=ref if ref.startswith("refs/") or branch is None else f"refs/heads/{branch}",
                inputs=dict(inputs),
                actor=actor,
                display_title=run_title(repo, workflow, inputs),
            )
            run.attempts.append(RunAttempt(number=1))
            self.state.runs[run.id] = run
        self._schedule(run.id, 1)
        return run

    def rerun(self, run_id: int) -> RunAttempt:
        """A new attempt of a completed run (the real host's 're-run')."""
        with self.state.lock:
            run = self.state.runs[run_id]
            if run.current.status != "completed":
                raise ValueError("only a completed run can be re-run")
            attempt = RunAttempt(number=run.current.number + 1)
            run.attempts.append(attempt)
        self._schedule(run_id, attempt.number)
        return attempt

    # ---- transitions -----------------------------------------------------------------------

    def start(self, run_id: int, attempt_number: int | None = None) -> bool:
        with self.state.lock:
            attempt = self._attempt(run_id, attempt_number)
            if attempt.status != "queued":
                return False
            attempt.status = "in_progress"
            attempt.started_at = attempt.updated_at = utcnow()
            return True

    def complete(self, run_id: int, conclusion: str, attempt_number: int | None = None) -> bool:
        if conclusion not in CONCLUSIONS:
            raise ValueError(f"conclusion must be one of {CONCLUSIONS}")
        with self.state.lock:
            attempt = self._attempt(run_id, attempt_number)
            if attempt.status == "completed":
                return False
            now = utcnow()
            attempt.started_at = attempt.started_at or now
            attempt.status = "completed"
            attempt.conclusion = conclusion
            attempt.completed_at = attempt.updated_at = now
            return True

    def wait(self, run_id: int, status: str = "completed", timeout: float = 30.0) -> WorkflowRun:
        """Poll (bounded) until the run's current attempt has ``status``."""
        deadline = time.monotonic() + timeout
        while True:
            with self.state.lock:
                run = self.state.runs[run_id]
                if run.current.status == status:
                    return run
            if time.monotonic() > deadline:
                raise TimeoutError(f"run {run_id} did not reach {status} within {timeout} s")
            time.sleep(0.02)

    def _attempt(self, run_id: int, attempt_number: int | None) -> RunAttempt:
        run = self.state.runs[run_id]
        if attempt_number is None:
            return run.current
        return run.attempts[attempt_number - 1]

    # ---- background progress ---------------------------------------------------------------

    def _schedule(self, run_id: int, attempt_number: int) -> None:
        with self.state.lock:
            run = self.state.runs[run_id]
            settings = self.state.repositories[run.repository_id].run_settings
            mode = settings.mode
        if mode == "manual":
            return
        target = self._auto if mode == "auto" else self._execute
        thread = threading.Thread(
            target=target, args=(run_id, attempt_number), name=f"run-{run_id}-{attempt_number}", daemon=True
        )
        self._threads = [t for t in self._threads if t.is_alive()] + [thread]
        thread.start()

    def _auto(self, run_id: int, attempt_number: int) -> None:
        with self.state.lock:
            run = self.state.runs[run_id]
            settings = self.state.repositories[run.repository_id].run_settings
            delay, conclusion = settings.auto_delay_seconds, settings.auto_conclusion
        if self.stopping.wait(delay / 2):
            return
        self.start(run_id, attempt_number)
        if self.stopping.wait(delay / 2):
            return
        self.complete(run_id, conclusion, attempt_number)

    def _execute(self, run_id: int, attempt_number: int) -> None:
        with self.state.lock:
            run = self.state.runs[run_id]
            repo = self.state.repositories[run.repository_id]
            attempt = run.attempts[attempt_number - 1]
            settings = repo.run_settings
            command = settings.runner_command or self.state.default_run_settings.runner_command
            extra_env = {**self.state.default_run_settings.runner_env, **settings.runner_env}
            timeout = settings.runner_timeout_seconds
            content_dir = repo.content_dir
            queued_for = settings.queue_seconds
        if queued_for and self.stopping.wait(queued_for):  # waiting for a free runner
            return
        self.start(run_id, attempt_number)
        run_dir = self.work_dir / "runs" / f"{run_id}-{attempt_number}"
        workspace = run_dir / "workspace"
        if run_dir.exists():
            shutil.rmtree(run_dir)
        if content_dir:
            shutil.copytree(content_dir, workspace, symlinks=True)
        else:
            workspace.mkdir(parents=True)
        (run_dir / "tmp").mkdir()
        event_path = run_dir / "event.json"
        with self.state.lock:
            event = self.dispatch_event(repo, run)
            env = self.runner_environment(repo, run, attempt, workspace, event_path, run_dir / "tmp")
            attempt.workspace = str(workspace)
        event_path.write_text(json.dumps(event, indent=2))
        env.update({k: str(v) for k, v in extra_env.items()})
        if not command:
            self._finish_execute(run_id, attempt_number, None, "", "no runner command is configured\n", "failure")
            return
        stdout_path, stderr_path = run_dir / "stdout.log", run_dir / "stderr.log"
        with open(stdout_path, "wb") as out, open(stderr_path, "wb") as err:
            try:
                process = subprocess.Popen(
                    command,
                    shell=isinstance(command, str),
                    cwd=workspace,
                    env=env,
                    stdin=subprocess.DEVNULL,
                    stdout=out,
                    stderr=err,
                    start_new_session=True,  # so a timeout kills the whole process group
                )
            except OSError as exc:
                err.write(f"could not start the runner command: {exc}\n".encode())
                process = None
            exit_code, conclusion = None, "failure"
            if process is not None:
                self._processes[(run_id, attempt_number)] = process
                try:
                    exit_code = process.wait(timeout=timeout)
                    conclusion = "success" if exit_code == 0 else "failure"
                except subprocess.TimeoutExpired:
                    _kill_group(process)
                    exit_code, conclusion = process.wait(), "timed_out"
                finally:
                    self._processes.pop((run_id, attempt_number), None)
        if self.stopping.is_set():
            conclusion = "cancelled"
        self._finish_execute(run_id, attempt_number, exit_code, _tail(stdout_path), _tail(stderr_path), conclusion)

    def _finish_execute(self, run_id, attempt_number, exit_code, stdout, stderr, conclusion) -> None:
        with self.state.lock:
            attempt = self.state.runs[run_id].attempts[attempt_number - 1]
            attempt.exit_code, attempt.stdout_tail, attempt.stderr_tail = exit_code, stdout, stderr
        self.complete(run_id, conclusion, attempt_number)

    def dispatch_event(self, repo: Repository, run: WorkflowRun) -> dict:
        """The workflow_dispatch event payload a runner finds at GITHUB_EVENT_PATH."""
        base = self.base_url()
        return {
            "inputs": dict(run.inputs),
            "ref": run.ref,
            "repository": shapes.repository(base, repo),
            "sender": shapes.simple_user(base, run.actor),
            "workflow": f".github/workflows/{run.workflow_file}",
        }

    def id_token_request_url(self, run: WorkflowRun, attempt: RunAttempt) -> str:
        # Real runners get a URL that already has a query string and append "&audience=...".
        return f"{self.base_url()}/_services/token/runs/{run.id}/attempts/{attempt.number}/idtoken?api-version=2.0"

    def runner_environment(
        self, repo: Repository, run: WorkflowRun, attempt: RunAttempt, workspace: Path, event_path: Path, temp: Path
    ) -> dict:
        base = self.base_url()
        env = dict(os.environ)
        env.update(
            {
                "CI": "true",
                "GITHUB_ACTIONS": "true",
                "GITHUB_EVENT_NAME": "workflow_dispatch",
                "GITHUB_EVENT_PATH": str(event_path),
                "GITHUB_WORKSPACE": str(workspace),
                "GITHUB_REPOSITORY": repo.full_name,
                "GITHUB_REPOSITORY_ID": str(repo.id),
                "GITHUB_REPOSITORY_OWNER": repo.owner.login,
                "GITHUB_REPOSITORY_OWNER_ID": str(repo.owner.id),
                "GITHUB_RUN_ID": str(run.id),
                "GITHUB_RUN_NUMBER": str(run.run_number),
                "GITHUB_RUN_ATTEMPT": str(attempt.number),
                "GITHUB_SHA": run.head_sha,
                "GITHUB_REF": run.ref,
                "GITHUB_REF_NAME": run.head_branch or run.head_sha,
                "GITHUB_REF_TYPE": "branch",
                "GITHUB_WORKFLOW": run.workflow_file.rsplit(".", 1)[0],
                "GITHUB_WORKFLOW_REF": f"{repo.full_name}/.github/workflows/{run.workflow_file}@{run.ref}",
                "GITHUB_JOB": "readiness",
                "GITHUB_ACTOR": run.actor.login,
                "GITHUB_SERVER_URL": base,
                "GITHUB_API_URL": base,
                "RUNNER_TEMP": str(temp),
                "RUNNER_OS": "Linux",
                "ACTIONS_ID_TOKEN_REQUEST_URL": self.id_token_request_url(run, attempt),
                "ACTIONS_ID_TOKEN_REQUEST_TOKEN": attempt.id_token_request_token,
            }
        )
        if repo.installation_id in self.state.installations:
            # The job's GITHUB_TOKEN: this repository only, with what readiness-runner.yml's
            # `permissions:` asks (contents and pull requests read), for the run's length.
            env["GITHUB_TOKEN"] = issue_installation_token(
                self.state, repo.installation_id, [repo.id],
                {"contents": "read", "metadata": "read", "pull_requests": "read"}).value
        return env

    def shutdown(self, timeout: float = 5.0) -> None:
        for process in list(self._processes.values()):
            _kill_group(process)
        for thread in self._threads:
            thread.join(timeout)


def run_title(repo: Repository, workflow: Workflow, inputs: dict) -> str | None:
    """The workflow's `run-name` with `${{ inputs.x }}` (or `github.event.inputs.x`) filled in, as the
    real host shows it as the run's display_title; None without a run-name. The template is the one set
    through the control API, else the `run-name:` line of the workflow file in the content folder."""
    template = workflow.run_name
    if template is None and repo.content_dir:
        path = Path(repo.content_dir) / workflow.path
        match = RUN_NAME_LINE.search(path.read_text(errors="replace")) if path.is_file() else None
        template = match.group(1).strip("'\"") if match else None
    if template is None:
        return None

    def value(match: re.Match) -> str:
        for prefix in ("inputs.", "github.event.inputs."):
            if match.group(1).startswith(prefix):
                return str(inputs.get(match.group(1)[len(prefix):], ""))
        return ""  # other contexts are not emulated

    return EXPRESSION.sub(value, template)


def _kill_group(process: subprocess.Popen) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _tail(path: Path) -> str:
    with open(path, "rb") as handle:
        handle.seek(0, os.SEEK_END)
        size = handle.tell()
        handle.seek(max(0, size - OUTPUT_TAIL_BYTES))
        return handle.read().decode("utf-8", "replace")

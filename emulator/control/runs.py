"""Control of workflow runs: how dispatched runs behave, and moving them by hand."""
from __future__ import annotations

from emulator.control.base import ControlBase, ControlError
from emulator.routing import route
from emulator.runs import CONCLUSIONS
from emulator.state import RUN_MODES, iso


class RunControls(ControlBase):
    @route("PUT", "/_emulator/repositories/{owner}/{repo}/run-name")
    def set_run_name(self, full_name: str, run_name: str | None, workflow: str = "readiness-runner.yml") -> dict:
        """The workflow file's `run-name` template (None: none, or the content folder's copy)."""
        with self.state.lock:
            repo = self._repo(full_name)
            if workflow not in repo.workflows:
                raise ControlError(f"workflow {workflow} is not in {full_name}", 404)
            repo.workflows[workflow].run_name = run_name
            return {"workflow": workflow, "run_name": run_name}

    @route("PUT", "/_emulator/repositories/{owner}/{repo}/run-settings")
    @route("PUT", "/_emulator/run-settings")
    def set_run_mode(self, full_name: str | None = None, mode: str = "manual", conclusion: str | None = None,
                     delay_seconds: float | None = None, runner_command: str | list | None = None,
                     runner_env: dict | None = None, timeout_seconds: float | None = None,
                     queue_seconds: float | None = None) -> dict:
        """How dispatched runs behave, for one repository or (full_name None) the default of new ones."""
        if mode not in RUN_MODES:
            raise ControlError(f"mode is one of {RUN_MODES}")
        if conclusion is not None and conclusion not in CONCLUSIONS:
            raise ControlError(f"conclusion is one of {CONCLUSIONS}")
        with self.state.lock:
            settings = self._repo(full_name).run_settings if full_name else self.state.default_run_settings
            settings.mode = mode
            if conclusion is not None:
                settings.auto_conclusion = conclusion
            if delay_seconds is not None:
                settings.auto_delay_seconds = float(delay_seconds)
            if runner_command is not None:
                settings.runner_command = runner_command
            if runner_env is not None:
                settings.runner_env = {str(k): str(v) for k, v in runner_env.items()}
            if timeout_seconds is not None:
                settings.runner_timeout_seconds = float(timeout_seconds)
            if queue_seconds is not None:
                settings.queue_seconds = float(queue_seconds)
            return {**vars(settings), "runner_env": sorted(settings.runner_env)}

    def _run_dict(self, run) -> dict:
        repo = self.state.repositories[run.repository_id]
        return {
            "id": run.id, "repository": repo.full_name, "workflow": run.workflow_file, "run_number": run.run_number,
            "display_title": run.display_title,
            "head_branch": run.head_branch, "head_sha": run.head_sha, "ref": run.ref, "inputs": dict(run.inputs),
            "status": run.current.status, "conclusion": run.current.conclusion, "run_attempt": run.current.number,
            "attempts": [
                {"number": a.number, "status": a.status, "conclusion": a.conclusion, "exit_code": a.exit_code,
                 "created_at": iso(a.created_at), "started_at": iso(a.started_at), "completed_at": iso(a.completed_at),
                 "stdout_tail": a.stdout_tail, "stderr_tail": a.stderr_tail, "workspace": a.workspace,
                 "id_token_request_url": self.engine.id_token_request_url(run, a),
                 "id_token_request_token": a.id_token_request_token}
                for a in run.attempts
            ],
        }

    @route("GET", "/_emulator/runs")
    def runs(self, full_name: str | None = None) -> list[dict]:
        with self.state.lock:
            repo_id = self._repo(full_name).id if full_name else None
            return [self._run_dict(r) for r in sorted(self.state.runs.values(), key=lambda r: r.id)
                    if repo_id is None or r.repository_id == repo_id]

    @route("GET", "/_emulator/runs/{run_id}")
    def run(self, run_id: int) -> dict:
        with self.state.lock:
            return self._run_dict(self._workflow_run(run_id))

    @route("POST", "/_emulator/runs/{run_id}/start")
    def start_run(self, run_id: int) -> dict:
        self.run(run_id)
        self.engine.start(int(run_id))
        return self.run(run_id)

    @route("POST", "/_emulator/runs/{run_id}/complete")
    def complete_run(self, run_id: int, conclusion: str = "success") -> dict:
        self.run(run_id)
        if conclusion not in CONCLUSIONS:
            raise ControlError(f"conclusion is one of {CONCLUSIONS}")
        self.engine.complete(int(run_id), conclusion)
        return self.run(run_id)

    @route("POST", "/_emulator/runs/{run_id}/rerun")
    def rerun(self, run_id: int) -> dict:
        self.run(run_id)
        try:
            self.engine.rerun(int(run_id))
        except ValueError as exc:
            raise ControlError(str(exc), 409) from None
        return self.run(run_id)

    def wait_for_run(self, run_id: int, status: str = "completed", timeout: float = 30.0) -> dict:
        self.run(run_id)
        try:
            self.engine.wait(int(run_id), status, float(timeout))
        except TimeoutError as exc:
            raise ControlError(str(exc), 408) from None
        return self.run(run_id)

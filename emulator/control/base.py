"""What every concern of the control surface shares: its error, the parts of a
running emulator it works on, and the lookups by name and number."""
from __future__ import annotations

from collections.abc import Callable

from emulator import webhooks
from emulator.faults import FaultSwitches
from emulator.oidc import OidcIssuer
from emulator.request_log import RequestLog
from emulator.runs import RunEngine
from emulator.state import Account, App, Installation, PullRequest, Repository, State, WorkflowRun


class ControlError(Exception):
    """A control call that cannot be done (HTTP 400, or ``status``)."""

    def __init__(self, message: str, status: int = 400):
        super().__init__(message)
        self.status = status


class ControlBase:
    def __init__(self, state: State, runs: RunEngine, issuer: OidcIssuer, faults: FaultSwitches,
                 log: RequestLog, sender: webhooks.WebhookSender, base_url: Callable[[], str]):
        self.state = state
        self.engine = runs
        self.issuer = issuer
        self.fault_switches = faults
        self.log = log
        self.sender = sender
        self._base_url = base_url
        # Private keys the emulator generated, so app_jwt() can sign for tests. Never logged.
        self._app_private_keys: dict[int, str] = {}

    # ---- lookups (4xx ControlError when missing) --------------------------------------------

    def _the_app(self, app_id: int | None) -> App:
        with self.state.lock:
            if app_id is not None:
                app = self.state.apps.get(int(app_id))
            elif len(self.state.apps) == 1:
                app = next(iter(self.state.apps.values()))
            else:
                raise ControlError("register one app first, or name app_id")
            if app is None:
                raise ControlError(f"unknown app {app_id}", 404)
            return app

    def _account(self, login: str, account_id: int | None, account_type: str) -> Account:
        """The account named ``login``: the given id, else the one the emulator knows, else a new one."""
        known = self.state.account_by_login(login)
        return Account(login, int(account_id) if account_id else (known.id if known else self.state.next_id("account")), account_type)

    def _installation(self, installation_id) -> Installation:
        inst = self.state.installations.get(int(installation_id))
        if inst is None:
            raise ControlError(f"unknown installation {installation_id}", 404)
        return inst

    def _repo(self, full_name: str) -> Repository:
        owner, _, name = full_name.partition("/")
        repo = self.state.repository_by_name(owner, name)
        if repo is None:
            raise ControlError(f"unknown repository {full_name}", 404)
        return repo

    def _repo_dict(self, repo: Repository) -> dict:
        return {
            "id": repo.id, "full_name": repo.full_name, "owner": {"login": repo.owner.login, "id": repo.owner.id, "type": repo.owner.type},
            "installation_id": repo.installation_id, "default_branch": repo.default_branch, "head_sha": repo.head_sha,
            "branches": dict(repo.branches), "content_dir": repo.content_dir, "private": repo.private,
            "workflows": {w.file_name: {"id": w.id, "declared_inputs": w.declared_inputs} for w in repo.workflows.values()},
            "run_settings": {**vars(repo.run_settings), "runner_env": sorted(repo.run_settings.runner_env)},
        }

    def _workflow_run(self, run_id) -> WorkflowRun:
        run = self.state.runs.get(int(run_id))
        if run is None:
            raise ControlError(f"unknown run {run_id}", 404)
        return run

    def _pull(self, repo: Repository, number) -> PullRequest:
        pull = self.state.pulls.get((repo.id, int(number)))
        if pull is None:
            raise ControlError(f"unknown pull request #{number}", 404)
        return pull

    def _pull_dict(self, repo: Repository, pull: PullRequest) -> dict:
        return {"number": pull.number, "id": pull.id, "repository": repo.full_name, "state": pull.state, "draft": pull.draft,
                "merged": pull.merged, "head": {"ref": pull.head_ref, "sha": pull.head_sha},
                "base": {"ref": pull.base_ref, "sha": pull.base_sha}}

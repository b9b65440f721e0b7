"""The emulator's control surface: the Python API tests call, and the same
operations as JSON over HTTP under ``/_emulator/`` for tools such as bin/demo.

Every operation is a method of ``Controller``; the HTTP routes bind a method to a
path and pass the JSON body (and path parameters) as keyword arguments, so both
surfaces always offer the same things with the same names.
"""
from __future__ import annotations

import inspect
import json
from datetime import timedelta
from pathlib import Path
from typing import Callable

from emulator import auth, shapes, webhooks
from emulator.faults import FaultSwitches
from emulator.oidc import OidcIssuer
from emulator.request_log import RequestLog
from emulator.routing import Reply, RequestContext, Router
from emulator.runs import CONCLUSIONS, RunEngine
from emulator.state import (
    DEFAULT_WORKFLOW,
    RUN_MODES,
    Account,
    App,
    Installation,
    PullRequest,
    Repository,
    RunAttempt,
    RunSettings,
    State,
    Token,
    User,
    Workflow,
    WorkflowRun,
    iso,
    random_sha,
    utcnow,
)

DEFAULT_APP_PERMISSIONS = {
    "actions": "write",
    "checks": "write",
    "issues": "write",
    "pull_requests": "write",
    "metadata": "read",
}
DEFAULT_APP_EVENTS = ["installation_target", "pull_request", "check_run", "meta"]


class ControlError(Exception):
    """A control call that cannot be done (HTTP 400, or ``status``)."""

    def __init__(self, message: str, status: int = 400):
        super().__init__(message)
        self.status = status


class Controller:
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

    # ---- apps, installations, repositories ---------------------------------------------------

    def register_app(self, app_id: int | None = None, public_key_pem: str | None = None, slug: str = "boardready",
                     name: str | None = None, permissions: dict | None = None, events: list | None = None,
                     owner_login: str = "boardready-dev") -> dict:
        """Register the app. Without ``public_key_pem`` a key pair is generated and the
        private PEM is returned (``private_key_pem``) for the service's configuration."""
        private_pem = None
        if public_key_pem is None:
            private_pem, public_key_pem = auth.generate_rsa_key_pair()
        with self.state.lock:
            app_id = int(app_id) if app_id is not None else self.state.next_id("app")
            if app_id in self.state.apps:
                raise ControlError(f"app {app_id} exists")
            app = App(
                id=app_id, slug=slug, name=name or slug, public_key_pem=public_key_pem,
                client_id="Iv1." + auth.secrets.token_hex(8), client_secret=auth.secrets.token_hex(20),
                owner=Account(owner_login, self.state.next_id("account"), "Organization"),
                permissions=dict(permissions or DEFAULT_APP_PERMISSIONS), events=list(events or DEFAULT_APP_EVENTS),
            )
            self.state.apps[app_id] = app
            if private_pem:
                self._app_private_keys[app_id] = private_pem
        return {"id": app.id, "slug": app.slug, "client_id": app.client_id, "client_secret": app.client_secret,
                "public_key_pem": public_key_pem, "private_key_pem": private_pem}

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

    def app_jwt(self, app_id: int | None = None, iat: int | None = None, exp: int | None = None,
                iss: int | str | None = None, private_key_pem: str | None = None) -> str:
        """An app JWT signed with the generated (or given) key; iat/exp/iss override for negative tests."""
        app = self._the_app(app_id)
        key = private_key_pem or self._app_private_keys.get(app.id)
        if key is None:
            raise ControlError("the emulator does not hold this app's private key; pass private_key_pem")
        return auth.make_app_jwt(key, app.id if iss is None else iss, iat=iat, exp=exp)

    def create_installation(self, account_login: str, account_id: int | None = None,
                            account_type: str = "Organization", app_id: int | None = None,
                            installation_id: int | None = None, repository_selection: str = "selected",
                            permissions: dict | None = None, deliver: bool = False) -> dict:
        if account_type not in ("Organization", "User"):
            raise ControlError("account_type is Organization or User")
        app = self._the_app(app_id)
        with self.state.lock:
            known = self.state.account_by_login(account_login)
            account = Account(account_login, int(account_id) if account_id else (known.id if known else self.state.next_id("account")), account_type)
            inst_id = int(installation_id) if installation_id else self.state.next_id("installation")
            if inst_id in self.state.installations:
                raise ControlError(f"installation {inst_id} exists")
            inst = Installation(id=inst_id, app_id=app.id, account=account, repository_selection=repository_selection,
                                permissions=dict(permissions or app.permissions), events=list(app.events))
            self.state.installations[inst_id] = inst
            result = shapes.installation(self._base_url(), inst, app)
        if deliver:
            result["delivery"] = self.send_installation_event(inst_id, "created")
        return result

    def delete_installation(self, installation_id: int, deliver: bool = False) -> dict:
        """Uninstall: the installation, its tokens and its repositories' link go away."""
        installation_id = int(installation_id)
        delivery = self.send_installation_event(installation_id, "deleted") if deliver else None
        with self.state.lock:
            if self.state.installations.pop(installation_id, None) is None:
                raise ControlError(f"unknown installation {installation_id}", 404)
            for repo in self.state.repositories.values():
                if repo.installation_id == installation_id:
                    repo.installation_id = None
            for value in [v for v, t in self.state.tokens.items() if t.installation_id == installation_id]:
                del self.state.tokens[value]
        return {"deleted": installation_id, "delivery": delivery}

    def suspend_installation(self, installation_id: int, suspended: bool = True, deliver: bool = False) -> dict:
        with self.state.lock:
            inst = self._installation(installation_id)
            inst.suspended_at = utcnow() if suspended else None
        delivery = self.send_installation_event(int(installation_id), "suspend" if suspended else "unsuspend") if deliver else None
        return {"installation_id": int(installation_id), "suspended": suspended, "delivery": delivery}

    def _installation(self, installation_id) -> Installation:
        inst = self.state.installations.get(int(installation_id))
        if inst is None:
            raise ControlError(f"unknown installation {installation_id}", 404)
        return inst

    def installation_token(self, installation_id: int, repository_ids: list | None = None,
                           permissions: dict | None = None, ttl_seconds: int | None = None) -> str:
        """An installation token without the JWT exchange (for tests of routes, not of auth)."""
        with self.state.lock:
            inst = self._installation(installation_id)
            token = auth.issue_installation_token(self.state, inst.id, repository_ids, dict(permissions or inst.permissions))
            if ttl_seconds is not None:
                token.expires_at = utcnow() + timedelta(seconds=ttl_seconds)
            return token.value

    def set_installation_token_ttl(self, seconds: int) -> dict:
        with self.state.lock:
            self.state.installation_token_ttl_seconds = int(seconds)
        return {"ttl_seconds": int(seconds)}

    def expire_installation_tokens(self, installation_id: int | None = None) -> dict:
        """Make live installation tokens expire now (the service must fetch new ones)."""
        expired = 0
        with self.state.lock:
            for token in self.state.tokens.values():
                if token.kind == "installation" and (installation_id is None or token.installation_id == int(installation_id)):
                    token.expires_at = utcnow() - timedelta(seconds=1)
                    expired += 1
        return {"expired": expired}

    def create_repository(self, full_name: str, installation_id: int | None = None, repository_id: int | None = None,
                          content_dir: str | None = None, default_branch: str = "main", head_sha: str | None = None,
                          workflows: list | dict | None = None, private: bool = True, owner_id: int | None = None,
                          deliver: bool = False) -> dict:
        """A repository, optionally in an installation. ``workflows`` lists the workflow files present
        (default ``["readiness-runner.yml"]``; ``[]`` for none) or maps file name to its declared inputs."""
        owner_login, _, name = full_name.partition("/")
        if not owner_login or not name or "/" in name:
            raise ControlError("full_name is owner/name")
        if content_dir is not None and not Path(content_dir).is_dir():
            raise ControlError(f"content_dir {content_dir} is not a folder")
        with self.state.lock:
            if self.state.repository_by_name(owner_login, name):
                raise ControlError(f"repository {full_name} exists")
            inst = self._installation(installation_id) if installation_id is not None else None
            owner = self.state.account_by_login(owner_login)
            if inst is not None and inst.account.login.lower() == owner_login.lower():
                owner = inst.account
            if owner is None:
                owner = Account(owner_login, int(owner_id) if owner_id else self.state.next_id("account"), "Organization")
            sha = head_sha or random_sha()
            repo = Repository(
                id=int(repository_id) if repository_id else self.state.next_id("repository"),
                owner=owner, name=name, installation_id=inst.id if inst else None, default_branch=default_branch,
                private=private, content_dir=str(Path(content_dir).resolve()) if content_dir else None,
                branches={default_branch: sha}, commits={sha},
                run_settings=RunSettings(**vars(self.state.default_run_settings)),
            )
            repo.run_settings.runner_env = dict(repo.run_settings.runner_env)
            self._set_workflows(repo, [DEFAULT_WORKFLOW] if workflows is None else workflows)
            self.state.repositories[repo.id] = repo
            result = self._repo_dict(repo)
        if deliver and inst is not None:
            result["delivery"] = self.send_installation_repositories_event(inst.id, added=[full_name])
        return result

    def _set_workflows(self, repo: Repository, workflows: list | dict) -> None:
        declared = workflows if isinstance(workflows, dict) else {name: None for name in workflows}
        existing = {w.file_name: w for w in repo.workflows.values()}
        repo.workflows = {}
        for file_name, inputs in declared.items():
            workflow_id = existing[file_name].id if file_name in existing else self.state.next_id("workflow")
            repo.workflows[file_name] = Workflow(id=workflow_id, file_name=file_name, declared_inputs=inputs)

    def set_workflows(self, full_name: str, workflows: list | dict) -> dict:
        """Replace the workflow files present in the repository (``[]``: the readiness workflow is missing)."""
        with self.state.lock:
            repo = self._repo(full_name)
            self._set_workflows(repo, workflows)
            return self._repo_dict(repo)

    def add_repository_to_installation(self, full_name: str, installation_id: int, deliver: bool = False) -> dict:
        with self.state.lock:
            repo, inst = self._repo(full_name), self._installation(installation_id)
            repo.installation_id = inst.id
        return {"repository": full_name, "delivery": self.send_installation_repositories_event(inst.id, added=[full_name]) if deliver else None}

    def remove_repository_from_installation(self, full_name: str, deliver: bool = False) -> dict:
        with self.state.lock:
            repo = self._repo(full_name)
            inst_id = repo.installation_id
            if inst_id is None:
                raise ControlError(f"{full_name} is in no installation")
        delivery = self.send_installation_repositories_event(inst_id, removed=[full_name]) if deliver else None
        with self.state.lock:
            repo.installation_id = None
        return {"repository": full_name, "delivery": delivery}

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

    def repository(self, full_name: str) -> dict:
        with self.state.lock:
            return self._repo_dict(self._repo(full_name))

    def push(self, full_name: str, branch: str | None = None, sha: str | None = None) -> dict:
        """Move a branch (created if new) to a new commit."""
        with self.state.lock:
            repo = self._repo(full_name)
            branch = branch or repo.default_branch
            sha = sha or random_sha()
            repo.branches[branch] = sha
            repo.commits.add(sha)
            return {"branch": branch, "sha": sha}

    # ---- pull requests ---------------------------------------------------------------------

    def open_pull_request(self, full_name: str, number: int | None = None, head_ref: str | None = None,
                          head_sha: str | None = None, base_ref: str | None = None, title: str | None = None,
                          draft: bool = False, author_login: str | None = None, deliver: bool = False) -> dict:
        with self.state.lock:
            repo = self._repo(full_name)
            number = int(number) if number else self.state.next_pull_number(repo.id)
            if (repo.id, number) in self.state.pulls:
                raise ControlError(f"pull request #{number} exists")
            head_ref = head_ref or f"feature-{number}"
            head_sha = head_sha or random_sha()
            base_ref = base_ref or repo.default_branch
            if base_ref not in repo.branches:
                raise ControlError(f"unknown base branch {base_ref}")
            repo.branches[head_ref] = head_sha
            repo.commits.add(head_sha)
            author = Account(author_login, self.state.next_id("account"), "User") if author_login else webhooks.default_sender(repo.owner)
            pull = PullRequest(id=self.state.next_id("pull"), number=number, repository_id=repo.id, head_ref=head_ref,
                               head_sha=head_sha, base_ref=base_ref, base_sha=repo.branches[base_ref],
                               title=title or f"Change {number}", author=author, draft=draft)
            self.state.pulls[(repo.id, number)] = pull
            result = self._pull_dict(repo, pull)
        if deliver:
            result["delivery"] = self.send_pull_request_event(full_name, number, "opened")
        return result

    def synchronize_pull_request(self, full_name: str, number: int, head_sha: str | None = None, deliver: bool = False) -> dict:
        """Push a new head commit to the pull request's branch."""
        with self.state.lock:
            repo = self._repo(full_name)
            pull = self._pull(repo, number)
            before = pull.head_sha
            pull.head_sha = head_sha or random_sha()
            pull.updated_at = utcnow()
            repo.branches[pull.head_ref] = pull.head_sha
            repo.commits.add(pull.head_sha)
            result = self._pull_dict(repo, pull)
        if deliver:
            result["delivery"] = self.send_pull_request_event(full_name, number, "synchronize", before=before)
        return result

    def set_pull_request_state(self, full_name: str, number: int, action: str, deliver: bool = False) -> dict:
        """closed | reopened | ready_for_review | converted_to_draft | merged (closed with merged=true)."""
        with self.state.lock:
            repo = self._repo(full_name)
            pull = self._pull(repo, number)
            now = utcnow()
            if action in ("closed", "merged"):
                pull.state, pull.closed_at, pull.merged = "closed", now, action == "merged"
            elif action == "reopened":
                pull.state, pull.closed_at, pull.merged = "open", None, False
            elif action in ("ready_for_review", "converted_to_draft"):
                pull.draft = action == "converted_to_draft"
            else:
                raise ControlError(f"unknown pull request action {action}")
            pull.updated_at = now
            result = self._pull_dict(repo, pull)
        if deliver:
            result["delivery"] = self.send_pull_request_event(full_name, number, "closed" if action == "merged" else action)
        return result

    def _pull(self, repo: Repository, number) -> PullRequest:
        pull = self.state.pulls.get((repo.id, int(number)))
        if pull is None:
            raise ControlError(f"unknown pull request #{number}", 404)
        return pull

    def _pull_dict(self, repo: Repository, pull: PullRequest) -> dict:
        return {"number": pull.number, "id": pull.id, "repository": repo.full_name, "state": pull.state, "draft": pull.draft,
                "merged": pull.merged, "head": {"ref": pull.head_ref, "sha": pull.head_sha},
                "base": {"ref": pull.base_ref, "sha": pull.base_sha}}

    # ---- workflow runs ---------------------------------------------------------------------

    def set_run_mode(self, full_name: str | None = None, mode: str = "manual", conclusion: str | None = None,
                     delay_seconds: float | None = None, runner_command: str | list | None = None,
                     runner_env: dict | None = None, timeout_seconds: float | None = None) -> dict:
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
            return {**vars(settings), "runner_env": sorted(settings.runner_env)}

    def _run_dict(self, run) -> dict:
        repo = self.state.repositories[run.repository_id]
        return {
            "id": run.id, "repository": repo.full_name, "workflow": run.workflow_file, "run_number": run.run_number,
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

    def runs(self, full_name: str | None = None) -> list[dict]:
        with self.state.lock:
            repo_id = self._repo(full_name).id if full_name else None
            return [self._run_dict(r) for r in sorted(self.state.runs.values(), key=lambda r: r.id)
                    if repo_id is None or r.repository_id == repo_id]

    def run(self, run_id: int) -> dict:
        with self.state.lock:
            run = self.state.runs.get(int(run_id))
            if run is None:
                raise ControlError(f"unknown run {run_id}", 404)
            return self._run_dict(run)

    def start_run(self, run_id: int) -> dict:
        self.run(run_id)
        self.engine.start(int(run_id))
        return self.run(run_id)

    def complete_run(self, run_id: int, conclusion: str = "success") -> dict:
        self.run(run_id)
        if conclusion not in CONCLUSIONS:
            raise ControlError(f"conclusion is one of {CONCLUSIONS}")
        self.engine.complete(int(run_id), conclusion)
        return self.run(run_id)

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

    # ---- check runs and comments -----------------------------------------------------------

    def check_runs(self, full_name: str | None = None) -> list[dict]:
        with self.state.lock:
            repo_id = self._repo(full_name).id if full_name else None
            return [
                {"id": c.id, "repository": self.state.repositories[c.repository_id].full_name, "app_id": c.app_id,
                 "name": c.name, "head_sha": c.head_sha, "status": c.status, "conclusion": c.conclusion,
                 "external_id": c.external_id, "details_url": c.details_url, "title": c.title, "summary": c.summary,
                 "text": c.text, "annotations_count": len(c.annotations), "started_at": iso(c.started_at),
                 "completed_at": iso(c.completed_at)}
                for c in sorted(self.state.check_runs.values(), key=lambda c: c.id)
                if repo_id is None or c.repository_id == repo_id
            ]

    def annotations(self, check_run_id: int) -> list[dict]:
        """Every annotation a check run accumulated across create and updates, in order."""
        with self.state.lock:
            check = self.state.check_runs.get(int(check_run_id))
            if check is None:
                raise ControlError(f"unknown check run {check_run_id}", 404)
            return [dict(a) for a in check.annotations]

    def comments(self, full_name: str | None = None, issue_number: int | None = None) -> list[dict]:
        with self.state.lock:
            repo_id = self._repo(full_name).id if full_name else None
            return [
                {"id": c.id, "repository": self.state.repositories[c.repository_id].full_name,
                 "issue_number": c.issue_number, "body": c.body, "author": c.author.login,
                 "created_at": iso(c.created_at), "updated_at": iso(c.updated_at)}
                for c in sorted(self.state.comments.values(), key=lambda c: c.id)
                if (repo_id is None or c.repository_id == repo_id)
                and (issue_number is None or c.issue_number == int(issue_number))
            ]

    # ---- request log and faults ------------------------------------------------------------

    def requests(self, method: str | None = None, path_prefix: str | None = None, operation_id: str | None = None) -> list[dict]:
        return self.log.entries(method, path_prefix, operation_id)

    def clear_requests(self) -> dict:
        self.log.clear()
        return {"cleared": True}

    def add_fault(self, method: str | None = None, path: str | None = None, operation_id: str | None = None,
                  status: int | None = None, body=None, headers: dict | None = None, delay_ms: int = 0,
                  drop: bool = False, count: int | None = None, preset: str | None = None,
                  reset_in_seconds: int = 60) -> dict:
        """Make matching requests fail; see emulator.faults. Returns the fault with its ``id``."""
        spec = {"method": method, "path": path, "operation_id": operation_id, "delay_ms": int(delay_ms), "drop": bool(drop),
                "count": count, "headers": headers or {}}
        if status is not None:
            spec["status"] = int(status)
        if body is not None:
            spec["body"] = body
        if preset:
            spec.update(preset=preset, reset_in_seconds=reset_in_seconds)
            if not headers:
                spec.pop("headers")
        try:
            return self.fault_switches.add(**spec).to_dict()
        except ValueError as exc:
            raise ControlError(str(exc)) from None

    def faults(self) -> list[dict]:
        return self.fault_switches.list()

    def remove_fault(self, fault_id: int) -> dict:
        if not self.fault_switches.remove(int(fault_id)):
            raise ControlError(f"unknown fault {fault_id}", 404)
        return {"removed": int(fault_id)}

    def clear_faults(self) -> dict:
        self.fault_switches.clear()
        return {"cleared": True}

    # ---- OIDC ------------------------------------------------------------------------------

    @property
    def oidc_issuer(self) -> str:
        return self.issuer.issuer

    def oidc_issuer_info(self) -> dict:
        return {"issuer": self.issuer.issuer, "jwks_uri": self.issuer.discovery()["jwks_uri"], "current_kid": self.issuer.current_kid}

    def rotate_oidc_key(self, retire_previous: bool = False) -> dict:
        return {"kid": self.issuer.rotate(bool(retire_previous))}

    def retire_oidc_key(self, kid: str) -> dict:
        if not self.issuer.retire(kid):
            raise ControlError(f"unknown kid {kid}", 404)
        return {"retired": kid}

    def mint_oidc_token(self, audience: str, run_id: int | None = None, repository: str | None = None,
                        claims: dict | None = None, lifetime_seconds: int = 300, issued_at: int | None = None,
                        kid: str | None = None, unpublished_key: bool = False) -> str:
        """An ID token as a run would get it, with overrides for negative tests.

        ``run_id``: the claims of that run's current attempt; else ``repository``
        ("owner/name") with a made-up run on its default branch. ``claims`` overrides
        or adds claims (a value of None removes one, e.g. {"aud": "other"}, {"iss": ...},
        {"repository": "someone/else"}); ``issued_at`` in the past plus a short lifetime
        gives an expired token; ``kid`` puts an unknown key id in the header;
        ``unpublished_key`` signs with a key the JWKS never publishes.
        """
        with self.state.lock:
            if run_id is not None:
                run = self.state.runs.get(int(run_id))
                if run is None:
                    raise ControlError(f"unknown run {run_id}", 404)
                repo = self.state.repositories[run.repository_id]
                base = self.issuer.run_claims(repo, run, run.current, audience)
            elif repository is not None:
                repo = self._repo(repository)
                fake = WorkflowRun(id=self.state.next_id("run"), repository_id=repo.id, workflow_id=0,
                                   workflow_file=DEFAULT_WORKFLOW, run_number=1, head_branch=repo.default_branch,
                                   head_sha=repo.head_sha, ref=f"refs/heads/{repo.default_branch}", inputs={},
                                   actor=repo.owner)
                base = self.issuer.run_claims(repo, fake, RunAttempt(number=1), audience)
            else:
                raise ControlError("name run_id or repository")
        base.update(claims or {})
        return self.issuer.sign(base, lifetime_seconds=int(lifetime_seconds), issued_at=issued_at,
                                header_kid=kid, unpublished_key=bool(unpublished_key))

    # ---- users and OAuth -------------------------------------------------------------------

    def create_user(self, login: str, user_id: int | None = None, name: str | None = None, email: str | None = None,
                    organizations: list | None = None, sign_in: bool = True) -> dict:
        """A person; with ``sign_in`` the OAuth authorize endpoint signs this user in."""
        with self.state.lock:
            known = self.state.account_by_login(login)
            uid = int(user_id) if user_id else (known.id if known and known.type == "User" else self.state.next_id("account"))
            user = User(login=login, id=uid, name=name, email=email, organizations=list(organizations or []))
            self.state.users[uid] = user
            if sign_in:
                self.state.oauth_user_id = uid
        return {"login": login, "id": uid, "organizations": user.organizations}

    def user_token(self, login: str, app_id: int | None = None) -> str:
        """A user OAuth token without the web flow."""
        app = self._the_app(app_id)
        with self.state.lock:
            user = next((u for u in self.state.users.values() if u.login == login), None)
            if user is None:
                raise ControlError(f"unknown user {login}", 404)
            token = Token(value=auth.random_token("gho_"), kind="user", expires_at=None, user_id=user.id, app_id=app.id)
            self.state.tokens[token.value] = token
            return token.value

    # ---- webhooks --------------------------------------------------------------------------

    def configure_webhooks(self, url: str | None = None, secret: str | None = None,
                           marketplace_url: str | None = None, marketplace_secret: str | None = None) -> dict:
        self.sender.configure("app", url, secret)
        self.sender.configure("marketplace", marketplace_url, marketplace_secret)
        return {"url": self.sender.targets["app"].url, "marketplace_url": self.sender.targets["marketplace"].url}

    def send_webhook(self, event: str, payload: dict, target: str = "app") -> dict:
        """Deliver any payload as ``event`` (e.g. a fixture file's content)."""
        if target not in ("app", "marketplace"):
            raise ControlError("target is app or marketplace")
        inst = payload.get("installation") if isinstance(payload, dict) else None
        return self.sender.send(event, payload, target, installation_id=(inst or {}).get("id"))

    def send_installation_event(self, installation_id: int, action: str = "created") -> dict:
        with self.state.lock:
            inst = self._installation(installation_id)
            app = self.state.apps[inst.app_id]
            payload = webhooks.installation_payload(self._base_url(), action, inst, app,
                                                    self.state.installation_repositories(inst.id),
                                                    webhooks.default_sender(inst.account))
        return self.sender.send("installation", payload, "app", inst.id)

    def send_installation_repositories_event(self, installation_id: int, added: list | None = None,
                                             removed: list | None = None) -> dict:
        with self.state.lock:
            inst = self._installation(installation_id)
            app = self.state.apps[inst.app_id]
            added_repos = [self._repo(n) for n in added or []]
            removed_repos = [self._repo(n) for n in removed or []]
            payload = webhooks.installation_repositories_payload(
                self._base_url(), "added" if added_repos else "removed", inst, app, added_repos, removed_repos,
                webhooks.default_sender(inst.account))
        return self.sender.send("installation_repositories", payload, "app", inst.id)

    def send_pull_request_event(self, full_name: str, number: int, action: str = "opened", before: str | None = None) -> dict:
        with self.state.lock:
            repo = self._repo(full_name)
            pull = self._pull(repo, number)
            payload = webhooks.pull_request_payload(self._base_url(), action, repo, pull, pull.author,
                                                    before=before or pull.base_sha)
        return self.sender.send("pull_request", payload, "app", repo.installation_id)

    def send_ping(self, target: str = "app", app_id: int | None = None) -> dict:
        app = self._the_app(app_id)
        url = self.sender.targets[target].url or ""
        events = ["marketplace_purchase"] if target == "marketplace" else list(app.events)
        payload = webhooks.ping_payload(self._base_url(), app, self.sender.hook_ids[target], url, events)
        return self.sender.send("ping", payload, target)

    def send_marketplace_purchase(self, action: str, account_login: str, account_id: int | None = None,
                                  account_type: str = "Organization", plan: dict | None = None,
                                  effective_date: str | None = None, previous_plan: dict | None = None) -> dict:
        """purchased | changed | cancelled | pending_change | pending_change_cancelled, to the marketplace URL."""
        with self.state.lock:
            known = self.state.account_by_login(account_login)
            account = Account(account_login, int(account_id) if account_id else (known.id if known else self.state.next_id("account")), account_type)
        payload = webhooks.marketplace_purchase_payload(self._base_url(), action, account, plan, effective_date, previous_plan)
        return self.sender.send("marketplace_purchase", payload, "marketplace")

    def deliveries(self) -> list[dict]:
        return self.sender.deliveries()

    def redeliver(self, delivery_id: str) -> dict:
        try:
            return self.sender.redeliver(delivery_id)
        except KeyError:
            raise ControlError(f"unknown delivery {delivery_id}", 404) from None

    # ---- whole state -----------------------------------------------------------------------

    def reset(self) -> dict:
        """Forget everything but the OIDC keys and webhook targets (a fresh host for the next test)."""
        fresh = State()
        with self.state.lock:
            for name, value in vars(fresh).items():
                if name != "lock":
                    setattr(self.state, name, value)
            self._app_private_keys.clear()
        self.log.clear()
        self.fault_switches.clear()
        self.sender.clear()
        return {"reset": True}

    def summary(self) -> dict:
        with self.state.lock:
            return {
                "url": self._base_url(),
                "oidc_issuer": self.issuer.issuer,
                "apps": [{"id": a.id, "slug": a.slug, "client_id": a.client_id} for a in self.state.apps.values()],
                "installations": [{"id": i.id, "app_id": i.app_id, "account": vars(i.account)} for i in self.state.installations.values()],
                "repositories": [self._repo_dict(r) for r in self.state.repositories.values()],
                "pull_requests": [self._pull_dict(self.state.repositories[p.repository_id], p) for p in self.state.pulls.values()],
                "users": [{"login": u.login, "id": u.id} for u in self.state.users.values()],
            }


# ---- the HTTP binding -----------------------------------------------------------------------------

CONTROL_ROUTES = [
    ("GET", "/_emulator/state", "summary"),
    ("POST", "/_emulator/reset", "reset"),
    ("POST", "/_emulator/apps", "register_app"),
    ("POST", "/_emulator/apps/{app_id}/jwt", "app_jwt"),
    ("POST", "/_emulator/installations", "create_installation"),
    ("DELETE", "/_emulator/installations/{installation_id}", "delete_installation"),
    ("POST", "/_emulator/installations/{installation_id}/suspend", "suspend_installation"),
    ("POST", "/_emulator/installations/{installation_id}/tokens", "installation_token"),
    ("POST", "/_emulator/installation-tokens/expire", "expire_installation_tokens"),
    ("PUT", "/_emulator/installation-tokens/ttl", "set_installation_token_ttl"),
    ("POST", "/_emulator/repositories", "create_repository"),
    ("GET", "/_emulator/repositories/{owner}/{repo}", "repository"),
    ("PUT", "/_emulator/repositories/{owner}/{repo}/workflows", "set_workflows"),
    ("PUT", "/_emulator/repositories/{owner}/{repo}/run-settings", "set_run_mode"),
    ("PUT", "/_emulator/run-settings", "set_run_mode"),
    ("POST", "/_emulator/repositories/{owner}/{repo}/push", "push"),
    ("PUT", "/_emulator/repositories/{owner}/{repo}/installation", "add_repository_to_installation"),
    ("DELETE", "/_emulator/repositories/{owner}/{repo}/installation", "remove_repository_from_installation"),
    ("POST", "/_emulator/repositories/{owner}/{repo}/pulls", "open_pull_request"),
    ("POST", "/_emulator/repositories/{owner}/{repo}/pulls/{number}/synchronize", "synchronize_pull_request"),
    ("POST", "/_emulator/repositories/{owner}/{repo}/pulls/{number}/state", "set_pull_request_state"),
    ("GET", "/_emulator/runs", "runs"),
    ("GET", "/_emulator/runs/{run_id}", "run"),
    ("POST", "/_emulator/runs/{run_id}/start", "start_run"),
    ("POST", "/_emulator/runs/{run_id}/complete", "complete_run"),
    ("POST", "/_emulator/runs/{run_id}/rerun", "rerun"),
    ("GET", "/_emulator/check-runs", "check_runs"),
    ("GET", "/_emulator/check-runs/{check_run_id}/annotations", "annotations"),
    ("GET", "/_emulator/comments", "comments"),
    ("GET", "/_emulator/requests", "requests"),
    ("DELETE", "/_emulator/requests", "clear_requests"),
    ("GET", "/_emulator/faults", "faults"),
    ("POST", "/_emulator/faults", "add_fault"),
    ("DELETE", "/_emulator/faults", "clear_faults"),
    ("DELETE", "/_emulator/faults/{fault_id}", "remove_fault"),
    ("GET", "/_emulator/oidc", "oidc_issuer_info"),
    ("POST", "/_emulator/oidc/rotate", "rotate_oidc_key"),
    ("POST", "/_emulator/oidc/keys/{kid}/retire", "retire_oidc_key"),
    ("POST", "/_emulator/oidc/tokens", "mint_oidc_token"),
    ("POST", "/_emulator/users", "create_user"),
    ("POST", "/_emulator/users/{login}/token", "user_token"),
    ("PUT", "/_emulator/webhooks", "configure_webhooks"),
    ("POST", "/_emulator/webhooks/installation", "send_installation_event"),
    ("POST", "/_emulator/webhooks/installation_repositories", "send_installation_repositories_event"),
    ("POST", "/_emulator/webhooks/pull_request", "send_pull_request_event"),
    ("POST", "/_emulator/webhooks/ping", "send_ping"),
    ("POST", "/_emulator/webhooks/marketplace_purchase", "send_marketplace_purchase"),
    ("POST", "/_emulator/webhooks", "send_webhook"),
    ("GET", "/_emulator/deliveries", "deliveries"),
    ("POST", "/_emulator/deliveries/{delivery_id}/redeliver", "redeliver"),
]
#: Results that are a bare token string are wrapped under this key in JSON.
TOKEN_RESULTS = {"app_jwt": "token", "installation_token": "token", "mint_oidc_token": "token", "user_token": "token"}


def register_control_routes(router: Router, controller: Controller) -> None:
    for method, template, name in CONTROL_ROUTES:
        router.add(method, template, f"emulator/{name}", _bind(getattr(controller, name), name), control=True)


def _bind(function, name: str):
    parameters = inspect.signature(function).parameters

    def handler(ctx: RequestContext) -> Reply:
        kwargs = {k: v[-1] for k, v in ctx.query.items()} if ctx.method == "GET" else {}
        if ctx.raw_body.strip():
            try:
                body = json.loads(ctx.raw_body)
            except ValueError:
                return Reply(400, {"error": "the body is not JSON"})
            if not isinstance(body, dict):
                return Reply(400, {"error": "the body must be a JSON object"})
            kwargs.update(body)
        params = dict(ctx.params)
        if "owner" in params:
            params["full_name"] = f"{params.pop('owner')}/{params.pop('repo')}"
        kwargs.update(params)
        unknown = sorted(set(kwargs) - set(parameters))
        if unknown:
            return Reply(400, {"error": f"unknown fields {unknown}; {name} takes {sorted(parameters)}"})
        try:
            result = function(**kwargs)
        except ControlError as exc:
            return Reply(exc.status, {"error": str(exc)})
        except (TypeError, ValueError) as exc:
            return Reply(400, {"error": str(exc)})
        if name in TOKEN_RESULTS:
            result = {TOKEN_RESULTS[name]: result}
        if isinstance(result, list):
            result = {"items": result}
        return Reply(201 if method_creates(ctx.method, name) else 200, result)

    return handler


def method_creates(method: str, name: str) -> bool:
    return method == "POST" and name in {"register_app", "create_installation", "create_repository", "open_pull_request",
                                         "add_fault", "create_user"}

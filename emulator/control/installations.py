"""Control of apps, installations, their tokens and repositories."""
from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from emulator import auth, shapes
from emulator.control.base import ControlBase, ControlError
from emulator.routing import route
from emulator.state import (
    DEFAULT_WORKFLOW,
    Account,
    App,
    Installation,
    Repository,
    RunSettings,
    Workflow,
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


class InstallationControls(ControlBase):
    @route("POST", "/_emulator/apps")
    def register_app(self, app_id: int | None = None, public_key_pem: str | None = None, slug: str = "boardready",
                     name: str | None = None, permissions: dict | None = None, events: list | None = None,
                     owner_login: str = "boardready-dev", callback_urls: list | None = None) -> dict:
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
                callback_urls=list(callback_urls or []),
            )
            self.state.apps[app_id] = app
            if private_pem:
                self._app_private_keys[app_id] = private_pem
        return {"id": app.id, "slug": app.slug, "client_id": app.client_id, "client_secret": app.client_secret,
                "public_key_pem": public_key_pem, "private_key_pem": private_pem}

    @route("POST", "/_emulator/apps/{app_id}/jwt")
    def app_jwt(self, app_id: int | None = None, iat: int | None = None, exp: int | None = None,
                iss: int | str | None = None, private_key_pem: str | None = None) -> str:
        """An app JWT signed with the generated (or given) key; iat/exp/iss override for negative tests."""
        app = self._the_app(app_id)
        key = private_key_pem or self._app_private_keys.get(app.id)
        if key is None:
            raise ControlError("the emulator does not hold this app's private key; pass private_key_pem")
        return auth.make_app_jwt(key, app.id if iss is None else iss, iat=iat, exp=exp)

    @route("POST", "/_emulator/installations")
    def create_installation(self, account_login: str, account_id: int | None = None,
                            account_type: str = "Organization", app_id: int | None = None,
                            installation_id: int | None = None, repository_selection: str = "selected",
                            permissions: dict | None = None, deliver: bool = False) -> dict:
        if account_type not in ("Organization", "User"):
            raise ControlError("account_type is Organization or User")
        app = self._the_app(app_id)
        with self.state.lock:
            account = self._account(account_login, account_id, account_type)
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

    @route("DELETE", "/_emulator/installations/{installation_id}")
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

    @route("POST", "/_emulator/installations/{installation_id}/suspend")
    def suspend_installation(self, installation_id: int, suspended: bool = True, deliver: bool = False) -> dict:
        with self.state.lock:
            inst = self._installation(installation_id)
            inst.suspended_at = utcnow() if suspended else None
        delivery = self.send_installation_event(int(installation_id), "suspend" if suspended else "unsuspend") if deliver else None
        return {"installation_id": int(installation_id), "suspended": suspended, "delivery": delivery}

    @route("POST", "/_emulator/installations/{installation_id}/tokens")
    def installation_token(self, installation_id: int, repository_ids: list | None = None,
                           permissions: dict | None = None, ttl_seconds: int | None = None) -> str:
        """An installation token without the JWT exchange (for tests of routes, not of auth)."""
        with self.state.lock:
            inst = self._installation(installation_id)
            token = auth.issue_installation_token(self.state, inst.id, repository_ids, dict(permissions or inst.permissions))
            if ttl_seconds is not None:
                token.expires_at = utcnow() + timedelta(seconds=ttl_seconds)
            return token.value

    @route("PUT", "/_emulator/installation-tokens/ttl")
    def set_installation_token_ttl(self, seconds: int) -> dict:
        with self.state.lock:
            self.state.installation_token_ttl_seconds = int(seconds)
        return {"ttl_seconds": int(seconds)}

    @route("POST", "/_emulator/installation-tokens/expire")
    def expire_installation_tokens(self, installation_id: int | None = None) -> dict:
        """Make live installation tokens expire now (the service must fetch new ones)."""
        expired = 0
        with self.state.lock:
            for token in self.state.tokens.values():
                if token.kind == "installation" and (installation_id is None or token.installation_id == int(installation_id)):
                    token.expires_at = utcnow() - timedelta(seconds=1)
                    expired += 1
        return {"expired": expired}

    @route("POST", "/_emulator/repositories")
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
            repo.workflows[file_name] = Workflow(id=workflow_id, file_name=file_name, declared_inputs=inputs,
                                                 run_name=existing[file_name].run_name if file_name in existing else None)

    @route("PUT", "/_emulator/repositories/{owner}/{repo}/workflows")
    def set_workflows(self, full_name: str, workflows: list | dict) -> dict:
        """Replace the workflow files present in the repository (``[]``: the readiness workflow is missing)."""
        with self.state.lock:
            repo = self._repo(full_name)
            self._set_workflows(repo, workflows)
            return self._repo_dict(repo)

    @route("PUT", "/_emulator/repositories/{owner}/{repo}/installation")
    def add_repository_to_installation(self, full_name: str, installation_id: int, deliver: bool = False) -> dict:
        with self.state.lock:
            repo, inst = self._repo(full_name), self._installation(installation_id)
            repo.installation_id = inst.id
        return {"repository": full_name, "delivery": self.send_installation_repositories_event(inst.id, added=[full_name]) if deliver else None}

    @route("DELETE", "/_emulator/repositories/{owner}/{repo}/installation")
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

    @route("GET", "/_emulator/repositories/{owner}/{repo}")
    def repository(self, full_name: str) -> dict:
        with self.state.lock:
            return self._repo_dict(self._repo(full_name))

    @route("POST", "/_emulator/repositories/{owner}/{repo}/push")
    def push(self, full_name: str, branch: str | None = None, sha: str | None = None) -> dict:
        """Move a branch (created if new) to a new commit."""
        with self.state.lock:
            repo = self._repo(full_name)
            branch = branch or repo.default_branch
            sha = sha or random_sha()
            repo.branches[branch] = sha
            repo.commits.add(sha)
            return {"branch": branch, "sha": sha}

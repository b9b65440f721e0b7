"""Control of identities: the OIDC issuer's keys and ID tokens, and the people who sign in."""
from __future__ import annotations

from emulator import auth
from emulator.control.base import ControlBase, ControlError
from emulator.routing import route
from emulator.state import DEFAULT_WORKFLOW, RunAttempt, Token, User, WorkflowRun


class IdentityControls(ControlBase):
    @property
    def oidc_issuer(self) -> str:
        return self.issuer.issuer

    @route("GET", "/_emulator/oidc")
    def oidc_issuer_info(self) -> dict:
        return {"issuer": self.issuer.issuer, "jwks_uri": self.issuer.discovery()["jwks_uri"], "current_kid": self.issuer.current_kid}

    @route("POST", "/_emulator/oidc/rotate")
    def rotate_oidc_key(self, retire_previous: bool = False) -> dict:
        return {"kid": self.issuer.rotate(bool(retire_previous))}

    @route("POST", "/_emulator/oidc/keys/{kid}/retire")
    def retire_oidc_key(self, kid: str) -> dict:
        if not self.issuer.retire(kid):
            raise ControlError(f"unknown kid {kid}", 404)
        return {"retired": kid}

    @route("POST", "/_emulator/oidc/tokens")
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
                run = self._workflow_run(run_id)
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

    @route("POST", "/_emulator/users")
    def create_user(self, login: str, user_id: int | None = None, name: str | None = None, email: str | None = None,
                    organizations: list | None = None, sign_in: bool = True,
                    repository_access: list | None = None, default_role: str = "admin") -> dict:
        """A person; with ``sign_in`` the OAuth authorize endpoint signs this user in.
        ``repository_access`` narrows the repositories of visible installations
        the user can access (full names; None: all of them); ``default_role`` is their
        role on each (admin, maintain, push, triage, pull; see set_permission)."""
        with self.state.lock:
            known = self.state.account_by_login(login)
            uid = int(user_id) if user_id else (known.id if known and known.type == "User" else self.state.next_id("account"))
            user = User(login=login, id=uid, name=name, email=email, organizations=list(organizations or []),
                        repository_access=None if repository_access is None else [n.lower() for n in repository_access],
                        default_role=default_role)
            self.state.users[uid] = user
            if sign_in:
                self.state.oauth_user_id = uid
        return {"login": login, "id": uid, "organizations": user.organizations}

    @route("PUT", "/_emulator/users/{login}/permissions")
    def set_permission(self, login: str, repository: str | None = None, role: str | None = None,
                       default_role: str | None = None, organizations: list | None = None) -> dict:
        """Change what the code host says about the user: their ``role`` (admin, maintain, push,
        triage, pull) on ``repository`` ("owner/name"), the ``default_role`` of the repositories
        not named, or the ``organizations`` they belong to (an empty list: removed from all)."""
        roles = ("admin", "maintain", "push", "triage", "pull")
        with self.state.lock:
            user = self._user(login)
            if repository is not None:
                if role not in roles:
                    raise ControlError(f"role must be one of {', '.join(roles)}")
                user.roles[repository.lower()] = role
            if default_role is not None:
                if default_role not in roles:
                    raise ControlError(f"default_role must be one of {', '.join(roles)}")
                user.default_role = default_role
            if organizations is not None:
                user.organizations = list(organizations)
            return {"login": user.login, "roles": dict(user.roles), "default_role": user.default_role,
                    "organizations": list(user.organizations)}

    @route("POST", "/_emulator/users/{login}/sign-in")
    def sign_in_as(self, login: str) -> dict:
        """The user the OAuth authorize endpoint signs in from now on."""
        with self.state.lock:
            user = self._user(login)
            self.state.oauth_user_id = user.id
        return {"login": user.login, "id": user.id}

    @route("PUT", "/_emulator/oauth/denied")
    def set_oauth_denied(self, denied: bool = True) -> dict:
        """The signed-in user refuses (authorize redirects back with error=access_denied)."""
        with self.state.lock:
            self.state.oauth_denied = bool(denied)
        return {"denied": bool(denied)}

    def _user(self, login: str) -> User:
        user = next((u for u in self.state.users.values() if u.login == login), None)
        if user is None:
            raise ControlError(f"unknown user {login}", 404)
        return user

    @route("POST", "/_emulator/users/{login}/token")
    def user_token(self, login: str, app_id: int | None = None) -> str:
        """A user OAuth token without the web flow."""
        app = self._the_app(app_id)
        with self.state.lock:
            user = self._user(login)
            token = Token(value=auth.random_token("gho_"), kind="user", expires_at=None, user_id=user.id, app_id=app.id)
            self.state.tokens[token.value] = token
            return token.value

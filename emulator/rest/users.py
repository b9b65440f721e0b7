"""The signed-in user (a user OAuth token): who they are, the installations and repositories they reach."""
from __future__ import annotations

from emulator import shapes
from emulator.auth import credential_of, require_installation_token, require_user_token
from emulator.errors import not_found
from emulator.rest.common import RouteGroup, paginate
from emulator.routing import Reply, RequestContext, route


class UserRoutes(RouteGroup):
    @route("GET", "/repos/{owner}/{repo}/collaborators/{username}/permission",
           "repos/get-collaborator-permission-level")
    def collaborator_permission(self, ctx: RequestContext) -> Reply:
        """A person's permission on a repository, asked with the installation's token. Someone
        the emulator does not know is 404; a known user without access is ``none``."""
        _, repo = self._repo(ctx, ("metadata", "read"))
        with self.state.lock:
            user = next((u for u in self.state.users.values() if u.login.lower() == ctx.params["username"].lower()),
                        None)
            if user is None:
                raise not_found()
            role = user.role_on(repo.full_name) if self._visible_to(user, repo) else "none"
            body = {"permission": shapes.LEGACY_PERMISSION[role], "role_name": shapes.ROLE_NAME[role],
                    "user": {**shapes.simple_user(ctx.base_url, user.account),
                             "permissions": shapes.role_permissions(role), "role_name": shapes.ROLE_NAME[role]}}
        return Reply(200, body)

    def _visible_to(self, user, repo) -> bool:
        inst = self.state.installations.get(repo.installation_id)
        visible = {user.login.lower(), *(o.lower() for o in user.organizations)}
        return inst is not None and inst.account.login.lower() in visible

    def _user_installations(self, token, user):
        visible = {user.login.lower(), *(o.lower() for o in user.organizations)}
        return [
            inst
            for inst in sorted(self.state.installations.values(), key=lambda i: i.id)
            if inst.account.login.lower() in visible and (token.app_id is None or inst.app_id == token.app_id)
        ]

    @route("GET", "/user", "users/get-authenticated")
    def get_user(self, ctx: RequestContext) -> Reply:
        _, user = require_user_token(self.state, ctx.header("authorization"))
        return Reply(200, shapes.private_user(ctx.base_url, user))

    @route("GET", "/user/installations", "apps/list-installations-for-authenticated-user")
    def list_user_installations(self, ctx: RequestContext) -> Reply:
        token, user = require_user_token(self.state, ctx.header("authorization"))
        with self.state.lock:
            installations = self._user_installations(token, user)
            page, headers = paginate(ctx, installations)
            body = {
                "total_count": len(installations),
                "installations": [
                    shapes.installation(ctx.base_url, i, self.state.apps[i.app_id]) for i in page
                ],
            }
        return Reply(200, body, headers)

    @route("GET", "/user/installations/{installation_id}/repositories", "apps/list-installation-repos-for-authenticated-user")
    def list_user_installation_repositories(self, ctx: RequestContext) -> Reply:
        token, user = require_user_token(self.state, ctx.header("authorization"))
        installation_id = self._int_param(ctx, "installation_id")
        with self.state.lock:
            inst = next((i for i in self._user_installations(token, user) if i.id == installation_id), None)
            if inst is None:
                raise not_found()
            # The repositories of the installation the user can access, each with
            # the user's own permissions on it.
            repos = [r for r in self.state.installation_repositories(inst.id) if user.role_on(r.full_name) != "none"]
            page, headers = paginate(ctx, repos)
            body = {
                "total_count": len(repos),
                "repository_selection": inst.repository_selection,
                "repositories": [{**shapes.repository(ctx.base_url, r),
                                  "permissions": shapes.role_permissions(user.role_on(r.full_name))} for r in page],
            }
        return Reply(200, body, headers)

    @route("GET", "/user/{account_id}", "users/get-by-id")
    def get_user_by_id(self, ctx: RequestContext) -> Reply:
        """A person by their durable id, as anyone may read it (the pages resolve a login the
        service did not keep with the installation's token). A credential, when sent, must be
        valid; an id the emulator does not know is 404."""
        if ctx.header("authorization") is not None:
            token = self.state.tokens.get(credential_of(ctx.header("authorization")) or "")
            kind = token.kind if token is not None else "installation"
            (require_user_token if kind == "user" else require_installation_token)(
                self.state, ctx.header("authorization"))
        account_id = self._int_param(ctx, "account_id")
        with self.state.lock:
            user = self.state.users.get(account_id)
            if user is None:
                raise not_found()
            body = shapes.public_user(ctx.base_url, user)
        return Reply(200, body)

"""The signed-in user (a user OAuth token): who they are, the installations and repositories they reach."""
from __future__ import annotations

from emulator import shapes
from emulator.auth import require_user_token
from emulator.errors import not_found
from emulator.rest.common import RouteGroup, paginate
from emulator.routing import Reply, RequestContext, route



class UserRoutes(RouteGroup):
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
            # The repositories of the installation the user can access.
            repos = [r for r in self.state.installation_repositories(inst.id)
                     if user.repository_access is None or r.full_name.lower() in user.repository_access]
            page, headers = paginate(ctx, repos)
            body = {
                "total_count": len(repos),
                "repository_selection": inst.repository_selection,
                "repositories": [shapes.repository(ctx.base_url, r) for r in page],
            }
        return Reply(200, body, headers)

"""Installations: access tokens from an app JWT, the installation lookups, the installation's repositories."""
from __future__ import annotations

from emulator import shapes
from emulator.auth import issue_installation_token, permission_covers, require_installation_token, verify_app_jwt
from emulator.errors import HostError, not_found, validation_failed
from emulator.rest.common import RouteGroup, invalid_request, is_int, json_object, paginate
from emulator.routing import Reply, RequestContext, route
from emulator.state import Installation, iso

NOT_ACCESSIBLE = "There is at least one repository that does not exist or is not accessible to the parent installation."



class InstallationRoutes(RouteGroup):
    @route("POST", "/app/installations/{installation_id}/access_tokens", "apps/create-installation-access-token")
    def create_access_token(self, ctx: RequestContext) -> Reply:
        app = verify_app_jwt(self.state, ctx.header("authorization"))
        installation_id = self._int_param(ctx, "installation_id")
        body = json_object(ctx.json(required=False) or {})
        with self.state.lock:
            inst = self._installation_of(app, installation_id)
            if inst.suspended_at is not None:
                raise HostError(403, "This installation has been suspended")
            repos = self.state.installation_repositories(inst.id)
            selected_ids = None
            names, ids = body.get("repositories"), body.get("repository_ids")
            if names is not None or ids is not None:
                by_name = {r.name.lower(): r.id for r in repos}
                by_name.update({r.full_name.lower(): r.id for r in repos})
                wanted: list[int] = []
                for name in names or []:
                    if not isinstance(name, str) or name.lower() not in by_name:
                        raise validation_failed(message=NOT_ACCESSIBLE)
                    wanted.append(by_name[name.lower()])
                for rid in ids or []:
                    if not is_int(rid) or rid not in {r.id for r in repos}:
                        raise validation_failed(message=NOT_ACCESSIBLE)
                    wanted.append(rid)
                selected_ids = sorted(set(wanted))
            requested = body.get("permissions")
            if requested is None:
                permissions = dict(inst.permissions)
            else:
                if not isinstance(requested, dict):
                    raise invalid_request("Invalid value for 'permissions'.")
                for name, level in requested.items():
                    if level not in ("read", "write", "admin") or not permission_covers(inst.permissions, name, level):
                        raise validation_failed(
                            message="The permissions requested are not granted to this installation."
                        )
                permissions = dict(requested)
            token = issue_installation_token(self.state, inst.id, selected_ids, permissions)
            reply = {
                "token": token.value,
                "expires_at": iso(token.expires_at),
                "permissions": permissions,
                "repository_selection": "selected" if selected_ids is not None else inst.repository_selection,
            }
            if selected_ids is not None:
                reply["repositories"] = [
                    shapes.repository(ctx.base_url, r) for r in repos if r.id in selected_ids
                ]
        return Reply(201, reply)

    def _installation_of(self, app, installation_id: int | None) -> Installation:
        """The app's installation; another app's, or none, is 404 (callers hold the lock)."""
        inst = self.state.installations.get(installation_id) if installation_id is not None else None
        if inst is None or inst.app_id != app.id:
            raise not_found()
        return inst

    @route("GET", "/app/installations/{installation_id}", "apps/get-installation")
    def get_installation(self, ctx: RequestContext) -> Reply:
        app = verify_app_jwt(self.state, ctx.header("authorization"))
        installation_id = self._int_param(ctx, "installation_id")
        with self.state.lock:
            return Reply(200, shapes.installation(ctx.base_url, self._installation_of(app, installation_id), app))

    @route("GET", "/repos/{owner}/{repo}/installation", "apps/get-repo-installation")
    def get_repo_installation(self, ctx: RequestContext) -> Reply:
        app = verify_app_jwt(self.state, ctx.header("authorization"))
        with self.state.lock:
            repo = self.state.repository_by_name(ctx.params["owner"], ctx.params["repo"])
            inst = self._installation_of(app, repo.installation_id if repo else None)
            return Reply(200, shapes.installation(ctx.base_url, inst, app))

    @route("GET", "/installation/repositories", "apps/list-repos-accessible-to-installation")
    def list_installation_repositories(self, ctx: RequestContext) -> Reply:
        token = require_installation_token(self.state, ctx.header("authorization"))
        with self.state.lock:
            inst = self.state.installations[token.installation_id]
            repos = [
                r
                for r in self.state.installation_repositories(inst.id)
                if token.repository_ids is None or r.id in token.repository_ids
            ]
            page, headers = paginate(ctx, repos)
            body = {
                "total_count": len(repos),
                "repositories": [shapes.repository(ctx.base_url, r) for r in page],
                "repository_selection": inst.repository_selection,
            }
        return Reply(200, body, headers)

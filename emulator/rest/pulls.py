"""Pull requests."""
from __future__ import annotations

from emulator import shapes
from emulator.errors import not_found
from emulator.rest.common import RouteGroup
from emulator.routing import Reply, RequestContext, route


class PullRequestRoutes(RouteGroup):
    @route("GET", "/repos/{owner}/{repo}/pulls/{pull_number}", "pulls/get")
    def get_pull(self, ctx: RequestContext) -> Reply:
        _, repo = self._repo(ctx, ("pull_requests", "read"))
        with self.state.lock:
            pull = self.state.pulls.get((repo.id, self._int_param(ctx, "pull_number")))
            if pull is None:
                raise not_found()
            return Reply(200, shapes.pull_request(ctx.base_url, repo, pull))

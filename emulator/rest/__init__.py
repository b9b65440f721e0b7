"""The REST routes of the code host the service calls, with the real paths,
status codes, validation rules and body shapes (see ``emulator.shapes``), one
module per concern.

Authentication per route follows the real host: app JWT for ``/app/...`` and the
repository installation lookup, an installation token for repository routes and
``/installation/repositories``, a user OAuth token for ``/user...``. An
installation token only reaches repositories of its installation (404 otherwise)
and only with the permissions it was granted (403 otherwise).
"""
from __future__ import annotations

from emulator.rest.actions import ActionsRoutes
from emulator.rest.checks import CheckRunRoutes
from emulator.rest.comments import IssueCommentRoutes
from emulator.rest.installations import InstallationRoutes
from emulator.rest.pulls import PullRequestRoutes
from emulator.rest.users import UserRoutes
from emulator.routing import Router
from emulator.runs import RunEngine
from emulator.state import State

ROUTE_GROUPS = (InstallationRoutes, ActionsRoutes, CheckRunRoutes, IssueCommentRoutes, PullRequestRoutes, UserRoutes)


def register_rest_routes(router: Router, state: State, runs: RunEngine) -> None:
    for group in ROUTE_GROUPS:
        router.add_declared(group(state, runs))

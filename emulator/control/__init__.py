"""The emulator's control surface: the Python API tests call, and the same
operations as JSON over HTTP under ``/_emulator/`` for tools such as bin/demo.

Every operation is a method of ``Controller``, which gathers one class per
concern (installations and repositories, pull requests, workflow runs, check runs
and comments, faults and the request log, identities, webhooks). An operation
declares its HTTP route with ``@route``; ``emulator.control.http`` binds the route to
the method, so both surfaces always offer the same things with the same names.
"""
from __future__ import annotations

from emulator.control.base import ControlError
from emulator.control.checks import CheckControls
from emulator.control.faults import FaultControls
from emulator.control.http import register_control_routes
from emulator.control.identity import IdentityControls
from emulator.control.installations import InstallationControls
from emulator.control.pull_requests import PullRequestControls
from emulator.control.runs import RunControls
from emulator.control.webhooks import WebhookControls
from emulator.routing import route
from emulator.state import State

__all__ = ["Controller", "ControlError", "register_control_routes"]


class Controller(InstallationControls, PullRequestControls, RunControls, CheckControls, FaultControls,
                 IdentityControls, WebhookControls):
    @route("POST", "/_emulator/reset")
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

    @route("GET", "/_emulator/state")
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

"""Control of webhooks: where they go, sending each event from the emulator's state, redelivery."""
from __future__ import annotations

from emulator import webhooks
from emulator.control.base import ControlBase, ControlError
from emulator.routing import route


class WebhookControls(ControlBase):
    @route("PUT", "/_emulator/webhooks")
    def configure_webhooks(self, url: str | None = None, secret: str | None = None,
                           marketplace_url: str | None = None, marketplace_secret: str | None = None) -> dict:
        self.sender.configure("app", url, secret)
        self.sender.configure("marketplace", marketplace_url, marketplace_secret)
        return {"url": self.sender.targets["app"].url, "marketplace_url": self.sender.targets["marketplace"].url}

    @route("POST", "/_emulator/webhooks")
    def send_webhook(self, event: str, payload: dict, target: str = "app") -> dict:
        """Deliver any payload as ``event`` (e.g. a fixture file's content)."""
        if target not in ("app", "marketplace"):
            raise ControlError("target is app or marketplace")
        inst = payload.get("installation") if isinstance(payload, dict) else None
        return self.sender.send(event, payload, target, installation_id=(inst or {}).get("id"))

    @route("POST", "/_emulator/webhooks/installation")
    def send_installation_event(self, installation_id: int, action: str = "created") -> dict:
        with self.state.lock:
            inst = self._installation(installation_id)
            app = self.state.apps[inst.app_id]
            payload = webhooks.installation_payload(self._base_url(), action, inst, app,
                                                    self.state.installation_repositories(inst.id),
                                                    webhooks.default_sender(inst.account))
        return self.sender.send("installation", payload, "app", inst.id)

    @route("POST", "/_emulator/webhooks/installation_repositories")
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

    @route("POST", "/_emulator/webhooks/organization/member_removed")
    def remove_organization_member(self, installation_id: int, login: str) -> dict:
        """The user leaves the installation's organization (they reach none of its repositories
        any more) and the app is told with ``organization`` ``member_removed``."""
        with self.state.lock:
            inst = self._installation(installation_id)
            user = self._user(login)
            user.organizations = [o for o in user.organizations if o.lower() != inst.account.login.lower()]
            payload = webhooks.organization_member_removed_payload(self._base_url(), inst, user.account,
                                                                   webhooks.default_sender(inst.account))
        return self.sender.send("organization", payload, "app", inst.id)

    @route("POST", "/_emulator/webhooks/member/removed")
    def remove_repository_member(self, full_name: str, login: str) -> dict:
        """The user loses access to one repository and the app is told with ``member`` ``removed``."""
        with self.state.lock:
            repo = self._repo(full_name)
            inst = self._installation(repo.installation_id)
            user = self._user(login)
            if user.repository_access is None:
                user.repository_access = [r.full_name.lower() for r in self.state.repositories.values()
                                          if r.id != repo.id]
            else:
                user.repository_access = [n for n in user.repository_access if n != repo.full_name.lower()]
            payload = webhooks.member_removed_payload(self._base_url(), inst, repo, user.account,
                                                      webhooks.default_sender(inst.account))
        return self.sender.send("member", payload, "app", inst.id)

    @route("POST", "/_emulator/webhooks/pull_request")
    def send_pull_request_event(self, full_name: str, number: int, action: str = "opened", before: str | None = None) -> dict:
        with self.state.lock:
            repo = self._repo(full_name)
            pull = self._pull(repo, number)
            payload = webhooks.pull_request_payload(self._base_url(), action, repo, pull, pull.author,
                                                    before=before or pull.base_sha)
        return self.sender.send("pull_request", payload, "app", repo.installation_id)

    @route("POST", "/_emulator/webhooks/ping")
    def send_ping(self, target: str = "app", app_id: int | None = None) -> dict:
        app = self._the_app(app_id)
        url = self.sender.targets[target].url or ""
        events = ["marketplace_purchase"] if target == "marketplace" else list(app.events)
        payload = webhooks.ping_payload(self._base_url(), app, self.sender.hook_ids[target], url, events)
        return self.sender.send("ping", payload, target)

    @route("POST", "/_emulator/webhooks/marketplace_purchase")
    def send_marketplace_purchase(self, action: str, account_login: str, account_id: int | None = None,
                                  account_type: str = "Organization", plan: dict | None = None,
                                  effective_date: str | None = None, previous_plan: dict | None = None) -> dict:
        """purchased | changed | cancelled | pending_change | pending_change_cancelled, to the marketplace URL."""
        with self.state.lock:
            account = self._account(account_login, account_id, account_type)
        payload = webhooks.marketplace_purchase_payload(self._base_url(), action, account, plan, effective_date, previous_plan)
        return self.sender.send("marketplace_purchase", payload, "marketplace")

    @route("GET", "/_emulator/deliveries")
    def deliveries(self) -> list[dict]:
        return self.sender.deliveries()

    @route("POST", "/_emulator/deliveries/{delivery_id}/redeliver")
    def redeliver(self, delivery_id: str) -> dict:
        try:
            return self.sender.redeliver(delivery_id)
        except KeyError:
            raise ControlError(f"unknown delivery {delivery_id}", 404) from None

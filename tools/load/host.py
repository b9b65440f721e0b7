"""The code host for bin/load: the emulator in a process of its own (`python -m
emulator`, as bin/emulator runs it), driven through its control API.

In the load generator's process it would share one interpreter lock with the
senders and the runner stand-in, and answer the service's calls late enough
to time them out; a real code host does not share a process with its
clients either. The methods carry the names and arguments of the emulator's
Python API (docs/emulator.md), so the rest of bin/load reads the same either way.
"""
from __future__ import annotations

import signal
import subprocess
import sys
from urllib.parse import quote

import httpx


class ControlError(RuntimeError):
    pass


class EmulatorProcess:
    def __init__(self, log_file):
        self.process = subprocess.Popen([sys.executable, "-m", "emulator", "--port", "0"], stdout=subprocess.PIPE,
                                        stderr=log_file, text=True)
        self.url = (self.process.stdout.readline() or "").strip()
        if not self.url.startswith("http://"):
            self.stop()
            raise RuntimeError("the code host emulator did not start")
        self.http = httpx.Client(base_url=self.url, timeout=60)
        self.oidc_issuer = self._call("GET", "/_emulator/oidc")["issuer"]

    def _call(self, method: str, route: str, body: dict | None = None):
        response = self.http.request(method, route, json=body or None)
        if response.status_code >= 400:
            raise ControlError(f"emulator {method} {route.split('/')[2]} answered {response.status_code}: "
                               f"{response.text[:200]}")
        answer = response.json() if response.content else {}
        if isinstance(answer, dict) and set(answer) == {"items"}:
            return answer["items"]
        if isinstance(answer, dict) and set(answer) == {"token"}:
            return answer["token"]
        return answer

    @staticmethod
    def _repo(full_name: str) -> str:
        owner, name = full_name.split("/", 1)
        return f"/_emulator/repositories/{quote(owner, safe='')}/{quote(name, safe='')}"

    # -- apps, installations, repositories, people ---------------------------------------
    def register_app(self, **spec) -> dict:
        return self._call("POST", "/_emulator/apps", spec)

    def create_installation(self, account_login: str, **spec) -> dict:
        return self._call("POST", "/_emulator/installations", {"account_login": account_login, **spec})

    def create_repository(self, full_name: str, **spec) -> dict:
        return self._call("POST", "/_emulator/repositories", {"full_name": full_name, **spec})

    def set_run_name(self, full_name: str, run_name: str | None) -> dict:
        return self._call("PUT", f"{self._repo(full_name)}/run-name", {"run_name": run_name})

    def create_user(self, login: str, **spec) -> dict:
        return self._call("POST", "/_emulator/users", {"login": login, **spec})

    def configure_webhooks(self, url=None, secret=None, marketplace_url=None, marketplace_secret=None) -> dict:
        return self._call("PUT", "/_emulator/webhooks", {"url": url, "secret": secret, "marketplace_url": marketplace_url,
                                                   "marketplace_secret": marketplace_secret})

    # -- pull requests and their deliveries --------------------------------------------------
    def open_pull_request(self, full_name: str, **spec) -> dict:
        return self._call("POST", f"{self._repo(full_name)}/pulls", spec)

    def send_pull_request_event(self, full_name: str, number: int, action: str = "opened") -> dict:
        return self._call("POST", "/_emulator/webhooks/pull_request",
                          {"full_name": full_name, "number": number, "action": action})

    def redeliver(self, delivery_id: str) -> dict:
        return self._call("POST", f"/_emulator/deliveries/{quote(delivery_id, safe='')}/redeliver")

    # -- workflow runs, identity ----------------------------------------------------------
    def runs(self) -> list[dict]:
        return self._call("GET", "/_emulator/runs")

    def start_run(self, run_id: int) -> dict:
        return self._call("POST", f"/_emulator/runs/{int(run_id)}/start")

    def complete_run(self, run_id: int, conclusion: str = "success") -> dict:
        return self._call("POST", f"/_emulator/runs/{int(run_id)}/complete", {"conclusion": conclusion})

    def mint_oidc_token(self, audience: str, run_id: int) -> str:
        return self._call("POST", "/_emulator/oidc/tokens", {"audience": audience, "run_id": run_id})

    # -- what the app wrote ----------------------------------------------------------------
    def check_runs(self) -> list[dict]:
        return self._call("GET", "/_emulator/check-runs")

    def comments(self) -> list[dict]:
        return self._call("GET", "/_emulator/comments")

    # -- faults ------------------------------------------------------------------------------
    def add_fault(self, **spec) -> dict:
        return self._call("POST", "/_emulator/faults", spec)

    def faults(self) -> list[dict]:
        return self._call("GET", "/_emulator/faults")

    def remove_fault(self, fault_id: int) -> dict:
        return self._call("DELETE", f"/_emulator/faults/{int(fault_id)}")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if hasattr(self, "http"):
            self.http.close()

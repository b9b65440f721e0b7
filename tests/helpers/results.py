"""Release runs brought to the point where a result can arrive, and results to send."""
from __future__ import annotations

import hashlib

from app import run_results
from tests.helpers.service import OIDC_AUDIENCE
from tests.helpers.host import REPOSITORY, run_lifecycle, run_outbox

CALLBACK = "/api/v1/runs/github-actions-result"


def finding(index: int, severity: str = "error", line: int | None = None, path: str = "board/blinky.kicad_pcb",
            **extra) -> dict:
    item = {"ruleId": "drc.track-width", "severity": severity, "message": f"Track {index} is 0.09 mm wide",
            "fingerprint": hashlib.sha256(f"track-{index}".encode()).hexdigest()[:32]}
    if line is not None:
        item.update(path=path, startLine=line, endLine=line, startColumn=3, endColumn=40)
    item.update(extra)
    return item


def make_result(head_sha: str, readiness: str = "ready", findings: list | None = None, score: int | None = None,
                **extra) -> dict:
    result = {"schemaVersion": 1, "triggerKind": "pull_request", "repository": REPOSITORY, "headSha": head_sha,
              "readiness": readiness, "score": score if score is not None else {"ready": 96, "at-risk": 71,
                                                                               "blocked": 22}[readiness],
              "tool": {"name": "boardready-check", "version": "0.1.0"}, "kicadVersion": "9",
              "findings": findings or []}
    result.update(extra)
    return result


def envelope(attempt_ref: str, result: dict) -> dict:
    return {"attemptId": attempt_ref, "result": result, "digest": run_results.digest(result)}


class DispatchedRun:
    """A pull request whose release run was dispatched: its attempt and workflow run."""

    def __init__(self, kit, client, pool, db_url, owner, pr=None, action="opened"):
        self.kit = kit
        self.pr = pr or kit.host.open_pull_request(REPOSITORY)
        kit.deliver_pull_request(client, self.pr, action)
        run_lifecycle(kit, pool, db_url)
        run_outbox(kit, pool, db_url)
        row = owner.execute("SELECT a.id, a.nonce, a.workflow_run_id, rr.id AS release_run_id, rr.check_run_id "
                            "FROM release_runs rr JOIN release_run_attempts a ON a.id = rr.current_attempt_id "
                            "WHERE rr.head_sha = %s", (self.pr["head"]["sha"],)).fetchone()
        self.attempt_ref = f"{row['id']}-{row['nonce']}"
        self.workflow_run_id = row["workflow_run_id"]
        self.release_run_id = row["release_run_id"]
        self.check_run_id = row["check_run_id"]
        self.head_sha = self.pr["head"]["sha"]

    def token(self, **overrides) -> str:
        return self.kit.host.mint_oidc_token(OIDC_AUDIENCE, run_id=self.workflow_run_id, **overrides)

    def post(self, client, body: dict, token: str | None = None):
        return client.simulate_post(CALLBACK, json=body, headers={"Authorization": f"Bearer {token or self.token()}"})

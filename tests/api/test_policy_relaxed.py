"""A pull request cannot relax its own gate, through the real service on a real HTTP
server and the code host emulator: the checker's result for a head commit that sets
its own blocking finding to ignore (checked with ``--base-ref`` in a real git
repository) fails the gate, the check run and the run page say which setting the pull
request relaxed, the author's own approval is refused as today, and another member's
approval passes it, recorded with what it relaxed."""
from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from app import sql_api
from app.host.publication import check_run_output, comment_body
from checker.cli import main
from tests.api.test_authority import _stack
from tests.api.test_pages_decisions import post_form
from tests.helpers.sessions import decided_run

SETTING = "board.design_settings.rule_severities.copper_edge_clearance"
DRC = Path(__file__).resolve().parents[1] / "fixtures/kicad/v9/kicad_bot_examples/drc-violation"   # blocked


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.invalid", *args],
                          check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture
def stack(pool, owner):
    yield from _stack(pool, owner)


def _relaxed_result(tmp_path) -> list[dict]:
    """The findings bin/check sends for a head that ignores its own blocking DRC type."""
    repo = tmp_path / "repo"
    shutil.copytree(DRC, repo / "board", ignore=shutil.ignore_patterns("kicad-*.json"))
    _git(repo, "init", "-q")
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "base")
    base = _git(repo, "rev-parse", "HEAD")
    pro = repo / "board" / "drc-violation.kicad_pro"
    data = json.loads(pro.read_text())
    data["board"]["design_settings"].setdefault("rule_severities", {})["copper_edge_clearance"] = "ignore"
    pro.write_text(json.dumps(data, indent=2))
    _git(repo, "commit", "-q", "-am", "head: ignore the edge clearance")
    out = tmp_path / "result.json"
    code = main([str(repo / "board"), "--root", str(repo), "--no-kicad-cli", "--format", "json", "-o", str(out),
                 "--base-ref", base])
    result = json.loads(out.read_text())
    assert code == 1 and result["readiness"] == "blocked"
    return result["findings"]


def test_a_pull_request_that_relaxes_its_own_gate_needs_another_persons_approval(stack, owner, pool, tmp_path):
    findings = _relaxed_result(tmp_path)
    [relaxed] = [f for f in findings if f.get("relaxed")]
    repo = stack.repos[0]
    stack.host.open_pull_request(repo["full_name"], number=1, title="Ignore the edge clearance")
    author = stack.sign_in("author")
    run = decided_run(owner, pool, repo["id"], readiness="blocked", findings=findings, author_id=author.user_id)
    stored = owner.execute("SELECT relaxed FROM run_findings f JOIN run_results r ON r.id = f.run_result_id "
                           "WHERE r.release_run_id = %s AND f.fingerprint = %s",
                           (run["id"], relaxed["fingerprint"])).fetchone()
    assert stored["relaxed"] == relaxed["relaxed"]
    assert owner.execute("SELECT decision FROM release_runs WHERE id = %s", (run["id"],)).fetchone()["decision"] == "FAIL"

    # The check run and the comment say which setting the pull request relaxed.
    with pool.connection() as conn:
        result_id = owner.execute("SELECT id FROM run_results WHERE release_run_id = %s", (run["id"],)).fetchone()["id"]
        published = dict(sql_api.run_result_publication(conn, run_result_id=result_id))
    output = check_run_output(published, "https://review")
    assert output["title"].startswith("Blocked") and "Policy relaxed by this pull request" in output["summary"]
    assert f"`board/drc-violation.kicad_pro`: `{SETTING}`" in output["summary"]
    assert "relaxed by this pull request to ignored" in output["text"]
    assert SETTING in comment_body(published, "https://review")

    # The run page says it too, beside the finding.
    page = author.get(f"/release-runs/{run['id']}")
    assert page.status_code == 200
    assert "Policy relaxed by this pull request" in page.text and SETTING in page.text
    assert "relaxed by this pull request</span>" in page.text
    assert "they count until a person other than the author approves." in page.text

    # The author's own approval is refused as today: the gate still fails.
    refused = post_form(author, f"/release-runs/{run['id']}/approvals", {"status": "approved"})
    assert "self_approval_not_allowed" in refused.text
    assert owner.execute("SELECT decision FROM release_runs WHERE id = %s", (run["id"],)).fetchone()["decision"] == "FAIL"

    # Another member's approval accepts the relaxation, recorded with what it relaxed.
    reviewer = stack.sign_in("rhea")
    approved = post_form(reviewer, f"/release-runs/{run['id']}/approvals", {"status": "approved"})
    assert approved.status_code == 200, approved.text
    assert owner.execute("SELECT decision FROM release_runs WHERE id = %s", (run["id"],)).fetchone()["decision"] == "PASS"
    after = reviewer.get(f"/release-runs/{run['id']}").text
    assert "the review approved the relaxation." in after and "they block the release" not in after
    details = owner.execute("SELECT details FROM audit_events WHERE event_type = 'review.approval_recorded' "
                            "ORDER BY id DESC LIMIT 1").fetchone()["details"]
    assert details["status"] == "approved"
    assert {"file": "board/drc-violation.kicad_pro", "setting": SETTING, "findings": 1} in details["relaxed"]


def test_the_same_board_without_a_relaxation_is_decided_as_before(stack, owner, pool, tmp_path):
    findings = [f for f in _relaxed_result(tmp_path) if not f.get("relaxed")]
    repo = stack.repos[0]
    run = decided_run(owner, pool, repo["id"], readiness="at-risk", findings=findings)
    assert owner.execute("SELECT decision FROM release_runs WHERE id = %s",
                         (run["id"],)).fetchone()["decision"] == "CONDITIONAL"
    assert json.dumps(findings).count("relaxed") == 0

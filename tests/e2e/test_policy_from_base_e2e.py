"""Policy comes from the base, and a hostile base never costs the head its verdict,
through the whole loop: the code host emulator runs the readiness workflow's runner
(tools/demo_runner.py: `bin/check --runner --base-ref <the pull request's base>`) in a
workspace that carries the repository's git history, the signed result reaches the
service under gunicorn with its workers, and the check run on the emulator says what
the service decided."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.helpers.service import OIDC_AUDIENCE, served_for_the_emulator, wait_for
from tools import demo_board

ROOT = Path(__file__).resolve().parents[2]
REPOSITORY = "acme-hw/blinky-board"
# The project's own policy on the base: a part without a manufacturer part number blocks.
STRICT = '[severity]\n"bom.mpn-missing" = "high"\n'


def _git(folder: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(folder), "-c", "user.name=Acme Hardware", "-c",
                           "user.email=hw@acme.example", "-c", "commit.gpgsign=false", "-c", "init.defaultBranch=main",
                           *args], check=True, capture_output=True, text=True).stdout.strip()


def _history(folder: Path, base_extra, head_extra) -> tuple[str, str]:
    """The demo board's base on main (with ``base_extra``), then the pull request's head."""
    _git(folder, "init", "--quiet")
    demo_board.write(folder, "base")
    base_extra(folder)
    _git(folder, "add", "--all")
    _git(folder, "commit", "--quiet", "--no-verify", "-m", "Rev A")
    base = _git(folder, "rev-parse", "HEAD")
    _git(folder, "checkout", "--quiet", "-b", "rev-b")
    for path in folder.rglob("*"):
        if path.is_symlink() or path.name == ".boardready.toml":
            path.unlink()
    demo_board.write(folder, "head")
    head_extra(folder)
    _git(folder, "add", "--all")
    _git(folder, "commit", "--quiet", "--no-verify", "-m", "Rev B")
    return base, _git(folder, "rev-parse", "HEAD")


def _checked(db_url: str, tmp_path: Path, base_extra, head_extra=lambda folder: None,
             conclusion: str = "neutral") -> dict:
    content = tmp_path / "blinky-board"
    content.mkdir()
    base_sha, head_sha = _history(content, base_extra, head_extra)
    with served_for_the_emulator(db_url) as (host, service):
        installation = host.create_installation("acme-hw", deliver=True)
        host.create_repository(REPOSITORY, installation_id=installation["id"], content_dir=str(content),
                               head_sha=base_sha, deliver=True)
        host.set_run_mode(REPOSITORY, mode="execute",
                          runner_command=[sys.executable, str(ROOT / "tools" / "demo_runner.py")],
                          runner_env={"SERVICE_URL": service.base_url, "SERVICE_OIDC_AUDIENCE": OIDC_AUDIENCE})
        pull = host.open_pull_request(REPOSITORY, title="Rev B", head_sha=head_sha, deliver=True)
        assert pull["base"]["sha"] == base_sha
        # The completion shows the result's readiness; a release decision that differs follows it.
        [completed] = wait_for(lambda: [c for c in host.check_runs(REPOSITORY) if c["head_sha"] == head_sha
                                        and c["status"] == "completed" and c["conclusion"] == conclusion],
                               seconds=900)
        run = wait_for(lambda: next((r for r in host.runs(REPOSITORY) if r["status"] == "completed"), None),
                       seconds=300)
        run_dir = Path(run["attempts"][-1]["workspace"]).parent
        completed["log"] = (run_dir / "stdout.log").read_text() + (run_dir / "stderr.log").read_text()
        return completed


def _hostile(folder: Path) -> None:
    os.symlink("/etc/hostname", folder / ".boardready.toml")
    os.symlink("/etc/passwd", folder / "hardware" / "stolen.kicad_sch")
    os.symlink("../../../../../../../../etc/passwd", folder / "hardware" / "escape.kicad_pcb")


def test_a_base_holding_links_leaves_the_pull_requests_verdict_whole(db_url, tmp_path):
    check = _checked(db_url, tmp_path, _hostile)
    # The demo board's verdict (two parts lack an MPN: at risk), not "did not finish".
    assert check["conclusion"] == "neutral", check["log"]
    assert check["title"].startswith("At risk"), check
    assert "left out" in check["log"] and "Traceback" not in check["log"]


def test_a_pull_request_that_relaxes_the_bases_policy_fails_its_check_run(db_url, tmp_path):
    check = _checked(db_url, tmp_path, lambda folder: (folder / ".boardready.toml").write_text(STRICT),
                     conclusion="failure")
    assert check["title"].startswith("Blocked"), check
    # The decision update says what the pull request relaxed, as the completion did.
    assert "Policy relaxed by this pull request" in check["summary"], check
    assert '`.boardready.toml`: `severity."bom.mpn-missing"` (2 finding(s))' in check["summary"]

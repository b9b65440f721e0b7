"""The demo's runner command: what workflow/readiness-runner.yml's last steps do,
without installing the checker (bin/check is this checkout's).

Started by the code host emulator in the run's workspace with a runner's
environment. Like the workflow's "Fetch the pull request's base commit" step it
asks the code host for the pull request (`GET /repos/{repo}/pulls/{number}`
with the job's GITHUB_TOKEN) and takes its base commit; the demo's workspace
carries the repository's history (tools/demo_board.py), so the commit is there
to read. Then, like "Check readiness and report to boardready", it runs
`bin/check --runner --base-ref <base>` so the run page shows the board diff.
Without a base (no pull request, the code host or git cannot say) it says why
and checks as before, without the diff: the verdict must still travel.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHA = re.compile(r"^[0-9a-f]{40}$")


def pull_request_number() -> str | None:
    try:
        with open(os.environ["GITHUB_EVENT_PATH"], encoding="utf-8") as event:
            number = str(json.load(event).get("inputs", {}).get("pull_request", ""))
    except (KeyError, OSError, ValueError):
        return None
    return number if re.fullmatch(r"[0-9]{1,10}", number) else None


def base_commit() -> str | None:
    """The pull request's base commit, when the code host names it and the workspace holds it."""
    number = pull_request_number()
    if number is None:
        print("not a pull request number: no board diff")
        return None
    request = urllib.request.Request(
        f"{os.environ['GITHUB_API_URL']}/repos/{os.environ['GITHUB_REPOSITORY']}/pulls/{number}",
        headers={"Authorization": f"Bearer {os.environ.get('GITHUB_TOKEN', '')}",
                 "Accept": "application/vnd.github+json"})
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            sha = str(json.load(answer)["base"]["sha"])
    except (OSError, ValueError, KeyError, TypeError, urllib.error.URLError) as exc:
        print(f"the pull request's base is unknown ({exc}): no board diff")
        return None
    if not SHA.match(sha):
        print("the pull request's base is unknown: no board diff")
        return None
    present = subprocess.run(["git", "-c", "safe.directory=*", "cat-file", "-e", f"{sha}^{{commit}}"],
                             capture_output=True, check=False) if _has_git() else None
    if present is None:
        print(f"the base commit {sha} cannot be read without git: no board diff")
        return None
    if present.returncode != 0:
        # Still named, as the workflow does: the checker says the base is unreadable and compares
        # the head's policy with none (a base that cannot be read cannot be used to relax the gate).
        print(f"the base commit {sha} is not in the workspace: no board diff")
    return sha


def _has_git() -> bool:
    try:
        subprocess.run(["git", "--version"], capture_output=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        return False
    return True


def main() -> None:
    command = [str(ROOT / "bin" / "check"), "--runner"]
    base = base_commit()
    if base:
        print(f"the pull request's base commit is {base}: the checker diffs the board against it")
        command += ["--base-ref", base]
    sys.stdout.flush()
    os.execv(command[0], command)


if __name__ == "__main__":
    main()

"""bin/demo --once walks a pull request through the whole loop."""
from __future__ import annotations

import os
import re
import subprocess

from tests.helpers import REPO_ROOT
from tests.service.helpers import free_port


def test_demo_walks_a_pull_request_through_the_loop(db_url, tmp_path):
    env = dict(os.environ, SERVICE_DATABASE_URL=db_url, SERVICE_DATA_DIR=str(tmp_path),
               SERVICE_BIND=f"127.0.0.1:{free_port()}")
    env.pop("HOST_WEBHOOK_SECRET", None)
    done = subprocess.run([str(REPO_ROOT / "bin" / "demo"), "--once"], env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    out = done.stdout
    assert "-> 200 (duplicate: no second job)" in out
    assert "-> 401 invalid_signature" in out
    assert "status completed, conclusion neutral" in out
    assert "annotation warning  hardware/blinky.kicad_sch:" in out
    assert "decision `CONDITIONAL`" in out
    # A second user signs in with the code host and approves the at-risk run.
    # It follows the check run's link, signs in and lands on that run page (sign-in remembers it).
    base = env["SERVICE_BIND"]
    [link] = re.findall(rf"the check run and the comment link to (http://{base}/release-runs/\d+)\n", out)
    run_path = link.removeprefix(f"http://{base}")
    assert f"{link} -> /sign-in -> the code host's authorize page -> {run_path} 200 after sign-in" in out
    assert "signed in as rita-reviewer (host-user:" in out
    assert "release decision PASS" in out
    assert "the check run: conclusion neutral -> success" in out
    # The repair: a dispatch answered 204 is found by its run name and its check run still completes.
    assert "the dispatch was answered 204" in out
    assert "matched the run name \"boardready readiness " in out
    assert "the repaired run's check run: status completed, conclusion neutral" in out
    # The board is watched; a pull request that swaps in an obsolete part fails on supply.
    assert "/watched-board {\"path\": \"hardware/blinky.kicad_pro\"} -> 201 watched" in out
    assert "check run conclusion failure" in out
    assert "supply annotation failure  hardware/blinky.kicad_sch:" in out and "OBSOLETE" in out
    # The pages for a person to open.
    assert f"the run page:      {link}\n" in out and f"the release runs:  http://{base}/runs\n" in out

"""bin/demo --once walks a pull request through the whole loop; its set-up
says what it does, and what it keeps between runs (keys, waivers) behaves."""
from __future__ import annotations

import os
import re
import stat
import subprocess

from app import sql_api
from app.config import Config
from tests.helpers.paths import REPO_ROOT
from tests.helpers.access import seed_repository
from tests.helpers.service import free_port
from tools import demo, demo_setup


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
    # The runner checked the pull request's base commit too, as the workflow does: the run page draws the diff.
    assert re.search(r"pull request #1: base [0-9a-f]{7} \(main\) <- head [0-9a-f]{7}\n", out)
    assert "the run page draws the board diff against the base commit: 3 tracks added, 3 tracks removed" in out
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
    # Everything is on: the set-up says each step, the report went up, /metrics answers the demo's token.
    for step in ("-- the database: ", "-- the migrations: ", "-- the code host emulator: ", "-- the service: "):
        assert step in out
    assert re.search(r"report artifact \d+ \(\d+ bytes\) of release run", out)
    assert "GET /metrics -> 200" in out
    token_file = tmp_path / "demo-operator-token"
    assert f"{token_file}: the operator token (SERVICE_OPERATOR_API_TOKEN)" in out
    assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
    # --once stops the server: it prints none of its addresses to open.
    ending = out[out.index("== the operator's view"):]
    assert f"http://{base}" not in ending and "until Ctrl-C" not in out and "the run page:" not in out
    assert "--once: the service and the emulator stop now" in out


def test_waivers_of_an_earlier_demo_are_revoked_so_a_rerun_decides_the_same(owner, db_url):
    repository = seed_repository(owner, account_id=7_100_001, installation_id=7_700_001, repository_id=8_800_001,
                                 full_name=demo.REPOSITORY, login="acme-hw")
    other = seed_repository(owner, account_id=7_100_001, installation_id=7_700_001, repository_id=8_800_002,
                            full_name="acme-hw/another-board", login="acme-hw")
    for repo in (repository, other):
        sql_api.waiver_create_v2(owner, repository_id=repo, repository_ids=[repo], fingerprint="f" * 32,
                                 reason="bench-tested", expires_at=None, actor="host-user:2200000003",
                                 max_days=Config.waiver_max_days, limit=Config.decisions_per_minute)
    assert demo_setup.retire_earlier_waivers(db_url, demo.REPOSITORY) == 1
    rows = owner.execute("SELECT repository_id, deleted_by FROM boardready.waivers ORDER BY repository_id").fetchall()
    assert [(r["repository_id"], r["deleted_by"]) for r in rows] == [(repository, "operator:demo"), (other, None)]
    assert demo_setup.retire_earlier_waivers(db_url, demo.REPOSITORY) == 0


def test_the_demo_keeps_its_keys_in_the_data_folder(tmp_path, monkeypatch):
    for name in ("SERVICE_ARTIFACT_SIGNING_KEY", "SERVICE_OPERATOR_API_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    first = demo_setup.demo_secrets(str(tmp_path / "data"))
    assert demo_setup.demo_secrets(str(tmp_path / "data")) == first    # a rerun's links and token still work
    assert len(first.operator_token) >= 32 and first.operator_token != first.artifact_signing_key
    for kept in (tmp_path / "data").iterdir():
        assert stat.S_IMODE(kept.stat().st_mode) == 0o600
    demo_setup.reset(str(tmp_path / "data"))
    assert demo_setup.demo_secrets(str(tmp_path / "data")) != first   # --reset: new keys


def test_a_wait_says_what_it_waits_for_and_what_is_wrong(capsys):
    answers = iter([None, None, "there"])
    assert demo_setup.wait_for(lambda: next(answers), 30, "the thing") == "there"
    assert demo_setup.wait_for(lambda: None, 0, "the check run to complete",
                               lambda: "release run 1 is dispatched") is None
    out = capsys.readouterr().out
    assert "gave up waiting for the check run to complete after 0 s: release run 1 is dispatched" in out

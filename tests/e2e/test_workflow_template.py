"""workflow/readiness-runner.yml as shipped, run step by step in the emulated
runner (tools/workflow_runner.py) for the demo repository's pull request: the
service URL and audience come from the repository variables, the
boardready-checker wheel bin/build-checker made into the service's data folder
is installed from the service's own index (/simple/, --require-hashes), kicad-cli's DRC and ERC JSON reports are fed to
the checker when kicad-cli is installed (and skipped, said so, when not), and
the signed result completes the check run."""
from __future__ import annotations

import json
import re
import shutil
import sys
from pathlib import Path

import psycopg
import yaml

from checker import TOOL_VERSION
from tests.helpers.service import OIDC_AUDIENCE, served_for_the_emulator, wait_for
from tools import build_checker, demo_board
from tools.kicad_drc import KicadCli

ROOT = Path(__file__).resolve().parents[2]
TEMPLATE = ROOT / "workflow" / "readiness-runner.yml"
REPOSITORY = "acme-hw/blinky-board"


def test_the_template_takes_its_settings_from_repository_variables_and_pins_the_checker():
    document = yaml.safe_load(TEMPLATE.read_text())
    (job,) = document["jobs"].values()
    assert job["env"]["SERVICE_URL"] == "${{ vars.BOARDREADY_URL }}"
    assert job["env"]["SERVICE_OIDC_AUDIENCE"] == "${{ vars.BOARDREADY_AUDIENCE }}"
    # The checker comes from the service's own index, pinned by the SHA-256 the service states.
    [install] = [step["run"] for step in job["steps"] if step.get("name") == "Install the boardready checker"]
    assert "--require-hashes" in install and '--index-url "$index"' in install and "/simple/" in install
    assert "pip check" in install and "boardready-checker==" not in install
    # The teams the runner serves save their boards with KiCad 10: its image, its kicad-cli.
    assert re.fullmatch(r"docker\.io/kicad/kicad:10(\.\d+)*", job["container"]["image"])
    steps = " ".join(step.get("run", "") for step in job["steps"])
    assert "--drc-report" in steps and "--erc-report" in steps and "kicad-cli pcb drc" in steps
    # Inputs and variables reach the scripts as environment variables, never pasted into them.
    assert not [s["name"] for s in job["steps"] if "${{" in s.get("run", "")]


def test_the_template_runs_in_the_emulated_runner(db_url, tmp_path):
    data = tmp_path / "service-data"
    build_checker.build_wheel(data / "checker")   # as at deploy: bin/build-checker --out $SERVICE_DATA_DIR/checker
    kicad_cli = shutil.which("kicad-cli")
    # The demo board is KiCad 10's: a kicad-cli before 10 cannot load it (the workflow's image has 10).
    reads_kicad10 = kicad_cli is not None and (KicadCli.parse(kicad_cli).major() or 0) >= 10
    with served_for_the_emulator(db_url, lambda host: {"SERVICE_DATA_DIR": str(data)}) as (host, service):
        installation = host.create_installation("acme-hw", deliver=True)
        content = demo_board.write(tmp_path / "blinky-board")
        (content / ".github" / "workflows").mkdir(parents=True)
        shutil.copy(TEMPLATE, content / ".github" / "workflows")
        host.create_repository(REPOSITORY, installation_id=installation["id"], content_dir=str(content),
                               deliver=True)
        variables = {"BOARDREADY_URL": service.base_url, "BOARDREADY_AUDIENCE": OIDC_AUDIENCE}
        host.set_run_mode(REPOSITORY, mode="execute", runner_command=[sys.executable, "-m", "tools.workflow_runner"],
                          runner_env={"BOARDREADY_RUNNER_VARS": json.dumps(variables), "PYTHONPATH": str(ROOT)},
                          timeout_seconds=900)
        pull = host.open_pull_request(REPOSITORY, title="Rev B", deliver=True)
        completed = wait_for(lambda: [c for c in host.check_runs(REPOSITORY)
                                      if c["head_sha"] == pull["head"]["sha"] and c["status"] == "completed"],
                             seconds=900)
        # The result completes the check run before the workflow's last step ends.
        run = wait_for(lambda: next((r for r in host.runs(REPOSITORY) if r["status"] == "completed"), None),
                       seconds=300)
        attempt = run["attempts"][-1]
        run_dir = Path(attempt["workspace"]).parent
        log = (run_dir / "stdout.log").read_text() + (run_dir / "stderr.log").read_text()
        assert completed, log
        assert attempt["exit_code"] == 0, log
        assert completed[0]["conclusion"] in ("success", "neutral", "failure")
        for title in ("Check the repository variables", "Install the boardready checker",
                      "KiCad's own DRC and ERC", "Check readiness and report to boardready", "Keep the reports"):
            assert f": {title}" in log, log
        temp = run_dir / "tmp"
        # The pinned distribution ran, from its own environment.
        installed = list((temp / "boardready").glob("lib/python3*/site-packages/boardready_checker-*.dist-info"))
        assert [p.name for p in installed] == [f"boardready_checker-{TOOL_VERSION}.dist-info"]
        kept = {p.name for p in (temp / "artifacts" / "boardready-report").iterdir()}
        if reads_kicad10:
            assert {"boardready-report.html", "kicad-drc.json", "kicad-erc.json"} <= kept, log
            for report in ("kicad-drc.json", "kicad-erc.json"):
                assert json.loads((temp / report).read_text())["source"]
        elif kicad_cli:
            assert "kicad-cli pcb drc failed" in log and "kicad-cli sch erc failed" in log, log
            assert kept == {"boardready-report.html"}
        else:
            assert "kicad-cli is not installed" in log
            assert kept == {"boardready-report.html"}
    with psycopg.connect(db_url) as conn:
        tool = conn.execute("SELECT tool_version FROM boardready.run_results WHERE head_sha = %s",
                            (pull["head"]["sha"],)).fetchone()
    assert tool == (TOOL_VERSION,)

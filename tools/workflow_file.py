"""The readiness workflow the service dispatches (workflow/readiness-runner.yml),
read the way the code host reads it, for the tools and tests that stand in for
a repository holding it."""
from __future__ import annotations

import re
from pathlib import Path

WORKFLOW = Path(__file__).resolve().parent.parent / "workflow" / "readiness-runner.yml"


def run_name_template() -> str:
    """Its `run-name`: the code host shows it, filled in, as each run's display_title,
    which is how a run whose id never reached the service is found (app/host/workflow_runs.py)."""
    return re.search(r"^run-name:\s*\"(.+)\"\s*$", WORKFLOW.read_text(), re.MULTILINE).group(1)

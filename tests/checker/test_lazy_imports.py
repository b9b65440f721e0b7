"""A schematic-only check pays only for what it uses: no numpy, no board modules, no
httpx or jsonschema (no timing here: what is imported is what costs)."""
from __future__ import annotations

import json
import os
import subprocess
import sys

from checker_fixtures import KICAD, REPO_ROOT

PROBE = """
import sys
from checker.cli import main
code = main([sys.argv[1], "--no-kicad-cli", "--format", "json", "-o", sys.argv[2], "--fail-on", "never"])
heavy = sorted(m for m in ("numpy", "shapely", "httpx", "jsonschema", "checker.board", "checker.copper")
               if m in sys.modules)
print(code, ",".join(heavy))
"""


def test_a_schematic_only_check_imports_no_numpy_httpx_or_jsonschema(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "BOARDREADY_CHECK_CONTRACT"}
    out = tmp_path / "result.json"
    done = subprocess.run([sys.executable, "-c", PROBE, str(KICAD / "v6/electric"), str(out)], cwd=REPO_ROOT,
                          env=env, capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["0"], done.stdout + done.stderr
    assert json.loads(out.read_text())["findings"]           # it did check the schematic


def test_a_board_check_still_loads_the_board(tmp_path):
    out = tmp_path / "result.json"
    done = subprocess.run([sys.executable, "-c", PROBE, str(KICAD / "v9/kicad_bot_examples/drc-violation"), str(out)],
                          cwd=REPO_ROOT, capture_output=True, text=True, check=True)
    assert "checker.board" in done.stdout and "numpy" in done.stdout

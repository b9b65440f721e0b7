"""The boardready-checker distribution (packaging/checker, bin/build-checker):
the checker and the result contract alone, with the checker's own
dependencies; installed into a fresh virtual environment of Python 3.13 it
passes this folder's tests, importing the installed copy (pytest's `append`
import mode puts the working tree after site-packages), and it installs and
checks a project on 3.11 and 3.12. An interpreter that is not on this machine
(PATH, pyenv, or BOARDREADY_PYTHON_3_13 and the like) is skipped."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from email.parser import Parser
from pathlib import Path

import pytest

from checker import TOOL_VERSION
from checker_fixtures import FIXTURES, REPO_ROOT
from tools import build_checker

SERVICE_ONLY = ("psycopg", "gunicorn", "falcon", "uvicorn", "uvloop", "yoyo", "pixeltable", "jinja2",
                "prometheus", "orjson", "pyjwt")
PLUGIN = '''
import os
def pytest_sessionfinish(session):
    import checker
    with open(os.environ["WHERE_CHECKER_OUT"], "w") as out:
        out.write(checker.__file__)
'''


def interpreter(version: str) -> str | None:
    named = os.environ.get("BOARDREADY_PYTHON_" + version.replace(".", "_"))
    candidates = [named, shutil.which(f"python{version}")]
    candidates += sorted(str(p) for p in Path.home().glob(f".pyenv/versions/{version}*/bin/python{version}"))
    for candidate in filter(None, candidates):
        probe = subprocess.run([candidate, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                               capture_output=True, text=True)
        if probe.returncode == 0 and probe.stdout.strip() == version:
            return candidate
    return None


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    return build_checker.build_wheel(tmp_path_factory.mktemp("dist"))


def fresh_venv(python: str, where: Path, *packages: str) -> Path:
    subprocess.run([python, "-m", "venv", str(where)], check=True)
    subprocess.run([str(where / "bin" / "python"), "-m", "pip", "install", "--quiet", *packages],
                   check=True, capture_output=True)
    return where


def test_the_wheel_holds_the_checker_alone(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    assert {name.split("/")[0] for name in names if not name.startswith("boardready_checker-")} \
        == {"checker", "contracts"}
    assert "contracts/run-result.schema.json" in names and "checker/templates/report.html" in names
    assert any(name.startswith("checker/profiles/") and name.endswith(".toml") for name in names)
    metadata = Parser().parsestr(zipfile.ZipFile(wheel).read(
        next(n for n in names if n.endswith(".dist-info/METADATA"))).decode())
    assert metadata["Name"] == "boardready-checker" and metadata["Version"] == TOOL_VERSION
    assert metadata["Requires-Python"] == ">=3.11"           # no upper cap
    required = " ".join(metadata.get_all("Requires-Dist")).lower()
    assert not [name for name in SERVICE_ONLY if name in required], required
    # Offline verification of a signed release record travels with the checker.
    entry_points = zipfile.ZipFile(wheel).read(next(n for n in names if n.endswith(".dist-info/entry_points.txt")))
    assert b"boardready-verify = checker.verify:main" in entry_points and "cryptography" in required


def test_action_and_workflow_install_the_checker_from_the_services_index_by_its_hash():
    for path in (REPO_ROOT / "action.yml", REPO_ROOT / "workflow" / "readiness-runner.yml"):
        text = path.read_text()
        assert '--require-hashes --no-deps' in text and '--index-url "$index"' in text, path
        assert '"${index}boardready-checker/requirements.txt"' in text and "pip check" in text, path
        assert "git+" not in text and "boardready @" not in text and "boardready-checker==" not in text, path


@pytest.mark.parametrize("version", ["3.11", "3.12"])
def test_it_installs_and_checks_a_project(version, wheel, tmp_path):
    python = interpreter(version)
    if python is None:
        pytest.skip(f"no Python {version} on this machine")
    venv = fresh_venv(python, tmp_path / "venv", str(wheel))
    done = subprocess.run([str(venv / "bin" / "boardready-check"), str(FIXTURES / "kicad-multilayer"),
                           "--format", "json", "--fail-on", "never"], capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["tool"] == {"name": "boardready-checker", "version": TOOL_VERSION}


def test_its_tests_pass_on_python_3_13_against_the_installed_copy(wheel, tmp_path):
    python = interpreter("3.13")
    if python is None:
        pytest.skip("no Python 3.13 on this machine (tried PATH, pyenv and BOARDREADY_PYTHON_3_13)")
    venv = fresh_venv(python, tmp_path / "venv", str(wheel), "pytest>=8,<9", "hypothesis>=6.100,<7",
                      "sexpdata>=1.0,<2")
    (tmp_path / "plugin").mkdir()
    (tmp_path / "plugin" / "where_checker.py").write_text(PLUGIN)
    out = tmp_path / "where"
    env = {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env.update(PYTHONPATH=str(tmp_path / "plugin"), WHERE_CHECKER_OUT=str(out))
    run = subprocess.run(
        [str(venv / "bin" / "pytest"), "-q", "--import-mode=append", "-p", "where_checker", "-p", "no:cacheprovider",
         "-m", "not browser", "--ignore", str(Path(__file__).resolve()), "tests/checker"],
        cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=1800)
    (tmp_path / "pytest.log").write_text(run.stdout + run.stderr)
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    assert re.search(r"\d+ passed", run.stdout)
    assert out.read_text().startswith(str(venv)), out.read_text()   # the installed checker, not the tree's

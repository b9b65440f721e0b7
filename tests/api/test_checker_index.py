"""The service's checker distribution as a PEP 503 simple index (app/web/checker_index.py):
the wheel bin/build-checker makes into the data folder, served through the real
app on a real HTTP server, installed by pip into a fresh virtual environment
exactly as workflow/readiness-runner.yml installs it (--require-hashes, --no-deps,
--index-url at the service's /simple/), and refused when the stated hash is not
the served file's."""
from __future__ import annotations

import hashlib
import os
import re
import subprocess
import sys
import sysconfig
from pathlib import Path

import httpx
import pytest

from app.web.wsgi import create_app
from checker import TOOL_VERSION
from tests.helpers.service import make_config
from tests.helpers.sessions import served
from tools import build_checker


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    data = tmp_path_factory.mktemp("service-data")
    build_checker.build_wheel(data / "checker")
    return data


@pytest.fixture
def index_url(built, pool):
    with served(create_app(make_config(SERVICE_DATA_DIR=str(built)), pool)) as url:
        yield url


# The fresh environment's own view: not this checkout's PYTHONPATH.
CLEAN_ENV = {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "VIRTUAL_ENV")}


def _pip(venv: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "--disable-pip-version-check", *args],
                          capture_output=True, text=True, timeout=300, env=CLEAN_ENV)


def test_the_index_lists_the_services_own_wheel_with_its_sha256(built, index_url):
    [wheel] = (built / "checker").glob("boardready_checker-*.whl")
    digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
    root = httpx.get(f"{index_url}/simple/")
    assert root.status_code == 200 and '<a href="boardready-checker/">boardready-checker</a>' in root.text
    page = httpx.get(f"{index_url}/simple/boardready-checker/")
    [link] = re.findall(r'<a href="([^"]+)"', page.text)
    assert link == f"boardready_checker-{TOOL_VERSION}-py3-none-any.whl#sha256={digest}"
    assert 'data-requires-python="&gt;=3.11"' in page.text
    served_bytes = httpx.get(f"{index_url}/simple/boardready-checker/{wheel.name}").content
    assert hashlib.sha256(served_bytes).hexdigest() == digest
    assert httpx.get(f"{index_url}/simple/boardready-checker/requirements.txt").text == \
        f"boardready-checker=={TOOL_VERSION} --hash=sha256:{digest}\n"
    # Unnormalised names lead to the one address; other projects and files are not here.
    assert httpx.get(f"{index_url}/simple/Boardready_Checker/").status_code == 301
    assert httpx.get(f"{index_url}/simple/numpy/").status_code == 404
    assert httpx.get(f"{index_url}/simple/boardready-checker/../../etc/passwd").status_code == 404


def test_pip_installs_the_checker_from_the_served_index_into_a_fresh_venv(index_url, tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    index = f"{index_url}/simple/"
    done = _pip(venv, "install", "--require-hashes", "--no-deps", "--index-url", index,
                "-r", f"{index}boardready-checker/requirements.txt")
    assert done.returncode == 0, done.stdout + done.stderr
    # Installed from the index, its dependencies declared and not yet there: pip check names them.
    check = _pip(venv, "check")
    assert check.returncode == 1 and "boardready-checker 0" in check.stdout and "shapely" in check.stdout
    # With the dependencies present (here: this environment's, by a .pth), the installed checker runs.
    site = subprocess.run([str(venv / "bin" / "python"), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    Path(site, "dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    assert _pip(venv, "check").returncode == 0
    where = subprocess.run([str(venv / "bin" / "python"), "-c", "import checker; print(checker.__file__, checker.TOOL_VERSION)"],
                           capture_output=True, text=True, check=True, cwd=tmp_path, env=CLEAN_ENV).stdout.split()
    assert where[0].startswith(site) and where[1] == TOOL_VERSION


def test_a_hash_that_is_not_the_served_files_is_refused(index_url, tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    pinned = tmp_path / "requirements.txt"
    pinned.write_text(f"boardready-checker=={TOOL_VERSION} --hash=sha256:{'0' * 64}\n")
    done = _pip(venv, "install", "--require-hashes", "--no-deps", "--index-url", f"{index_url}/simple/", "-r", str(pinned))
    assert done.returncode != 0 and "THESE PACKAGES DO NOT MATCH THE HASHES" in done.stderr
    assert not list(venv.glob("lib/python3*/site-packages/boardready_checker-*.dist-info"))


def test_without_a_built_wheel_the_index_says_so(pool, tmp_path):
    with served(create_app(make_config(SERVICE_DATA_DIR=str(tmp_path)), pool)) as url:
        answer = httpx.get(f"{url}/simple/boardready-checker/", headers={"Accept": "application/json"})
    assert answer.status_code == 404 and "bin/build-checker" in answer.text

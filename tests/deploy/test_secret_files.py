"""Secret files have one stated mode, 0640 (owner root, group the service's):
bin/serve refuses to start with one that others may read, and readiness says
"unreadable" (not "missing") when the service user cannot read one that is
there (docs/deploy.md, "Files and modes")."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from app import runtime

ROOT = Path(__file__).resolve().parents[2]
SITE = Path(sys.prefix) / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}" / "site-packages"
SYSTEM_PYTHON = f"/usr/bin/python{sys.version_info.major}.{sys.version_info.minor}"


def _key(tmp_path: Path, mode: int) -> Path:
    path = tmp_path / "app.env.private-key.pem"
    path.write_text("-----BEGIN RSA PRIVATE KEY-----\nnot a key\n-----END RSA PRIVATE KEY-----\n")
    path.chmod(mode)
    return path


def test_serve_refuses_a_secret_file_others_can_read(tmp_path):
    key = _key(tmp_path, 0o644)
    env = {**os.environ, "HOST_APP_PRIVATE_KEY_FILE": str(key),
           "SERVICE_DATABASE_URL": "postgresql://nobody@127.0.0.1:9/none"}
    done = subprocess.run([str(ROOT / "bin" / "serve"), "--no-workers", "--no-migrate"], env=env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2, done.stderr
    assert "others may read HOST_APP_PRIVATE_KEY_FILE" in done.stderr
    assert '"event":"serve.secret_file_exposed"' in done.stderr.replace(" ", "")
    key.chmod(0o640)
    assert runtime.exposed_secret_files({"HOST_APP_PRIVATE_KEY_FILE": str(key)}) == []


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("runuser") or not os.path.exists(SYSTEM_PYTHON),
                    reason="needs root, runuser and the system's Python of this version to act as another user")
def test_readiness_says_unreadable_when_the_service_user_cannot_read_the_key(tmp_path):
    tmp_path.chmod(0o755)
    key = _key(tmp_path, 0o600)                 # root's alone: the service user cannot read it
    probe = ("import json; from app import config; "
             "print(json.dumps(list(config.load({'HOST_APP_ID': '1', 'HOST_APP_PRIVATE_KEY_FILE': %r}).missing)))"
             % str(key))
    done = subprocess.run(["runuser", "-u", "nobody", "--", "env", f"PYTHONPATH={ROOT}:{SITE}", SYSTEM_PYTHON,
                           "-c", probe], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "HOST_APP_PRIVATE_KEY_FILE (unreadable)" in json.loads(done.stdout)

"""``--base-ref REF``: the base commit's files, beside the checkout, for the board diff.

`git archive REF` of the repository the project is in, unpacked into a
temporary folder that is removed when the checker exits. The archive is
unpacked with tarfile's "data" filter: no links out of the folder, no
device files, no absolute paths, whatever the commit holds.
"""
from __future__ import annotations

import atexit
import io
import os
import shutil
import subprocess
import tarfile
import tempfile
from pathlib import Path


class BaseRefError(Exception):
    pass


def checkout_ref(ref: str, root: Path) -> Path:
    """The folder that is ``root`` as it was at ``ref``."""
    if not ref or ref.startswith("-") or any(c.isspace() for c in ref):
        raise BaseRefError(f"not a git revision: {ref!r}")
    root = Path(os.path.abspath(root))
    folder = root if root.is_dir() else root.parent
    try:
        # Only read (rev-parse, archive): a checkout owned by another user (a CI container's)
        # is trusted for these two commands, not in git's configuration.
        git = ["git", "-c", "safe.directory=*"]
        top = subprocess.run([*git, "-C", str(folder), "rev-parse", "--show-toplevel"], check=True,
                             capture_output=True, text=True).stdout.strip()
        archive = subprocess.run([*git, "-C", top, "archive", "--format=tar", f"{ref}^{{commit}}"], check=True,
                                 capture_output=True).stdout
    except (OSError, subprocess.CalledProcessError) as exc:
        detail = getattr(exc, "stderr", b"") or b""
        detail = detail.decode("utf-8", "replace") if isinstance(detail, bytes) else str(detail)
        raise BaseRefError(f"cannot read {ref} from git: {detail.strip() or exc}") from None
    scratch = Path(tempfile.mkdtemp(prefix="boardready-base-"))
    atexit.register(shutil.rmtree, scratch, True)
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(scratch, filter="data")
    return scratch / os.path.relpath(folder, top)
